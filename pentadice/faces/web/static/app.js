// pentadice in the browser: play, coach and review, over the JSON API of `pentadice serve`.
// Plain JavaScript, no framework and nothing fetched but the API: the page works offline, under a
// Content-Security-Policy of default-src 'self'. Every text from the server or a saved game (player names,
// messages) is written with textContent, never as markup. Every visible string goes through t().
"use strict";

(() => {
  const params = new URLSearchParams(location.search);
  const FAST = params.get("fast") === "1"; // tests: short pauses
  const CPU_PAUSE_MS = FAST ? 40 : 600; // the computer's visible pause between steps
  const THINKING_MS = 250; // a computer's step that takes longer says "... is thinking" (a quick one does not flicker)
  const POLL_MS = 1000; // how often the page asks about tables being prepared
  const N_ = (msgid) => msgid; // marks a message for the catalogue (make messages); t() translates it where shown
  const FACE_WORDS = ["", N_("one"), N_("two"), N_("three"), N_("four"), N_("five"), N_("six")];
  const REVIEW_COLUMNS = [N_("Player"), N_("Turn"), N_("Dice"), N_("Chosen"), N_("Best"), N_("Loss")];
  const BOX_KEYS = "abcdefghijklmnopqstu"; // box shortcuts, in sheet order (no r: it rolls); 20 for Maxi Yatzy
  const EXPERT = 0.2; // mean loss per decision below which play is expert
  const HISTORY_PAGE = 20; // finished games asked for at a time
  const HISTORY_COLUMNS = [N_("Date"), N_("Rules"), N_("Players and scores"), N_("Winner"), N_("Review")];
  const PLAYER_COLUMNS = [N_("Player"), N_("Rules"), N_("Games"), N_("Wins"), N_("Mean score"), N_("Best score"), N_("Mean loss per decision")];
  const SERIES_COLUMNS = [N_("Game"), N_("Date"), N_("Score"), N_("Result"), N_("Mean loss per decision"), N_("Review")];
  // A game has its own address, /games/{id}: a reload, a second tab or a bookmark opens it from the server
  // (GET /api/games/{id}) and goes on with it. The id in the path is the game's public address; a seat's secret,
  // when shared games have them, will travel in a header or a cookie, never in a URL's path or query.
  const GAME_PATH = /^\/games\/([A-Za-z0-9_-]{1,64})$/;
  const HISTORY_PATH = "/history";
  // The server's words for the tables it prepares (GET /api/health's "what"), in the catalogue so that t() says
  // them in the page's language; another text from the server is shown as it comes.
  const TABLE_WORDS = [
    N_("the value table"),
    N_("the second moments"),
    N_("the chances table"),
    N_("the win player's theta tables"),
    N_("the win player's end-game table"),
    N_("the saved tables, loading"),
    N_("the tables"),
  ];

  const S = {
    lang: "en",
    messages: {},
    rules: [],
    mode: "play",
    game: null, // the game view from the server
    held: new Set(), // indices of the dice held (the dice are shown in the server's order)
    pad: [], // faces entered for a coach roll
    busy: false,
    cpuTimer: null,
    countdown: null, // {timer, box, left, turnKey}
    stoppedKey: null, // the turn whose countdown the player stopped
    lastReview: null,
    health: null, // the last GET /api/health: the tables being prepared ("tables", "preparing")
    healthTimer: null,
    healthWasPreparing: false,
    thinking: null, // the name of the computer whose step is in flight (shown after THINKING_MS)
    thinkingTimer: null,
    prepTimer: null, // the poll of a game's view while its chances table is prepared
    reviewRules: null, // the rule set of the review shown (a game of the history may be of another)
    gone: null, // the game asked for by its address that could not be opened: {status, message}
    hist: null, // the history view: {games, total, players, player, loading}
  };

  // ---------- text ----------

  /** A message in the page's language (the English msgid when the catalogue lacks it), with {name} filled. */
  function t(msgid, values) {
    let text = S.messages[msgid];
    if (typeof text !== "string" || text === "") text = msgid;
    if (values) {
      text = text.replace(/\{(\w+)\}/g, (m, key) => (key in values ? String(values[key]) : m));
    }
    return text;
  }

  const $ = (id) => document.getElementById(id);

  /** An element with text content only (never markup). */
  function el(tag, opts, ...children) {
    const node = document.createElement(tag);
    if (opts) {
      for (const [k, v] of Object.entries(opts)) {
        if (v === undefined || v === null || v === false) continue;
        if (k === "text") node.textContent = v;
        else if (k === "cls") node.className = v;
        else if (k === "on") for (const [ev, fn] of Object.entries(v)) node.addEventListener(ev, fn);
        else if (k === "dataset") Object.assign(node.dataset, v);
        else node.setAttribute(k, v === true ? "" : v);
      }
    }
    for (const c of children) if (c !== null && c !== undefined) node.append(c);
    return node;
  }

  function fmt(x, digits = 2) {
    return Number(x).toLocaleString(S.lang === "id" ? "id-ID" : "en-US", {
      minimumFractionDigits: digits,
      maximumFractionDigits: digits,
    });
  }

  /** A loss in points: three decimals for the small ones (0.003 is not 0.00). */
  function fmtLoss(x) {
    return fmt(x, Math.abs(x) < 0.1 ? 3 : 2);
  }

  function boxName(id) {
    const rs = currentRules();
    const box = rs && rs.boxes.find((b) => b.id === id);
    return t(box ? box.name : id);
  }

  /** How many dice the rule set rolls (5; 6 in Maxi Yatzy). */
  function diceCount() {
    const rs = currentRules();
    return (rs && rs.dice) || 5;
  }

  /** The bonus row's name: "Penta bonus", "Yahtzee bonus" (the rule set's name of the five-of-a-kind box). */
  function pentaBonusName() {
    const name = boxName("penta");
    return name === t("Penta") ? t("Penta bonus") : t("{box} bonus", { box: name });
  }

  function pentaBonusText(n) {
    return boxName("penta") === t("Penta") ? t("+{n} Penta bonus", { n }) : "+" + n + " " + pentaBonusName();
  }

  /** Whether the rule set pays a bonus for further five of a kinds (Kiriki and "no bonus" do not): the
   * rules from the server say so in ``penta_bonus``. */
  function paysPentaBonus() {
    const rs = currentRules();
    return !rs || rs.penta_bonus > 0;
  }

  function diceText(faces) {
    return faces.join(" ");
  }

  /** An option of the advisor (or of a review) in words. */
  function optionText(o) {
    if (!o) return "";
    if (o.action === "keep") {
      if (!o.keep.length) return t("Reroll all the dice");
      const n = diceCount() - o.keep.length;
      return n === 1
        ? t("Keep {dice} and reroll one die", { dice: diceText(o.keep) })
        : t("Keep {dice} and reroll {n} dice", { dice: diceText(o.keep), n });
    }
    let s =
      o.points === 1
        ? t("{box}: {points} point", { box: boxName(o.box), points: o.points })
        : t("{box}: {points} points", { box: boxName(o.box), points: o.points });
    if (o.penta_bonus) s += " " + pentaBonusText(o.penta_bonus);
    if (o.upper_bonus) s += " " + t("+{n} upper bonus", { n: o.upper_bonus });
    return s;
  }

  function announce(text) {
    const live = $("live");
    live.textContent = text;
  }

  function showError(text) {
    const e = $("error");
    e.textContent = text;
    e.hidden = !text;
  }

  function applyTexts() {
    document.documentElement.lang = S.lang;
    for (const node of document.querySelectorAll("[data-t]")) node.textContent = t(node.dataset.t);
    for (const node of document.querySelectorAll("[data-t-aria]")) node.setAttribute("aria-label", t(node.dataset.tAria));
    for (const option of $("rules").options) if (option.dataset.title) option.textContent = t(option.dataset.title);
    document.title = t("pentadice: Penta in the browser");
  }

  async function loadMessages(lang) {
    S.lang = lang;
    S.messages = {};
    if (lang !== "en") {
      try {
        const data = await api("GET", "/api/messages?lang=" + encodeURIComponent(lang));
        if (data && data.messages && typeof data.messages === "object") S.messages = data.messages;
      } catch (e) {
        // No catalogue: the English texts stand.
      }
    }
    try {
      localStorage.setItem("pentadice.lang", lang);
    } catch (e) {
      // storage may be off
    }
    $("lang").value = lang;
    applyTexts();
    renderPlayers();
    renderPrep();
    if (S.game) render();
    if (S.lastReview) renderReview(S.lastReview, S.reviewRules);
    if (S.gone) renderGone();
    if (S.hist) renderHistory();
  }

  function initialLang() {
    const asked = params.get("lang");
    if (asked === "en" || asked === "id") return asked;
    try {
      const kept = localStorage.getItem("pentadice.lang");
      if (kept === "en" || kept === "id") return kept;
    } catch (e) {
      // storage may be off
    }
    const langs = navigator.languages && navigator.languages.length ? navigator.languages : [navigator.language || "en"];
    for (const l of langs) {
      const base = String(l).toLowerCase().split("-")[0];
      if (base === "id" || base === "in" || base === "ms") return "id";
      if (base === "en") return "en";
    }
    return "en";
  }

  // ---------- the API ----------

  class ApiError extends Error {
    constructor(message, status, data) {
      super(message);
      this.status = status;
      this.data = data || null; // the error's JSON (a 503's "preparing")
    }
  }

  /** A JSON body sent as it is, text or a file's bytes: a save file's numbers (the generator's state is a
   * 128-bit integer) would lose their digits through JSON.parse and JSON.stringify, and a save file is read
   * by the server's one reader of saves (as `play --resume` reads it), never decoded here. */
  class RawJson {
    constructor(text) {
      this.text = text;
    }
  }

  async function api(method, path, body) {
    const opts = { method, headers: { Accept: "application/json" } };
    if (body !== undefined) {
      opts.headers["Content-Type"] = "application/json";
      opts.body = body instanceof RawJson ? body.text : JSON.stringify(body);
    }
    let response;
    try {
      response = await fetch(path, opts);
    } catch (e) {
      throw new ApiError(t("The server cannot be reached"), 0);
    }
    let data = null;
    try {
      data = await response.json();
    } catch (e) {
      data = null;
    }
    if (!response.ok) {
      const msg = data && typeof data.error === "string" ? data.error : "HTTP " + response.status;
      throw new ApiError(msg, response.status, data);
    }
    return data;
  }

  function currentRules() {
    const name = S.reviewRules && !$("review").hidden ? S.reviewRules : S.game ? S.game.rules : $("rules").value;
    return S.rules.find((r) => r.name === name) || S.rules[0];
  }

  // ---------- dice ----------

  const PIPS = {
    1: [[50, 50]],
    2: [[28, 28], [72, 72]],
    3: [[28, 28], [50, 50], [72, 72]],
    4: [[28, 28], [72, 28], [28, 72], [72, 72]],
    5: [[28, 28], [72, 28], [50, 50], [28, 72], [72, 72]],
    6: [[28, 26], [72, 26], [28, 50], [72, 50], [28, 74], [72, 74]],
  };
  const SVG = "http://www.w3.org/2000/svg";

  /** A die face as SVG (pips), or a blank die for face 0. */
  function dieSvg(face) {
    const svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("viewBox", "0 0 100 100");
    svg.setAttribute("aria-hidden", "true");
    svg.setAttribute("focusable", "false");
    const rect = document.createElementNS(SVG, "rect");
    for (const [k, v] of Object.entries({ x: 4, y: 4, width: 92, height: 92, rx: 18, class: "die-body" })) rect.setAttribute(k, v);
    svg.append(rect);
    for (const [cx, cy] of PIPS[face] || []) {
      const c = document.createElementNS(SVG, "circle");
      c.setAttribute("cx", cx);
      c.setAttribute("cy", cy);
      c.setAttribute("r", 9);
      c.setAttribute("class", "pip");
      svg.append(c);
    }
    return svg;
  }

  /** Indices of ``dice`` that make up the multiset ``keep`` (the first matching dice). */
  function indicesOf(dice, keep) {
    const out = new Set();
    const want = keep.slice();
    dice.forEach((d, i) => {
      const j = want.indexOf(d);
      if (j >= 0) {
        out.add(i);
        want.splice(j, 1);
      }
    });
    return out;
  }

  function heldFaces() {
    const dice = (S.game && S.game.dice) || [];
    return [...S.held].sort((a, b) => a - b).map((i) => dice[i]).sort((a, b) => a - b);
  }

  // ---------- game state helpers ----------

  function me() {
    const g = S.game;
    if (!g || g.over || g.current === null || g.current === undefined) return null;
    return g.players[g.current];
  }

  function humanTurn() {
    const p = me();
    return !!p && !p.computer;
  }

  function turnKey() {
    const g = S.game;
    return g ? [g.current, g.turn, g.players[g.current] ? g.players[g.current].turns : 0].join(":") : "";
  }

  function hintsOn() {
    return S.game && (S.game.coach || $("hints").checked);
  }

  function advice() {
    return (S.game && S.game.advice) || null;
  }

  function bestBox(adv) {
    return adv ? adv.options.find((o) => o.action === "score") || null : null;
  }

  function bestKeep(adv) {
    return adv ? adv.options.find((o) => o.action === "keep") || null : null;
  }

  function sameFaces(a, b) {
    if (a.length !== b.length) return false;
    const x = a.slice().sort(),
      y = b.slice().sort();
    return x.every((v, i) => v === y[i]);
  }

  function rollNumber() {
    const g = S.game;
    const rolls = currentRules() ? currentRules().rolls : 3;
    if (!g || !g.dice) return 1;
    return rolls - g.rolls_left + 1;
  }

  // ---------- rendering ----------

  function render() {
    const g = S.game;
    if (!g) return;
    renderStatus();
    renderThinking();
    renderChances();
    renderDice();
    renderPad();
    renderActions();
    renderNote();
    renderAdvice();
    renderSheet();
    renderWinner();
    $("game").classList.toggle("over", !!g.over);
    document.querySelector("#game .table-top").hidden = !!g.over;
    document.body.dataset.state = gameState();
  }

  /** What the page waits for (read by the browser tests, and by style rules if need be). */
  function gameState() {
    const g = S.game;
    if (!g) return "setup";
    if (g.over) return "over";
    if (S.busy) return "busy";
    if (!humanTurn()) return "computer";
    if (!g.dice) return "roll";
    return g.rolls_left > 0 ? "choose" : "last";
  }

  function renderStatus() {
    const g = S.game;
    const rs = currentRules();
    const p = me();
    let text;
    if (g.over) text = t("Game over");
    else if (p.computer) text = t("{name}'s turn {turn} of {turns} (computer)", { name: p.name, turn: g.turn, turns: rs.boxes.length });
    else text = t("{name}'s turn {turn} of {turns}", { name: p.name, turn: g.turn, turns: rs.boxes.length });
    $("status").textContent = text;
  }

  /** A probability as a whole percentage, never rounded to a certainty it is not. */
  function percentText(p) {
    if (p > 0 && p < 0.005) return t("<1 %");
    if (p >= 0.995 && p < 1) return t(">99 %");
    return t("{percent} %", { percent: Math.round(100 * p) });
  }

  const isNumber = (x) => typeof x === "number" && Number.isFinite(x);

  /** A progress from 0 to 1 as a whole percentage, rounded down (100 % only when done). */
  function progressText(progress) {
    const p = Math.max(0, Math.min(1, Number(progress) || 0));
    return t("{percent} %", { percent: Math.floor(100 * p + 1e-9) });
  }

  /** The sheets of a view as one string: the chances shown belong to one set of sheets. */
  function sheetsKey(sheets) {
    return sheets.map((sheet) => JSON.stringify(sheet)).join("|");
  }

  /** Each player's chance of winning from the sheets as they stand (the server's exact figure). Numbers of
   * other sheets are never shown as current: while the server computes the new ones the line says "updating",
   * and while the rule set's chances table is being prepared it says so, with its progress. */
  function renderChances() {
    const g = S.game;
    const box = $("chances");
    const key = sheetsKey(g.players.map((p) => p.sheet));
    if (Array.isArray(g.chances)) S.chances = { game: g.id, key, values: g.chances };
    const known =
      S.chances && S.chances.game === g.id && S.chances.key === key && S.chances.values.length === g.players.length
        ? S.chances
        : null;
    const preparing = !known && g.preparing && typeof g.preparing === "object" ? g.preparing : null;
    const pending = !known && !preparing && !!g.chances_pending;
    const show = !g.over && g.players.length > 1 && (!!known || !!preparing || pending);
    box.hidden = !show;
    if (!show) {
      box.removeAttribute("data-state");
      return;
    }
    if (preparing) pollPreparing(g.id);
    else if (pending) fetchChances(g.id, key);
    box.classList.toggle("stale", !known);
    box.setAttribute("aria-busy", known ? "false" : "true");
    box.dataset.state = known ? "known" : preparing ? "preparing" : "updating";
    box.replaceChildren(el("span", { cls: "label", text: t("Chances of winning:") + " " }));
    if (preparing) {
      box.append(
        el("span", {
          cls: "pending",
          text: isNumber(preparing.progress)
            ? t("preparing ({percent})", { percent: progressText(preparing.progress) })
            : t("preparing…"),
        }),
      );
      if (preparing.what) box.title = t(String(preparing.what));
      return;
    }
    box.removeAttribute("title");
    if (!known) {
      box.append(el("span", { cls: "pending", text: t("updating…") }));
      return;
    }
    g.players.forEach((p, i) => {
      if (i) box.append(", ");
      box.append(el("span", { cls: "chance", dataset: { player: String(i) }, text: p.name + " " + percentText(known.values[i]) }));
    });
  }

  /** Asks the server for the chances it is computing (once for each set of sheets), and shows them; asks again
   * a little later when the answer did not come (the game goes on meanwhile). */
  async function fetchChances(id, key) {
    if (S.chancesAsked === id + "/" + key) return;
    S.chancesAsked = id + "/" + key;
    try {
      const out = await api("GET", "/api/games/" + encodeURIComponent(id) + "/chances");
      if (!out || !Array.isArray(out.chances)) return;
      S.chances = { game: id, key: sheetsKey(out.sheets), values: out.chances };
    } catch (e) {
      if (e.status === 404) return; // the game is gone
      setTimeout(() => {
        if (S.chancesAsked !== id + "/" + key) return;
        S.chancesAsked = null;
        if (S.game && S.game.id === id) renderChances();
      }, 2 * POLL_MS);
      return;
    }
    if (S.game && S.game.id === id) renderChances();
  }

  /** While the chances table of a game's rule set is being prepared: the game's view asked again about every
   * second, its chances (and the progress) taken when its sheets are still those shown. */
  function pollPreparing(id) {
    if (S.prepTimer) return;
    S.prepTimer = setTimeout(async () => {
      try {
        const view = await api("GET", "/api/games/" + encodeURIComponent(id));
        const g = S.game;
        const same = (v) => sheetsKey(v.players.map((p) => p.sheet));
        if (g && view && g.id === id && Array.isArray(view.players) && same(view) === same(g)) {
          g.chances = view.chances;
          g.chances_pending = view.chances_pending;
          g.preparing = view.preparing;
        }
      } catch (e) {
        if (e.status === 404) return; // the game is gone
      } finally {
        S.prepTimer = null;
      }
      if (S.game && S.game.id === id && !S.game.over) renderChances();
    }, POLL_MS);
  }

  /** What a computer's step in flight shows, after THINKING_MS: "cpu is thinking…" beside the greyed Roll. */
  function renderThinking() {
    const name = S.game && !S.game.over ? S.thinking : null;
    const text = name === null || name === undefined ? "" : t("{name} is thinking…", { name });
    const box = $("thinking");
    if (box.textContent !== text) box.textContent = text;
    if (text) $("status").dataset.state = "thinking";
    else $("status").removeAttribute("data-state");
  }

  function renderDice() {
    const g = S.game;
    const box = $("dice");
    box.replaceChildren();
    const dice = g.dice || new Array(diceCount()).fill(0);
    box.classList.toggle("many", dice.length > 5); // six dice: smaller, to fit a phone's width
    const adv = hintsOn() && humanTurn() ? advice() : null;
    const keep = adv && adv.best && adv.best.action === "keep" ? indicesOf(g.dice || [], adv.best.keep) : new Set();
    const canHold = humanTurn() && g.dice && g.rolls_left > 0 && !S.busy;
    dice.forEach((face, i) => {
      const held = S.held.has(i);
      let label;
      if (!face) label = t("Die {n}: not rolled", { n: i + 1 });
      else if (held) label = t("Die {n}: {face}, held", { n: i + 1, face: t(FACE_WORDS[face]) });
      else label = t("Die {n}: {face}", { n: i + 1, face: t(FACE_WORDS[face]) });
      if (keep.has(i)) label += ", " + t("the advisor keeps it");
      const b = el("button", {
        type: "button",
        cls: "die" + (held ? " held" : "") + (keep.has(i) ? " advised" : "") + (face ? "" : " blank"),
        "aria-label": label,
        "aria-pressed": face ? String(held) : null,
        "aria-keyshortcuts": String(i + 1),
        disabled: !canHold,
        dataset: { index: String(i), face: String(face) },
        on: { click: () => toggleHold(i) },
      });
      b.append(dieSvg(face));
      if (held) b.append(el("span", { cls: "held-tag", text: t("held"), "aria-hidden": "true" }));
      box.append(b);
    });
  }

  function renderPad() {
    const g = S.game;
    const pad = $("pad");
    const need = padNeeded();
    pad.hidden = !need;
    if (!need) return;
    const rollNo = rollNumber();
    $("pad-prompt").textContent = t("Roll {n}: tap the faces of the {k} dice rolled", { n: rollNo, k: need });
    const faces = $("pad-faces");
    if (!faces.childElementCount) {
      for (let f = 1; f <= 6; f++) {
        const b = el("button", { type: "button", cls: "die face", dataset: { face: String(f) }, on: { click: () => padAdd(f) } });
        b.append(dieSvg(f));
        faces.append(b);
      }
    }
    for (const b of faces.children) {
      const f = Number(b.dataset.face);
      b.setAttribute("aria-label", t("Enter a {face}", { face: t(FACE_WORDS[f]) }));
      b.disabled = S.busy || S.pad.length >= need;
    }
    const entered = $("pad-entered");
    entered.replaceChildren();
    const kept = g.dice ? heldFaces() : [];
    if (kept.length) entered.append(el("span", { cls: "kept", text: t("kept: {dice}", { dice: diceText(kept) }) }));
    entered.append(
      el("span", {
        cls: "rolled",
        text: S.pad.length ? t("rolled: {dice}", { dice: diceText(S.pad) }) : t("rolled: nothing yet"),
      }),
    );
    $("pad-clear").disabled = !S.pad.length || S.busy;
    $("pad-enter").disabled = S.pad.length !== need || S.busy;
  }

  /** How many faces a coach roll needs now (0 when no roll is to be entered). */
  function padNeeded() {
    const g = S.game;
    if (!g || !g.coach || !humanTurn()) return 0;
    if (!g.dice) return diceCount();
    if (g.rolls_left <= 0) return 0;
    return diceCount() - S.held.size;
  }

  function renderActions() {
    const g = S.game;
    const rs = currentRules();
    const roll = $("roll");
    const human = humanTurn();
    roll.hidden = g.coach || g.over;
    const n = rollNumber();
    if (g.dice && g.rolls_left === 0) roll.textContent = t("No rolls left");
    else roll.textContent = t("Roll {n}/{rolls}", { n: n, rolls: rs.rolls });
    roll.disabled = !human || S.busy || (g.dice && (g.rolls_left === 0 || S.held.size === g.dice.length));
    const best = $("best");
    best.hidden = g.over || g.coach;
    best.disabled = !human || S.busy || !g.dice || !advice();
    $("undo").hidden = !g.coach;
    $("undo").disabled = !g.can_undo || S.busy;
    $("review-game").hidden = !g.over;
    $("save").disabled = S.busy;
  }

  function renderNote() {
    const g = S.game;
    const adv = humanTurn() ? advice() : null;
    const lines = [];
    if (g.dice && !g.over) {
      if (adv && adv.joker) lines.push(jokerText(adv));
      const warning = g.warning || (adv && adv.message);
      if (warning) lines.push(t(warning));
    }
    const note = $("note");
    note.textContent = lines.join(" ");
    note.hidden = !lines.length;
  }

  /** The joker's message in the page's language: the advisor's English note (the same msgids, the same
   * choice of sentence: pentadice.advisor.advice.joker_note) said again with t(). */
  function jokerText(adv) {
    const english = String(adv.joker);
    const face = adv.dice[0];
    const why = t("a new {penta} with the {penta} box at {points}", { penta: boxName("penta"), points: adv.sheet.penta });
    const name = boxName(["ones", "twos", "threes", "fours", "fives", "sixes"][face - 1]);
    let template;
    if (english.endsWith("any open box")) template = N_("Joker: {why} and {name} filled: Full house, Small and Large straight score in full; any open box");
    else if (english.endsWith("so it must take the roll")) template = N_("Joker: {why}; the {name} box is open, so it must take the roll");
    else if (english.endsWith("takes it at 0")) template = N_("Joker: {why}; {name} and the whole lower section are filled, so an open upper box takes it at 0");
    else if (english.endsWith("(Full house 25, straights 30 and 40)")) template = N_("Joker: {why}; {name} is filled, so any open lower box takes it (Full house 25, straights 30 and 40)");
    else return t(english);
    return t(template, { why, name });
  }

  function renderAdvice() {
    const g = S.game;
    const box = $("advice");
    box.replaceChildren();
    const adv = advice();
    const show = hintsOn() && humanTurn() && g.dice && adv;
    box.hidden = !show;
    if (!show) return;
    box.append(
      el("p", { cls: "best" }, el("strong", { text: t("Best:") + " " }), optionText(adv.best) + " " + t("(expected final score {v})", { v: fmt(adv.best.value) })),
    );
    const bb = bestBox(adv);
    if (bb && adv.best.action === "keep") {
      box.append(el("p", { text: t("Best box if you score now: {option} (expected {v})", { option: optionText(bb), v: fmt(bb.value) }) }));
    }
    if (g.rolls_left > 0 && S.held.size) {
      const kept = heldFaces();
      const mine = adv.options.find((o) => o.action === "keep" && sameFaces(o.keep, kept));
      if (mine) {
        box.append(
          el("p", {
            cls: mine.loss > 5e-4 ? "cost" : "good",
            text:
              mine.loss > 5e-4
                ? t("Keeping {dice} costs {loss} points", { dice: diceText(kept), loss: fmtLoss(mine.loss) })
                : t("Keeping {dice} is the best keep", { dice: diceText(kept) }),
          }),
        );
      }
    }
    if (g.coach) {
      const details = el("details", { cls: "options", open: S.optionsOpen }, el("summary", { text: t("Every choice and its cost") }));
      details.addEventListener("toggle", () => (S.optionsOpen = details.open));
      const table = el("table", { cls: "opts" });
      table.append(
        el("thead", null, el("tr", null, el("th", { text: t("Choice"), scope: "col" }), el("th", { text: t("Expected"), scope: "col" }), el("th", { text: t("Loss"), scope: "col" }))),
      );
      const body = el("tbody");
      for (const o of adv.options) {
        body.append(el("tr", null, el("td", { text: optionText(o) }), el("td", { cls: "num", text: fmt(o.value) }), el("td", { cls: "num", text: fmtLoss(o.loss) })));
      }
      table.append(body);
      details.append(table);
      box.append(details);
    }
  }

  function renderWinner() {
    const g = S.game;
    const w = $("winner");
    if (!g.over) {
      w.hidden = true;
      return;
    }
    const winners = g.winners || [];
    const totals = g.players.map((p) => p.totals.total);
    const top = Math.max(...totals);
    w.hidden = false;
    w.textContent =
      winners.length > 1
        ? t("A tie: {names} with {total} points", { names: winners.join(", "), total: top })
        : g.players.length === 1
          ? t("Game over: {total} points", { total: top })
          : t("{name} wins with {total} points", { name: winners[0], total: top });
  }

  function renderSheet() {
    const g = S.game;
    const rs = currentRules();
    const table = $("sheet");
    const head = table.tHead;
    const body = table.tBodies[0];
    head.replaceChildren();
    body.replaceChildren();
    const human = humanTurn();
    const adv = human ? advice() : null;
    const showHints = hintsOn() && human && g.dice && adv;
    const advised = hintsOn() && adv ? bestBox(adv) : null;
    const cd = S.countdown;

    const hr = el("tr", null, el("th", { scope: "col", text: t("Box") }));
    g.players.forEach((p, i) => {
      const th = el("th", { scope: "col", cls: "player" + (i === g.current ? " current" : "") });
      th.append(el("span", { cls: "name", text: p.name }));
      if (p.computer) th.append(el("span", { cls: "tag", text: p.strategy === "win" ? t("computer, plays to win") : t("computer") }));
      hr.append(th);
    });
    if (showHints) hr.append(el("th", { scope: "col", cls: "hint", text: t("Expected / loss") }));
    head.append(hr);

    const sumRow = (label, key, cls) => {
      const tr = el("tr", { cls: "sum " + (cls || "") }, el("th", { scope: "row", text: label }));
      g.players.forEach((p, i) => tr.append(el("td", { cls: "num" + (i === g.current ? " current" : ""), text: String(p.totals[key]) })));
      if (showHints) tr.append(el("td", { cls: "hint" }));
      body.append(tr);
    };

    rs.boxes.forEach((box, bi) => {
      const name = t(box.name);
      const key = BOX_KEYS[bi] || "";
      const th = el("th", { scope: "row" });
      if (key) th.append(el("kbd", { cls: "key", text: key.toUpperCase(), "aria-hidden": "true" }));
      th.append(el("span", { text: name }));
      const tr = el("tr", { cls: "box", dataset: { box: box.id } }, th);
      g.players.forEach((p, i) => {
        const td = el("td", { cls: "num" + (i === g.current ? " current" : "") });
        const filled = p.sheet[box.id];
        const addable = filled !== undefined && i === g.current && g.dice && g.legal && g.legal[box.id] !== undefined;
        if (filled !== undefined && !(addable && !p.computer)) {
          td.textContent = String(filled);
          td.classList.add("filled");
        } else if (i === g.current && g.dice && g.legal) {
          const pts = g.legal[box.id];
          if (pts === undefined) {
            td.append(el("span", { cls: "closed", text: "–", title: t("not allowed now") }));
          } else if (!p.computer) {
            let label =
              pts === 1
                ? t("{box}: score {points} point", { box: name, points: pts })
                : t("{box}: score {points} points", { box: name, points: pts });
            if (addable) {
              // Kiriki: the box holds points already; this five of a kind adds to it.
              td.classList.add("filled");
              td.append(el("span", { cls: "held-points", text: String(filled) + " " }));
              label = t("{box}: score {points} points", { box: name, points: filled }) + " + " + pts;
            }
            if ((advised && advised.box === box.id) || (cd && cd.box === box.id)) label += ", " + t("the advisor's box");
            const b = el("button", {
              type: "button",
              cls:
                "score" +
                (pts === 0 ? " zero" : "") +
                (advised && advised.box === box.id ? " advised" : "") +
                (cd && cd.box === box.id ? " pending" : ""),
              "aria-label": label,
              "aria-keyshortcuts": key.toUpperCase(),
              disabled: S.busy,
              dataset: { box: box.id },
              on: { click: () => scoreBox(box.id) },
              text: addable ? "+" + pts : String(pts),
            });
            td.append(b);
          } else {
            td.append(el("span", { cls: "would", text: String(pts) }));
          }
        }
        tr.append(td);
      });
      if (showHints) {
        const o = adv.options.find((x) => x.action === "score" && x.box === box.id);
        const td = el("td", { cls: "hint num" });
        if (o) {
          td.append(el("span", { cls: "ev", text: fmt(o.value, 1) }));
          td.append(" ");
          td.append(el("span", { cls: o.loss > 5e-4 ? "loss" : "loss none", text: o.loss > 5e-4 ? "−" + fmtLoss(o.loss) : t("best") }));
        }
        tr.append(td);
      }
      body.append(tr);
      const next = rs.boxes[bi + 1];
      if (box.section === "upper" && (!next || next.section !== "upper")) {
        // After the upper section's last box: its sum and bonus, at the rule set's threshold (63; 75 in Maxi Yatzy).
        sumRow(t("Upper section"), "upper", "upper");
        sumRow(t("Upper bonus ({points}+)", { points: rs.upper_threshold }), "upper_bonus", "bonus");
      }
    });
    sumRow(t("Lower section"), "lower", "lower");
    if (paysPentaBonus() || g.players.some((p) => p.totals.penta_bonus)) sumRow(pentaBonusName(), "penta_bonus", "bonus");
    sumRow(t("TOTAL"), "total", "total");
  }

  // ---------- moves ----------

  function toggleHold(i) {
    const g = S.game;
    if (!humanTurn() || !g.dice || g.rolls_left <= 0 || S.busy) return;
    if (S.held.has(i)) S.held.delete(i);
    else S.held.add(i);
    if (g.coach) S.pad = S.pad.slice(0, diceCount() - S.held.size);
    render();
    const d = $("dice").children[i];
    if (d) d.focus();
  }

  /** Sends one move and shows what happened; the view in the answer replaces the game. */
  async function send(path, body, describe) {
    if (S.busy || !S.game) return;
    S.busy = true;
    cancelCountdown();
    showError("");
    render();
    const before = S.game;
    try {
      // The view's version goes with the move: sent twice (two tabs, a retry), it is played once.
      const sent = Object.assign({}, body || {}, { version: before.version });
      const res = await api("POST", "/api/games/" + encodeURIComponent(before.id) + path, sent);
      if (S.game !== before) return; // the game was left meanwhile
      S.game = res.game;
      if (describe) announce(describe(res.played, before));
    } catch (e) {
      if (S.game !== before) return;
      if (e.status === 404) {
        S.busy = false;
        showGone(e);
        return;
      }
      showError(t(e.message));
      try {
        S.game = await api("GET", "/api/games/" + encodeURIComponent(before.id));
      } catch (e2) {
        // keep what we had
      }
    } finally {
      S.busy = false;
    }
    afterView();
  }

  function roll() {
    const g = S.game;
    if (!humanTurn() || g.coach || S.busy) return;
    if (g.dice && (g.rolls_left <= 0 || S.held.size >= g.dice.length)) return;
    const keep = g.dice ? heldFaces() : [];
    S.keepAfterRoll = keep;
    send("/roll", { keep }, (played, before) => describePlayed(played, before));
  }

  function enterRoll() {
    const g = S.game;
    const need = padNeeded();
    if (!need || S.pad.length !== need || S.busy) return;
    const keep = g.dice ? heldFaces() : [];
    const dice = S.pad.slice();
    S.keepAfterRoll = keep;
    S.pad = [];
    send("/roll", { keep, dice }, (played, before) => describePlayed(played, before));
  }

  function padAdd(face) {
    if (S.pad.length < padNeeded()) S.pad.push(face);
    renderPad();
    if (S.pad.length === padNeeded()) $("pad-enter").focus();
  }

  function scoreBox(box) {
    const g = S.game;
    if (!humanTurn() || !g.dice || S.busy) return;
    if (!g.legal || g.legal[box] === undefined) {
      announce(t("{box} cannot take these dice now", { box: boxName(box) }));
      return;
    }
    send("/score", { box }, (played, before) => describePlayed(played, before));
  }

  function playBest() {
    const adv = advice();
    if (!adv || !humanTurn() || S.busy) return;
    const o = adv.best;
    if (o.action === "score") scoreBox(o.box);
    else {
      S.held = indicesOf(S.game.dice, o.keep);
      roll();
    }
  }

  async function undo() {
    const g = S.game;
    if (!g || !g.coach || S.busy) return;
    S.busy = true;
    render();
    try {
      const res = await api("POST", "/api/games/" + encodeURIComponent(g.id) + "/undo", { version: g.version });
      S.game = res.game;
      S.held = new Set();
      S.pad = [];
      announce(t("Undone"));
      showError("");
    } catch (e) {
      showError(t(e.message));
    } finally {
      S.busy = false;
    }
    afterView(true);
  }

  /** One sentence for what a move did. */
  function describePlayed(played, before) {
    if (!played) return "";
    const who = played.player || (before.players[before.current] || {}).name || "";
    if (Array.isArray(played.rolled)) return t("{name} rolls {dice}", { name: who, dice: diceText(played.rolled) });
    let text;
    if (played.box) {
      const scored = { name: who, box: boxName(played.box), points: played.points };
      text =
        played.points === 1
          ? t("{name} scores {box}: {points} point", scored)
          : t("{name} scores {box}: {points} points", scored);
      if (played.penta_bonus) text += " " + pentaBonusText(played.penta_bonus);
      if (played.upper_bonus) text += " " + t("+{n} upper bonus", { n: played.upper_bonus });
      if (played.auto) text += " " + t("(filled for you: time was up)");
    } else {
      const move = String(played.move || "");
      const kept = move.startsWith("keep ") ? move.slice(5) : "";
      text = kept
        ? t("{name} keeps {kept} and rolls: {dice}", { name: who, kept, dice: diceText(played.dice || []) })
        : t("{name} rolls all the dice: {dice}", { name: who, dice: diceText(played.dice || []) });
    }
    if (typeof played.loss === "number" && !played.computer && hintsOn()) {
      text += ". " + (played.loss > 5e-4 ? t("That cost {loss} points.", { loss: fmtLoss(played.loss) }) : t("Best choice."));
    }
    return text;
  }

  // ---------- the flow of a game ----------

  /** After every new view: holds, the computer's steps, the countdown, the end. */
  function afterView(keepHolds) {
    const g = S.game;
    if (!g) return;
    if (!keepHolds) {
      const kept = S.keepAfterRoll;
      S.held = g.dice && kept && kept.length && humanTurn() && g.rolls_left > 0 ? indicesOf(g.dice, kept) : new Set();
      if (g.dice && g.rolls_left === 0) S.held = new Set();
    }
    S.keepAfterRoll = null;
    if (!g.dice) S.held = new Set();
    render();
    clearTimeout(S.cpuTimer);
    if (g.over) {
      const w = $("winner").textContent;
      const said = $("live").textContent;
      announce(said && said !== w ? t("{said}. {winner}", { said: said.replace(/[.]$/, ""), winner: w }) : w);
      return;
    }
    const p = me();
    if (p.computer) {
      S.cpuTimer = setTimeout(computerStep, CPU_PAUSE_MS);
      return;
    }
    if (!g.coach && g.dice && g.rolls_left === 0 && g.auto_commit_seconds !== null && g.auto_commit_seconds !== undefined) {
      if (S.stoppedKey !== turnKey()) startCountdown(g.auto_commit_seconds);
    }
  }

  async function computerStep() {
    const g = S.game;
    if (!g || g.over || !me() || !me().computer || S.busy) return;
    const name = me().name;
    clearTimeout(S.thinkingTimer);
    S.thinkingTimer = setTimeout(() => {
      S.thinking = name;
      renderThinking();
    }, THINKING_MS);
    try {
      await send("/computer", undefined, (played, before) => describePlayed(played, before));
    } finally {
      clearTimeout(S.thinkingTimer);
      S.thinking = null;
      renderThinking();
    }
  }

  function startCountdown(seconds) {
    cancelCountdown();
    const adv = advice();
    const bb = bestBox(adv);
    const key = turnKey();
    if (document.hidden) {
      // Nobody sees the page: the countdown starts, from its full time, when the page shows again.
      S.countdownHidden = key;
      return;
    }
    S.countdownHidden = null;
    S.countdown = { box: bb ? bb.box : null, left: Math.max(0, Math.ceil(seconds)), key, end: Date.now() + seconds * 1000 };
    const tick = () => {
      const cd = S.countdown;
      if (!cd || cd.key !== turnKey()) return;
      const left = Math.max(0, Math.ceil((cd.end - Date.now()) / 1000));
      cd.left = left;
      $("countdown").hidden = false;
      $("countdown-text").textContent = cd.box
        ? t("{box} is filled for you in {n} s", { box: boxName(cd.box), n: left })
        : t("The advisor's box is filled for you in {n} s", { n: left });
      if (Date.now() >= cd.end) {
        S.countdown = null;
        $("countdown").hidden = true;
        send("/auto-commit", undefined, (played, before) => describePlayed(played, before));
        return;
      }
      cd.timer = setTimeout(tick, Math.min(250, Math.max(10, cd.end - Date.now())));
    };
    renderSheet();
    tick();
    // Screen readers hear it once (the live region), after what the roll said.
    if (S.countdownSaid && S.countdownSaid.key === key) $("live").textContent = S.countdownSaid.before;
    else S.countdownSaid = { key, before: $("live").textContent };
    const said = S.countdownSaid.before.replace(/[.]$/, "");
    const text = $("countdown-text").textContent;
    announce(said ? t("{said}. {winner}", { said, winner: text }) : text);
  }

  /** A hidden page (another tab, a locked phone) stops the countdown; it starts again, in full, when the page
   * shows again: nobody loses a turn to a box they could not see. */
  function onVisibility() {
    const g = S.game;
    if (!g) return;
    if (document.hidden) {
      if (S.countdown) {
        const key = S.countdown.key;
        cancelCountdown();
        S.countdownHidden = key;
      }
    } else if (S.countdownHidden && S.countdownHidden === turnKey() && !S.busy) {
      S.countdownHidden = null;
      if (!g.over && humanTurn() && g.dice && g.rolls_left === 0 && g.auto_commit_seconds != null && S.stoppedKey !== turnKey()) {
        startCountdown(g.auto_commit_seconds);
      }
    }
  }

  function cancelCountdown() {
    if (S.countdown) clearTimeout(S.countdown.timer);
    S.countdown = null;
    $("countdown").hidden = true;
  }

  function stopCountdown() {
    if (!S.countdown) return;
    S.stoppedKey = S.countdown.key;
    cancelCountdown();
    renderSheet();
    announce(t("Countdown stopped: choose a box"));
  }

  // ---------- setup ----------

  function defaultPlayers(mode) {
    return mode === "coach"
      ? [{ name: t("You"), computer: false, strategy: "optimal" }]
      : [
          { name: t("You"), computer: false, strategy: "optimal" },
          { name: "cpu", computer: true, strategy: "optimal" },
        ];
  }

  function readPlayers() {
    return [...$("player-list").children].map((li) => {
      const computer = S.mode === "play" && li.querySelector("input[type=checkbox]").checked;
      return {
        name: li.querySelector("input[type=text]").value.trim(),
        computer,
        strategy: computer ? li.querySelector("select.strategy").value : "optimal",
      };
    });
  }

  function renderPlayers(list) {
    const players = list || (S.players = S.players || defaultPlayers(S.mode));
    if (list) S.players = list;
    const ol = $("player-list");
    ol.replaceChildren();
    players.forEach((p, i) => {
      const nameInput = el("input", {
        type: "text",
        maxlength: "32",
        required: true,
        autocomplete: "off",
        "aria-label": t("Name of player {n}", { n: i + 1 }),
      });
      nameInput.value = p.name;
      nameInput.addEventListener("input", () => (S.players[i].name = nameInput.value));
      const cpu = el("input", { type: "checkbox" });
      cpu.checked = !!p.computer;
      const strategy = el(
        "select",
        { cls: "strategy play-only", "aria-label": t("Strategy of player {n}", { n: i + 1 }) },
        el("option", { value: "optimal", text: t("plays for points") }),
        el("option", { value: "win", text: t("plays to win") }),
      );
      strategy.value = p.strategy === "win" ? "win" : "optimal";
      strategy.hidden = !p.computer;
      strategy.addEventListener("change", () => (S.players[i].strategy = strategy.value));
      cpu.addEventListener("change", () => {
        S.players[i].computer = cpu.checked;
        strategy.hidden = !cpu.checked;
        updateWinOptions();
      });
      const cpuLabel = el("label", { cls: "check play-only" }, cpu, " ", el("span", { text: t("computer") }));
      const remove = el("button", {
        type: "button",
        cls: "small",
        text: "×",
        "aria-label": t("Remove player {n}", { n: i + 1 }),
        disabled: players.length <= 1,
        on: {
          click: () => {
            S.players.splice(i, 1);
            renderPlayers(S.players);
          },
        },
      });
      ol.append(el("li", null, nameInput, cpuLabel, strategy, remove));
    });
    $("add-player").disabled = players.length >= 6;
    updateWinOptions();
  }

  // ---------- the tables the server prepares ----------

  /** How the server stands with a rule set's tables (GET /api/health's "tables"), or null when it says nothing
   * of them (a server that prepares nothing: every table held). */
  function tablesOf(name) {
    const h = S.health;
    const all = h && h.tables && typeof h.tables === "object" ? h.tables : null;
    const one = all ? all[name] : null;
    return one && typeof one === "object" ? one : null;
  }

  /** Whether a computer that plays to win can be chosen under the rule set ``name``: {state: "ready" |
   * "preparing" | "refused", label: the option's text, why: the reason, for its title and the note}. The
   * progress shown is the rule set's (its tables are built one at a time, the win player's last). */
  function winChoice(name) {
    const rs = currentRulesByName(name);
    const tb = tablesOf(name);
    const refused = (why) => ({ state: "refused", label: t("plays to win (not available)"), why });
    const refusal = rs.win_refusal || (tb && tb.win_refusal);
    if (refusal) return refused(t(String(refusal)));
    if (!tb || tb.win === "ready" || tb.win === undefined) return { state: "ready", label: t("plays to win"), why: "" };
    if (tb.failed) return refused(t("Preparing the tables failed: {reason}", { reason: t(String(tb.failed)) }));
    if (tb.win !== "preparing") return refused(t("This server does not hold its tables"));
    const b = tb.building;
    const label =
      b && isNumber(b.progress)
        ? t("plays to win (preparing {percent})", { percent: progressText(b.progress) })
        : t("plays to win (preparing…)");
    return { state: "preparing", label, why: t("Its tables are being prepared: it can be chosen when they are ready") };
  }

  /** The "plays to win" option of every computer, for the rule set chosen: offered when its tables are ready,
   * disabled with the reason (its title, and the note under the players) when refused or still being prepared.
   * A choice made before stays shown; a refused one falls back to "plays for points". */
  function updateWinOptions() {
    const name = $("rules").value;
    const choice = winChoice(name);
    $("player-list").querySelectorAll("li").forEach((li, i) => {
      const select = li.querySelector("select.strategy");
      const option = select && select.querySelector("option[value=win]");
      if (!option) return;
      option.disabled = choice.state !== "ready";
      option.textContent = choice.label;
      if (choice.why) option.title = choice.why;
      else option.removeAttribute("title");
      const wanted = S.players && S.players[i] ? S.players[i].strategy : select.value;
      if (choice.state === "refused" && select.value === "win") select.value = "optimal";
      else if (choice.state === "ready" && wanted === "win") select.value = "win";
    });
    const note = $("win-note");
    const computers = (S.players || []).some((p) => p.computer);
    const rules = t(currentRulesByName(name).title || name);
    let text = "";
    if (choice.state === "refused" && computers) {
      text = choice.why
        ? t("Plays to win is not offered under {rules}: {why}", { rules, why: choice.why })
        : t("Plays to win is not offered under {rules}", { rules });
    }
    note.textContent = text;
    note.hidden = !text;
  }

  /** The line on the set-up screen while the server prepares tables: which, how far. */
  function renderPrep() {
    const h = S.health;
    const all = h && h.tables && typeof h.tables === "object" ? h.tables : {};
    const chosen = $("rules").value;
    const names = Object.keys(all);
    const failedHere = tablesOf(chosen) && tablesOf(chosen).failed;
    // The rule set chosen first (when its tables are not all ready), then the one being built.
    const pick =
      (tablesOf(chosen) && !tablesOf(chosen).ready && h && h.preparing ? chosen : null) ||
      names.find((n) => all[n] && all[n].building) ||
      names.find((n) => all[n] && !all[n].ready && !all[n].failed) ||
      null;
    let text = "";
    let building = null;
    if (failedHere) {
      const rules = t(currentRulesByName(chosen).title || chosen);
      text = t("Preparing the tables of {rules} failed: {reason}", { rules, reason: t(String(failedHere)) });
    } else if (h && h.preparing && pick) {
      const tb = all[pick];
      const title = t(currentRulesByName(pick).title || pick);
      building = tb.building && typeof tb.building === "object" ? tb.building : null;
      const what = building ? t(String(building.what || building.table || "")) : "";
      text = what
        ? t("Preparing the tables of {rules}: {what}", { rules: title, what })
        : t("Preparing the tables of {rules}", { rules: title });
      if (building && isNumber(building.done) && isNumber(building.total) && building.total > 0) {
        text += " " + t("({done} of {total} tables ready)", { done: building.done, total: building.total });
      }
    } else if (h && h.preparing) {
      text = t("Preparing the tables…");
    }
    const prep = $("prep");
    if ($("prep-text").textContent !== text) $("prep-text").textContent = text;
    prep.toggleAttribute("data-on", !!text);
    prep.classList.toggle("failed", !!failedHere);
    const progress = building && isNumber(building.progress) ? building.progress : null;
    $("prep-progress").hidden = progress === null || !!failedHere;
    if (progress !== null) {
      $("prep-bar").value = Math.max(0, Math.min(1, progress));
      $("prep-percent").textContent = progressText(progress);
    }
  }

  /** Asks the server how its tables stand, shows it, and asks again about every second while something is
   * being prepared and the set-up screen shows (nothing is asked otherwise). */
  async function refreshHealth() {
    clearTimeout(S.healthTimer);
    S.healthTimer = null;
    try {
      S.health = await api("GET", "/api/health");
    } catch (e) {
      // The server is away: the last known state stands; the next Start says what is wrong.
    }
    const preparing = !!(S.health && S.health.preparing);
    if (S.healthWasPreparing && !preparing && !$("setup").hidden) announce(t("The tables are ready"));
    S.healthWasPreparing = preparing;
    updateWinOptions();
    renderPrep();
    if (preparing && !$("setup").hidden) S.healthTimer = setTimeout(refreshHealth, POLL_MS);
  }

  /** An error of the API in words: a 503 while tables are being prepared says which, and how far. */
  function errorText(e) {
    let text = t(e.message);
    const data = e.status === 503 && e.data ? e.data : null;
    const prep = data && data.preparing && typeof data.preparing === "object" ? data.preparing : null;
    if (prep) {
      const what = t(String(prep.what || prep.table || ""));
      text =
        text.replace(/[.!]?\s*$/, ".") +
        " " +
        (isNumber(prep.progress)
          ? t("Preparing {what}: {percent}.", { what, percent: progressText(prep.progress) })
          : t("Preparing {what}…", { what }));
      text += " " + t("Start again when it is ready.");
    }
    return text;
  }

  async function startGame(ev) {
    ev.preventDefault();
    showError("");
    const players = readPlayers();
    if (players.some((p) => !p.name)) {
      showError(t("Every player needs a name"));
      return;
    }
    const body = {
      players,
      rules: $("rules").value,
      dice: S.mode === "coach" ? "manual" : "random",
      auto_commit: S.mode === "coach" || !$("autocommit").checked ? null : currentRulesByName($("rules").value).auto_commit_seconds ?? 3,
    };
    const seed = $("seed").value.trim();
    if (S.mode === "play" && seed) {
      if (!/^[0-9]{1,18}$/.test(seed)) {
        showError(t("The seed is a whole number"));
        return;
      }
      body.seed = Number(seed);
    }
    $("start").disabled = true;
    try {
      const game = await api("POST", "/api/games", body);
      announce(t("A new game: {names}", { names: game.players.map((p) => p.name).join(", ") }));
      showGame(game, false);
      focusMain();
    } catch (e) {
      showError(errorText(e));
      if (e.status === 503) refreshHealth(); // the option and the line show the progress until ready
    } finally {
      $("start").disabled = false;
    }
  }

  function currentRulesByName(name) {
    return S.rules.find((r) => r.name === name) || {};
  }

  function focusMain() {
    const g = S.game;
    if (!g) return;
    const target = g.coach ? $("pad-faces").querySelector("button") : $("roll");
    if (target && !target.disabled && !target.hidden) target.focus();
  }

  function showSection(which) {
    const wasSetup = !$("setup").hidden;
    for (const id of ["setup", "game", "review", "history", "gone"]) $(id).hidden = which !== id;
    if (which !== "game") document.body.dataset.state = which;
    if (which !== "gone") S.gone = null;
    if (which === "setup" && !wasSetup && S.health && S.health.preparing) refreshHealth(); // polls again
    followAddress(which);
  }

  // ---------- addresses ----------

  /** The address of a view: a game's own, the history's, the set-up's; null where the address stays (a review,
   * the message about a game that cannot be opened). */
  function addressOf(which) {
    if (which === "game" && S.game) return "/games/" + encodeURIComponent(S.game.id);
    if (which === "history") return HISTORY_PATH;
    if (which === "setup") return "/";
    return null;
  }

  /** The browser's address follows the view shown (a new entry in its history: Back goes to the view before);
   * the query (the language, ?fast=1) stays. */
  function followAddress(which) {
    const path = addressOf(which);
    if (path && path !== location.pathname) window.history.pushState(null, "", path + location.search);
  }

  /** Shows what the address names: a game (asked of the server), the history, or the set-up. */
  async function route() {
    const m = GAME_PATH.exec(location.pathname);
    if (m) {
      if (!(S.game && S.game.id === m[1] && !$("game").hidden)) await openGame(m[1]);
    } else if (location.pathname === HISTORY_PATH) setMode("history");
    else if (!$("game").hidden || !$("gone").hidden) leaveGame();
    else if (!$("history").hidden) setMode(S.mode === "coach" ? "coach" : "play");
  }

  /** The game of an address (a reload, another tab, a bookmark): asked of the server, shown, and it goes on. */
  async function openGame(id) {
    showError("");
    try {
      const game = await api("GET", "/api/games/" + encodeURIComponent(id));
      const names = game.players.map((p) => p.name).join(", ");
      announce(game.over ? t("A finished game: {names}", { names }) : t("The game goes on: {names}", { names }));
      showGame(game, true);
      focusMain();
    } catch (e) {
      showGone(e);
    }
  }

  /** A game from the server, shown in its mode (play or coach), its address in the browser's; the computer's
   * turns and the countdown go on. */
  function showGame(game, keepHolds) {
    clearTimeout(S.cpuTimer);
    cancelCountdown();
    S.game = game;
    S.held = new Set();
    S.pad = [];
    S.stoppedKey = null;
    const mode = game.coach ? "coach" : "play";
    if (S.mode !== mode) {
      markMode(mode);
      S.players = defaultPlayers(mode);
      renderPlayers(S.players);
    }
    showSection("game");
    afterView(keepHolds);
  }

  /** A game that cannot be opened (removed, unknown, or the server away): the server's words, which say what it
   * keeps and for how long, and the ways on: a new game, again, the history. */
  function showGone(e) {
    clearTimeout(S.cpuTimer);
    cancelCountdown();
    S.game = null;
    showSection("gone");
    S.gone = { status: e.status, text: errorText(e) };
    renderGone();
    $("gone-title").focus();
  }

  function renderGone() {
    const missing = S.gone.status === 404;
    $("gone-title").textContent = missing ? t("This game is not here") : t("The game cannot be opened now");
    $("gone-text").textContent = S.gone.text;
    $("gone-retry").hidden = missing;
  }

  /** Leaves the game shown (it stays on the server, at its address) for the set-up of a new one. */
  function leaveGame() {
    clearTimeout(S.cpuTimer);
    cancelCountdown();
    S.game = null;
    setMode(S.mode === "coach" ? "coach" : "play");
  }

  function markMode(mode) {
    S.mode = mode;
    for (const b of document.querySelectorAll(".mode")) b.setAttribute("aria-current", b.dataset.mode === mode ? "page" : "false");
    document.body.dataset.mode = mode;
  }

  function setMode(mode) {
    markMode(mode);
    clearTimeout(S.cpuTimer);
    cancelCountdown();
    if (mode === "review") {
      $("review-back").hidden = true;
      showSection("review");
      return;
    }
    if (mode === "history") {
      showSection("history");
      loadHistory();
      return;
    }
    S.players = defaultPlayers(mode);
    renderPlayers(S.players);
    if (S.game && !S.game.over && !!S.game.coach === (mode === "coach")) {
      showSection("game");
      afterView(true); // the computer and the countdown go on
    } else showSection("setup");
  }

  // ---------- save and review ----------

  async function saveGame() {
    const g = S.game;
    if (!g) return;
    try {
      const data = await api("GET", "/api/games/" + encodeURIComponent(g.id) + "/save");
      const blob = new Blob([JSON.stringify(data, null, 1) + "\n"], { type: "application/json" });
      const url = URL.createObjectURL(blob);
      const a = el("a", { href: url, download: "pentadice-game.json" });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10000);
      announce(t("The game is saved to your downloads"));
    } catch (e) {
      showError(t(e.message));
    }
  }

  async function reviewGame() {
    const g = S.game;
    if (!g) return;
    showError("");
    try {
      const review = await api("GET", "/api/games/" + encodeURIComponent(g.id) + "/review");
      setMode("review");
      renderReview(review);
      $("review-title").focus();
    } catch (e) {
      showError(t(e.message));
    }
  }

  /** A save file chosen in ``input``: {bytes: its bytes, as they are}, or null (and a message) when it is too
   * large to be one. The bytes are not decoded here: the server reads them as `play --resume` reads a file
   * (strict UTF-8, a leading byte-order mark dropped) and says what is wrong with one that is not a save. */
  async function readSave(input) {
    const file = input.files[0];
    if (!file) return null;
    showError("");
    if (file.size > 1 << 20) {
      showError(t("The file is larger than 1 MB: not a saved pentadice game"));
      return null;
    }
    try {
      return { bytes: await file.arrayBuffer() };
    } catch (e) {
      showError(t("This file is not a saved pentadice game"));
      return null;
    }
  }

  /** The rule set named by a save the server has read (so it is UTF-8 JSON), or null. */
  function savedRules(bytes) {
    try {
      const save = JSON.parse(new TextDecoder("utf-8").decode(bytes));
      return save && typeof save.rules === "string" ? save.rules : null;
    } catch (e) {
      return null;
    }
  }

  /** The save file picked in the file input `id` (read and checked by readSave, or null), the input cleared
   * so that picking the same file again reads it again. */
  async function pickedSave(id) {
    const input = $(id);
    const file = await readSave(input);
    input.value = "";
    return file;
  }

  /** A saved game (from the terminal or this page) goes on here, with its own players, rules and dice. */
  async function resumeFile() {
    const file = await pickedSave("resume-file");
    if (!file) return;
    try {
      const game = await api("POST", "/api/games/resume", new RawJson(file.bytes));
      announce(t("A saved game goes on: {names}", { names: game.players.map((p) => p.name).join(", ") }));
      showGame(game, true); // its address, and it goes on
      focusMain();
    } catch (e) {
      showError(errorText(e));
      if (e.status === 503) refreshHealth();
    }
  }

  async function reviewFile() {
    const file = await pickedSave("review-file");
    if (!file) return;
    try {
      const review = await api("POST", "/api/review", new RawJson(file.bytes));
      renderReview(review, savedRules(file.bytes));
    } catch (e) {
      showError(t(e.message));
    }
  }

  function renderReview(review, rulesName) {
    S.lastReview = review;
    S.reviewRules = rulesName && S.rules.some((r) => r.name === rulesName) ? rulesName : null;
    const out = $("review-out");
    out.replaceChildren();
    if (rulesName && S.rules.some((r) => r.name === rulesName) && !S.game) $("rules").value = rulesName;
    for (const p of review.players || []) {
      const expert = p.decisions > 0 && p.mean_loss < EXPERT;
      const card = el("section", { cls: "player-review" });
      card.append(el("h3", { text: p.computer ? t("{name} (computer)", { name: p.name }) : p.name }));
      const dl = el("dl", { cls: "stats" });
      dl.append(el("dt", { text: t("Decisions") }), el("dd", { text: String(p.decisions) }));
      dl.append(el("dt", { text: t("Total loss") }), el("dd", { text: fmt(p.total_loss) }));
      dl.append(
        el("dt", { text: t("Mean loss per decision") }),
        el("dd", null, el("span", { text: fmt(p.mean_loss, 3) + " " }), el("span", { cls: expert ? "expert" : "not-expert", text: expert ? t("expert play (below 0.2)") : t("below 0.2 is expert play") })),
      );
      card.append(dl);
      const worst = (p.worst || []).filter((d) => d.loss > 5e-4);
      if (worst.length) {
        card.append(el("h4", { text: t("The worst decisions") }));
        const ol = el("ol", { cls: "worst" });
        for (const d of worst) ol.append(el("li", { text: decisionText(d) }));
        card.append(ol);
      } else if (p.decisions) {
        card.append(el("p", { cls: "good", text: t("Every decision was the best one.") }));
      }
      out.append(card);
    }
    const decisions = review.decisions || [];
    if (decisions.length) {
      const details = el("details", { cls: "decisions" }, el("summary", { text: t("Every decision ({n})", { n: decisions.length }) }));
      const wrap = el("div", { cls: "table-wrap" });
      const table = el("table", { cls: "opts review-table" });
      table.append(
        el(
          "thead",
          null,
          el(
            "tr",
            null,
            ...REVIEW_COLUMNS.map((h) => el("th", { scope: "col", text: t(h) })),
          ),
        ),
      );
      const body = el("tbody");
      for (const d of decisions) {
        body.append(
          el(
            "tr",
            { cls: d.loss > 5e-4 ? "lost" : "" },
            el("td", { text: String(d.player) }),
            el("td", { cls: "num", text: String(d.turn) }),
            el("td", { text: diceText(d.dice || []) + " · " + rollWords(d.rolls_left) }),
            el("td", { text: optionText(d.chosen) }),
            el("td", { text: optionText(d.best) }),
            el("td", { cls: "num", text: fmtLoss(d.loss) }),
          ),
        );
      }
      table.append(body);
      wrap.append(table);
      details.append(wrap);
      out.append(details);
    }
    if (!(review.players || []).length) out.append(el("p", { text: t("No decisions to review") }));
  }

  function rollWords(rollsLeft) {
    const rolls = currentRules() ? currentRules().rolls : 3;
    return t("roll {n}", { n: rolls - Number(rollsLeft) });
  }

  function decisionText(d) {
    return t("Turn {turn}, dice {dice} ({roll}): {chosen} instead of {best}, loss {loss}", {
      turn: d.turn,
      dice: diceText(d.dice || []),
      roll: rollWords(d.rolls_left),
      chosen: optionText(d.chosen),
      best: optionText(d.best),
      loss: fmtLoss(d.loss),
    });
  }

  // ---------- history ----------

  /** A moment from the server (ISO 8601, UTC) in the browser's locale and time zone. */
  function dateText(iso) {
    const d = new Date(iso);
    if (Number.isNaN(d.getTime())) return String(iso || "");
    return d.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
  }

  function rulesTitle(name) {
    return t(currentRulesByName(name).title || name);
  }

  function lossText(x) {
    return isNumber(x) ? fmtLoss(x) : "–";
  }

  /** The history view: the finished games (the latest first, HISTORY_PAGE at a time) and the players'
   * statistics, asked of the server each time the view shows. */
  async function loadHistory() {
    const hist = { games: [], total: 0, players: [], player: null, loading: true };
    S.hist = hist;
    showError("");
    renderHistory();
    try {
      const [games, players] = await Promise.all([
        api("GET", "/api/history?limit=" + HISTORY_PAGE + "&offset=0"),
        api("GET", "/api/players"),
      ]);
      if (S.hist !== hist) return;
      hist.games = games.games || [];
      hist.total = games.total || 0;
      hist.players = players.players || [];
    } catch (e) {
      if (S.hist === hist) showError(t(e.message));
    }
    hist.loading = false;
    if (S.hist === hist) renderHistory();
  }

  async function moreHistory() {
    const hist = S.hist;
    if (!hist || hist.loading) return;
    hist.loading = true;
    $("history-more").disabled = true;
    try {
      const more = await api("GET", "/api/history?limit=" + HISTORY_PAGE + "&offset=" + hist.games.length);
      const known = new Set(hist.games.map((g) => g.id));
      hist.games.push(...(more.games || []).filter((g) => !known.has(g.id)));
      hist.total = more.total || hist.total;
    } catch (e) {
      showError(t(e.message));
    }
    hist.loading = false;
    if (S.hist === hist) renderHistory();
  }

  /** A table's header row: the columns' names, those of figures (``numeric``: their indices) to the right. */
  function headRow(table, columns, numeric = []) {
    const th = (h, i) => el("th", { scope: "col", cls: numeric.includes(i) ? "num" : null, text: t(h) });
    table.tHead.replaceChildren(el("tr", null, ...columns.map(th)));
  }

  function reviewButton(id, rules, date) {
    return el("button", {
      type: "button",
      cls: "small",
      text: t("Review"),
      "aria-label": t("Review the game of {date}", { date }),
      dataset: { game: id },
      on: { click: () => openReview(id, rules) },
    });
  }

  function renderHistory() {
    const hist = S.hist;
    const empty = !hist.loading && hist.total === 0 && !hist.games.length;
    $("history-empty").hidden = !empty;
    $("history-games").hidden = empty;
    $("history-players").hidden = empty || !hist.players.length;
    $("history-count").textContent = hist.loading ? t("Loading…") : t("Finished games: {n}", { n: hist.total });
    const games = $("games-table");
    headRow(games, HISTORY_COLUMNS);
    const body = games.tBodies[0];
    body.replaceChildren();
    for (const g of hist.games) {
      const date = dateText(g.finished);
      const who = el("td", { cls: "who" });
      for (const p of g.players || []) {
        const name = p.computer ? t("{name} (computer)", { name: p.name }) : p.name;
        who.append(
          el(
            "span",
            { cls: "who-one" + (p.winner ? " won" : "") },
            el("span", { cls: "who-name", text: name }),
            " ",
            el("span", { cls: "num", text: String(p.score) }),
          ),
          " ",
        );
      }
      const winners = g.winners || [];
      const winner = winners.length > 1 ? t("A tie: {names}", { names: winners.join(", ") }) : winners.join(", ");
      body.append(
        el(
          "tr",
          { dataset: { game: g.id } },
          el("td", { cls: "date", text: date }),
          el("td", { cls: "rules", text: rulesTitle(g.rules) }),
          who,
          el("td", { cls: "winner-cell", text: winner, dataset: { label: t("Winner") } }),
          el("td", { cls: "act" }, reviewButton(g.id, g.rules, date)),
        ),
      );
    }
    const more = $("history-more");
    more.hidden = hist.loading || hist.games.length >= hist.total;
    more.disabled = hist.loading;
    renderPlayerStats();
    renderPlayerDetail();
  }

  function renderPlayerStats() {
    const hist = S.hist;
    const table = $("players-table");
    headRow(table, PLAYER_COLUMNS, [2, 3, 4, 5, 6]);
    const body = table.tBodies[0];
    body.replaceChildren();
    for (const p of hist.players) {
      const chosen = hist.player && hist.player.name === p.name && hist.player.rules === p.rules;
      const name = el("button", {
        type: "button",
        cls: "link",
        "aria-pressed": String(!!chosen),
        "aria-label": t("Show the games of {name} ({rules})", { name: p.name, rules: rulesTitle(p.rules) }),
        on: { click: () => choosePlayer(p.name, p.rules) },
        text: p.name,
      });
      const nameCell = el("th", { scope: "row" }, name);
      if (p.computer) nameCell.append(" ", el("span", { cls: "tag", text: t("computer") }));
      const loss = el("td", { cls: "num", text: lossText(p.mean_loss), dataset: { label: t("Mean loss per decision") } });
      if (p.expert) loss.append(" ", el("span", { cls: "badge expert", text: t("expert") }));
      body.append(
        el(
          "tr",
          { cls: chosen ? "chosen" : "", dataset: { player: p.name, rules: p.rules } },
          nameCell,
          el("td", { cls: "rules", text: rulesTitle(p.rules) }),
          el("td", { cls: "num", text: String(p.games), dataset: { label: t("Games") } }),
          el("td", { cls: "num", text: String(p.wins), dataset: { label: t("Wins") } }),
          el("td", { cls: "num", text: fmt(p.mean_score, 1), dataset: { label: t("Mean score") } }),
          el("td", { cls: "num", text: String(p.best_score), dataset: { label: t("Best score") } }),
          loss,
        ),
      );
    }
  }

  /** A player of the statistics chosen: their games under that rule set, in the order played. */
  async function choosePlayer(name, rules) {
    const hist = S.hist;
    showError("");
    try {
      const data = await api("GET", "/api/players/" + encodeURIComponent(name) + "?rules=" + encodeURIComponent(rules));
      if (S.hist !== hist) return;
      hist.player = { name, rules, games: data.games || [], expert: data.expert_mean_loss ?? EXPERT };
      renderPlayerStats();
      renderPlayerDetail();
      $("player-title").focus();
    } catch (e) {
      showError(t(e.message));
    }
  }

  function renderPlayerDetail() {
    const chosen = S.hist && S.hist.player;
    $("player-detail").hidden = !chosen;
    if (!chosen) return;
    $("player-title").textContent = t("{name} under {rules}", { name: chosen.name, rules: rulesTitle(chosen.rules) });
    const box = $("player-plot");
    box.replaceChildren(lossPlot(chosen, box.clientWidth));
    const table = $("player-games");
    headRow(table, SERIES_COLUMNS, [0, 2, 4]);
    const body = table.tBodies[0];
    body.replaceChildren();
    const games = chosen.games.map((g, i) => ({ ...g, n: i + 1 })).reverse(); // the latest first
    for (const g of games) {
      const date = dateText(g.finished);
      body.append(
        el(
          "tr",
          { dataset: { game: g.id } },
          el("td", { cls: "num", text: String(g.n), dataset: { label: t("Game") } }),
          el("td", { cls: "date", text: date }),
          el("td", { cls: "num", text: String(g.score), dataset: { label: t("Score") } }),
          el("td", { cls: "result", text: g.winner ? t("won") : t("lost") }),
          el("td", { cls: "num", text: lossText(g.mean_loss), dataset: { label: t("Mean loss per decision") } }),
          el("td", { cls: "act" }, reviewButton(g.id, g.rules, date)),
        ),
      );
    }
  }

  /** The smallest round number (1, 1.5, 2, 2.5, 3, 4, 5, 7.5 times a power of ten) at least ``v``. */
  function roundUp(v) {
    const mag = Math.pow(10, Math.floor(Math.log10(v)));
    for (const s of [1, 1.5, 2, 2.5, 3, 4, 5, 7.5, 10]) if (s * mag >= v - 1e-12) return s * mag;
    return 10 * mag;
  }

  function svgEl(tag, attrs, text) {
    const node = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
    if (text !== undefined) node.textContent = text;
    return node;
  }

  /** A player's mean loss per decision over their games, as an SVG drawn here (no library): the games in the
   * order played along, the loss up, the expert line at 0.2; each point says its game, loss and score. */
  function lossPlot(chosen, width) {
    const n = chosen.games.length;
    const points = chosen.games.map((g, i) => ({ k: i + 1, g })).filter((p) => isNumber(p.g.mean_loss));
    if (!points.length) return el("p", { cls: "note", text: t("No decision of these games was reviewed: nothing to plot.") });
    const expert = isNumber(chosen.expert) ? chosen.expert : EXPERT;
    const W = Math.max(300, Math.min(760, Math.round(width || 640)));
    const H = W < 480 ? 220 : 260;
    const [L, R, T, B] = [58, 14, 14, 46];
    const top = roundUp(Math.max(expert * 1.5, ...points.map((p) => p.g.mean_loss)));
    const pad = 12; // the first and the last points off the axes
    const x = (k) => (n === 1 ? L + (W - L - R) / 2 : L + pad + ((k - 1) * (W - L - R - 2 * pad)) / (n - 1));
    const y = (v) => T + (H - T - B) * (1 - v / top);
    const svg = svgEl("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: "loss-plot", role: "img", "aria-labelledby": "plot-title", "aria-describedby": "plot-desc" });
    const last = points[points.length - 1].g;
    svg.append(
      svgEl("title", { id: "plot-title" }, t("Mean loss per decision of {name}, game by game", { name: chosen.name })),
      svgEl(
        "desc",
        { id: "plot-desc" },
        t("{n} games; the latest: {loss} points per decision; below {expert} is expert play.", { n, loss: fmtLoss(last.mean_loss), expert: fmt(expert, 1) }),
      ),
    );
    for (let i = 0; i <= 4; i++) {
      const v = (top * i) / 4;
      svg.append(svgEl("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), class: i ? "grid" : "axis" }));
      svg.append(svgEl("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end", class: "tick" }, fmt(v, 2)));
    }
    svg.append(svgEl("line", { x1: L, x2: L, y1: T, y2: y(0), class: "axis" }));
    const step = Math.max(1, Math.ceil((n - 1) / Math.max(1, Math.floor((W - L - R) / 60))));
    const ticks = [];
    for (let k = 1; k <= n; k += step) ticks.push(k);
    if (ticks[ticks.length - 1] !== n && x(n) - x(ticks[ticks.length - 1]) >= 24) ticks.push(n);
    for (const k of ticks) {
      svg.append(svgEl("line", { x1: x(k), x2: x(k), y1: y(0), y2: y(0) + 4, class: "axis" }));
      svg.append(svgEl("text", { x: x(k), y: y(0) + 17, "text-anchor": "middle", class: "tick" }, String(k)));
    }
    svg.append(svgEl("line", { x1: L, x2: W - R, y1: y(expert), y2: y(expert), class: "expert-line" }));
    svg.append(svgEl("text", { x: W - R - 4, y: y(expert) - 5, "text-anchor": "end", class: "expert-label" }, t("expert play below {v}", { v: fmt(expert, 1) })));
    svg.append(svgEl("polyline", { points: points.map((p) => `${x(p.k)},${y(p.g.mean_loss)}`).join(" "), class: "series" }));
    for (const p of points) {
      const dot = svgEl("circle", { cx: x(p.k), cy: y(p.g.mean_loss), r: 4, class: "dot" + (p.g.mean_loss < expert ? " under" : "") });
      dot.append(
        svgEl("title", null, t("Game {n}: {loss} points per decision, score {score}", { n: p.k, loss: fmtLoss(p.g.mean_loss), score: p.g.score })),
      );
      svg.append(dot);
    }
    svg.append(svgEl("text", { x: L + (W - L - R) / 2, y: H - 8, "text-anchor": "middle", class: "axis-label" }, t("Games, in the order played")));
    svg.append(
      svgEl("text", { x: 0, y: 0, transform: `translate(14 ${T + (H - T - B) / 2}) rotate(-90)`, "text-anchor": "middle", class: "axis-label" }, t("Mean loss per decision")),
    );
    return svg;
  }

  /** A finished game of the history in the review view (GET /api/games/{id}/review), with a way back. */
  async function openReview(id, rules) {
    showError("");
    try {
      const review = await api("GET", "/api/games/" + encodeURIComponent(id) + "/review");
      setMode("review");
      $("review-back").hidden = false;
      renderReview(review, rules);
      $("review-title").focus();
    } catch (e) {
      showError(errorText(e));
    }
  }

  // ---------- keyboard ----------

  function onKey(ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const tag = (ev.target && ev.target.tagName) || "";
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") return;
    const k = ev.key;
    if (k === "?") {
      toggleHelp();
      ev.preventDefault();
      return;
    }
    if (k === "Escape") {
      if (!$("help").hidden) toggleHelp(false);
      stopCountdown();
      return;
    }
    const g = S.game;
    if (!g || $("game").hidden || g.over) return;
    if (k === "Enter" && (ev.target === document.body || ev.target === document.documentElement)) {
      // Nothing in focus: Enter rolls, or fills the box the countdown shows.
      if (S.countdown && S.countdown.box) scoreBox(S.countdown.box);
      else if (!g.coach) roll();
      ev.preventDefault();
    } else if ((k === "r" || k === "R") && !ev.shiftKey) {
      if (!g.coach) roll();
      ev.preventDefault();
    } else if (k >= "1" && k <= "6" && g.dice && Number(k) <= g.dice.length) {
      toggleHold(Number(k) - 1);
      ev.preventDefault();
    } else if (k === "B" && ev.shiftKey) {
      if (!g.coach) playBest();
      ev.preventDefault();
    } else if (k.length === 1 && !ev.shiftKey) {
      const i = BOX_KEYS.indexOf(k.toLowerCase());
      const rs = currentRules();
      if (i >= 0 && rs && i < rs.boxes.length) {
        scoreBox(rs.boxes[i].id);
        ev.preventDefault();
      }
    }
  }

  function toggleHelp(show) {
    const help = $("help");
    const open = show === undefined ? help.hidden : show;
    help.hidden = !open;
    $("help-button").setAttribute("aria-expanded", String(open));
  }

  // ---------- start ----------

  async function init() {
    document.addEventListener("keydown", onKey);
    document.addEventListener("visibilitychange", onVisibility);
    for (const b of document.querySelectorAll(".mode")) b.addEventListener("click", () => setMode(b.dataset.mode));
    $("lang").addEventListener("change", () => loadMessages($("lang").value));
    $("help-button").addEventListener("click", () => toggleHelp());
    $("setup-form").addEventListener("submit", startGame);
    $("add-player").addEventListener("click", () => {
      if (S.players.length >= 6) return;
      const n = S.players.length + 1;
      S.players.push({ name: t("Player {n}", { n }), computer: false, strategy: "optimal" });
      renderPlayers(S.players);
      $("player-list").lastElementChild.querySelector("input").focus();
    });
    $("roll").addEventListener("click", roll);
    $("best").addEventListener("click", playBest);
    $("undo").addEventListener("click", undo);
    $("pad-clear").addEventListener("click", () => {
      S.pad = [];
      renderPad();
    });
    $("pad-enter").addEventListener("click", enterRoll);
    $("countdown-stop").addEventListener("click", stopCountdown);
    $("save").addEventListener("click", saveGame);
    $("review-game").addEventListener("click", reviewGame);
    $("new-game").addEventListener("click", leaveGame);
    $("gone-new").addEventListener("click", leaveGame);
    $("gone-retry").addEventListener("click", route);
    $("gone-history").addEventListener("click", () => setMode("history"));
    $("review-back").addEventListener("click", () => setMode("history"));
    $("history-more").addEventListener("click", moreHistory);
    window.addEventListener("popstate", route);
    window.addEventListener("resize", () => {
      clearTimeout(S.plotTimer);
      S.plotTimer = setTimeout(() => S.hist && S.hist.player && !$("history").hidden && renderPlayerDetail(), 200);
    });
    $("review-file").addEventListener("change", reviewFile);
    $("resume-file").addEventListener("change", resumeFile);
    $("hints").addEventListener("change", () => S.game && render());
    $("rules").addEventListener("change", () => {
      updateWinOptions();
      renderPrep();
    });
    $("review-title").setAttribute("tabindex", "-1");

    try {
      const data = await api("GET", "/api/rules");
      S.rules = data.rules || [];
    } catch (e) {
      showError(t(e.message));
    }
    const select = $("rules");
    for (const r of S.rules) select.append(el("option", { value: r.name, text: t(r.title || r.name), dataset: { title: r.title || r.name } }));
    await refreshHealth();
    await loadMessages(initialLang());
    if (GAME_PATH.test(location.pathname) || location.pathname === HISTORY_PATH) {
      markMode("play");
      await route();
    } else setMode(["play", "coach", "review", "history"].includes(params.get("mode")) ? params.get("mode") : "play");
    document.body.dataset.ready = "1";
  }

  document.addEventListener("DOMContentLoaded", init);
})();
