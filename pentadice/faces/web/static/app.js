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
  const BOX_KEYS = "abcdefghijklmnopqstu"; // box shortcuts, in sheet order (no r: it rolls): one per box of the largest sheet (rules.MAX_BOXES)
  const EXPERT = 0.2; // mean loss per decision below which play is expert
  const HISTORY_PAGE = 20; // finished games asked for at a time
  const HISTORY_COLUMNS = [N_("Date"), N_("Rules"), N_("Players and scores"), N_("Winner"), N_("Review")];
  const PLAYER_COLUMNS = [N_("Player"), N_("Rules"), N_("Games"), N_("Wins"), N_("Mean score"), N_("Best score"), N_("Points lost per decision")];
  const SERIES_COLUMNS = [N_("Game"), N_("Date"), N_("Score"), N_("Result"), N_("Points lost per decision"), N_("Review")];
  // A game has its own address, /games/{id}: a reload, a second tab or a bookmark opens it from the server
  // (GET /api/games/{id}) and goes on with it. The id in the path is the game's public address; a seat's secret,
  // when shared games have them, will travel in a header or a cookie, never in a URL's path or query.
  const GAME_PATH = /^\/games\/([A-Za-z0-9_-]{1,64})$/;
  const HISTORY_PATH = "/history";
  // What the server is preparing (GET /api/health's "building", a 503's "preparing"), said in players' words: by
  // the table's name ("table"), not by the server's "what" ("the win player's theta tables": its own words, for
  // its log and the terminal). Another text from the server is shown as it comes.
  const PREPARING_WORDS = {
    values: N_("the best moves"),
    moments: N_("how far the scores spread"),
    chances: N_("the chances of winning"),
    win: N_("the computer that plays to win"),
    "win-end": N_("the computer that plays to win, for the last turns"),
  };

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
    live: null, // a shared game's EventSource: {id, source}
    liveVersion: null, // the latest version its events announced
  };

  // ---------- seats of shared games ----------
  // A shared game has a secret per human seat. This device keeps those it holds in localStorage, under
  // "pentadice.seats.<game id>" = {"you": i, "secrets": {"<i>": "<secret>"}}, and proves a seat with the request
  // header X-Pentadice-Seat only: never in a URL's path or query, never in a Referer. A seat's link carries the
  // secret in its fragment (#seat=...), which no request sends; it is read, kept and removed from the address
  // here, before the page fetches anything.
  const SEATS_KEY = "pentadice.seats.";
  const GAME_API = /^\/api\/games\/([A-Za-z0-9_-]{1,64})(?:[/?]|$)/;

  function seatsOf(id) {
    try {
      const kept = JSON.parse(localStorage.getItem(SEATS_KEY + id) || "null");
      if (kept && typeof kept === "object" && kept.secrets && typeof kept.secrets === "object") return kept;
    } catch (e) {
      // storage off or spoilt: no seat
    }
    return null;
  }

  function keepSeats(id, seats) {
    try {
      localStorage.setItem(SEATS_KEY + id, JSON.stringify(seats));
    } catch (e) {
      // storage off: the seat holds for this page only (S.seatMemory)
    }
    S.seatMemory = { id, seats };
  }

  /** The secret this device sends for the game of an API path: its own seat's ("you"), or the one a link gave
   * before the server said which seat it is (``pending``); null for another path or a game it holds no seat of. */
  function seatSecretFor(path) {
    const m = GAME_API.exec(path);
    if (!m) return null;
    const seats = seatsOf(m[1]) || (S.seatMemory && S.seatMemory.id === m[1] ? S.seatMemory.seats : null);
    if (!seats) return null;
    const own = seats.you !== null && seats.you !== undefined ? seats.secrets[String(seats.you)] : null;
    return typeof own === "string" ? own : typeof seats.pending === "string" ? seats.pending : null;
  }

  /** A seat's link opened (/games/<id>#seat=<secret>): the secret kept for that game, the fragment removed. */
  function takeSeatLink() {
    const m = /^\/games\/([A-Za-z0-9_-]{1,64})$/.exec(location.pathname);
    const found = /^#seat=([A-Za-z0-9_-]{1,128})$/.exec(location.hash);
    if (location.hash.startsWith("#seat=")) history.replaceState(history.state, "", location.pathname + location.search);
    if (!m || !found) return;
    const seats = seatsOf(m[1]) || { you: null, secrets: {} };
    seats.pending = found[1];
    seats.you = null; // the server says which seat the link holds (the view's "you")
    keepSeats(m[1], seats);
  }
  takeSeatLink();

  // ---------- colours ----------
  // Light or dark from the system (prefers-color-scheme), unless the switch in the header says which; the choice
  // is kept in localStorage ("pentadice.theme": auto, light or dark). style.css holds the two schemes' colours.

  function keptTheme() {
    try {
      const kept = localStorage.getItem("pentadice.theme");
      if (kept === "light" || kept === "dark") return kept;
    } catch (e) {
      // storage may be off
    }
    return "auto";
  }

  function applyTheme(theme) {
    if (theme === "light" || theme === "dark") document.documentElement.dataset.theme = theme;
    else delete document.documentElement.dataset.theme;
  }
  applyTheme(keptTheme());

  function chooseTheme(theme) {
    applyTheme(theme);
    try {
      if (theme === "light" || theme === "dark") localStorage.setItem("pentadice.theme", theme);
      else localStorage.removeItem("pentadice.theme");
    } catch (e) {
      // storage may be off: the choice holds for this page
    }
  }

  /** A view of a shared game: the seat it says this device holds is kept as "you" (a link's secret moved to it). */
  function noteSeat(view) {
    if (!view || !view.shared || !view.id) return;
    const seats = seatsOf(view.id) || (S.seatMemory && S.seatMemory.id === view.id ? S.seatMemory.seats : null);
    if (!seats) return;
    if (view.you !== null && view.you !== undefined && typeof seats.pending === "string") {
      seats.secrets[String(view.you)] = seats.pending;
      delete seats.pending;
      seats.you = view.you;
      keepSeats(view.id, seats);
    } else if (view.you !== null && view.you !== undefined && seats.you !== view.you) {
      seats.you = view.you;
      keepSeats(view.id, seats);
    }
  }

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

  /** Whether a player's name is the page's default "You" (in either language): the page then speaks to them
   * in the second person ("Your turn", "You roll"), never "You's turn" or "You rolls". */
  function isYou(name) {
    const n = String(name || "").trim().toLowerCase();
    return n === "you" || n === t("You").toLowerCase() || n === "anda";
  }

  /** A player's name as shown: the default "You" in the page's language (a game started in English and shown in
   * Indonesian says "Anda"); any other name as it is. */
  function shownName(name) {
    return isYou(name) ? t("You") : String(name);
  }

  /** A sentence about a player: ``youMsg`` (second person) for the default "You", else ``nameMsg`` with {name}. */
  function about(name, youMsg, nameMsg, values) {
    return isYou(name) ? t(youMsg, values) : t(nameMsg, Object.assign({ name }, values));
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
    text = text ? String(text) : "";
    e.textContent = text.charAt(0).toUpperCase() + text.slice(1);
    e.hidden = !text;
  }

  function applyTexts() {
    document.documentElement.lang = S.lang;
    for (const node of document.querySelectorAll("[data-t]")) node.textContent = t(node.dataset.t);
    for (const node of document.querySelectorAll("[data-t-aria]")) node.setAttribute("aria-label", t(node.dataset.tAria));
    for (const option of $("rules").options) if (option.dataset.title) option.textContent = t(option.dataset.title);
    document.title = t("pentadice: Penta in the browser");
    renderFoot();
    renderSound();
    renderOffline();
  }

  /** The footer names the rule set of the game shown (or chosen at set-up): Yatzy's game is not Penta's. */
  function renderFoot() {
    const rs = currentRules();
    const text = rs ? t("pentadice: exact optimal strategy for {rules}", { rules: t(rs.title || rs.name) }) : t("pentadice: exact optimal strategy");
    if ($("foot-text").textContent !== text) $("foot-text").textContent = text;
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
    renameDefaults();
    renderPlayers();
    renderPrep();
    if (S.game) render();
    if (S.lastReview) renderReview(S.lastReview, S.reviewRules, S.reviewFinal);
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
    // The offline app (offline.js) answers what it can without a server: its answer is api()'s.
    if (window.PentaOffline && window.PentaOffline.handles(method, path)) return window.PentaOffline.api(method, path, body);
    const opts = { method, headers: { Accept: "application/json" } };
    const secret = seatSecretFor(path);
    if (secret) opts.headers["X-Pentadice-Seat"] = secret;
    if (body !== undefined) {
      opts.headers["Content-Type"] = "application/json";
      opts.body = body instanceof RawJson ? body.text : JSON.stringify(body);
    }
    let response = null;
    try {
      response = await fetch(path, opts);
    } catch (e) {
      response = null;
    }
    if (!response || response.headers.get("x-pentadice-offline")) {
      // No server (the network is off, or the service worker says the server is gone): offline.js answers what
      // it can at once (a new solo or coach game), not after its next look at the server.
      const off = window.PentaOffline;
      if (off && typeof off.wentOffline === "function") {
        off.wentOffline();
        if (off.handles(method, path)) return off.api(method, path, body);
      }
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

  /** Whether this screen moves now: a human player's turn, and in a shared game the seat this device holds. */
  function humanTurn() {
    const p = me();
    return !!p && !p.computer && (!S.game.shared || S.game.you === S.game.current);
  }

  /** A shared game's turn of a human seat another device holds (this screen watches it). */
  function othersTurn() {
    const p = me();
    return !!p && !p.computer && !!S.game.shared && S.game.you !== S.game.current;
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
    renderSeat();
    renderThinking();
    renderChances();
    renderDice();
    renderHoldHint();
    renderPad();
    renderActions();
    renderNote();
    renderAdvice();
    renderSheet();
    renderWinner();
    renderFoot();
    renderShare();
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
    if (othersTurn()) return "waiting";
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
    else text = about(p.name, N_("Your turn {turn} of {turns}"), N_("{name}'s turn {turn} of {turns}"), { turn: g.turn, turns: rs.boxes.length });
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
      const what = preparingWhat(preparing);
      if (what) box.title = what;
      else box.removeAttribute("title");
      return;
    }
    box.removeAttribute("title");
    if (!known) {
      box.append(el("span", { cls: "pending", text: t("updating…") }));
      return;
    }
    g.players.forEach((p, i) => {
      if (i) box.append(", ");
      box.append(el("span", { cls: "chance", dataset: { player: String(i) }, text: shownName(p.name) + " " + percentText(known.values[i]) }));
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
    // A coach game shows two rows of dice: these (the dice rolled, to hold) and the faces to tap; each says which.
    const rowLabel = $("dice-label");
    rowLabel.hidden = !g.coach || !g.dice;
    rowLabel.textContent = g.coach && g.dice ? (g.rolls_left > 0 && humanTurn() ? t("Your dice: tap the ones you keep") : t("Your dice")) : "";
    // A new roll of this game (not a redraw): the dice rolled tumble (never under prefers-reduced-motion) and,
    // with the sound on, rattle.
    const rollKey = g.dice ? [g.id, g.current, g.turn, g.rolls_left].join(":") : null;
    const fresh = !!rollKey && S.diceKey !== rollKey && S.diceGame === g.id;
    S.diceKey = rollKey;
    S.diceGame = g.id;
    const tumble = fresh && !reducedMotion();
    if (fresh) playSound("roll");
    dice.forEach((face, i) => {
      const held = S.held.has(i);
      let label;
      if (!face) label = t("Die {n}: not rolled", { n: i + 1 });
      else if (held) label = t("Die {n}: {face}, held", { n: i + 1, face: t(FACE_WORDS[face]) });
      else label = t("Die {n}: {face}", { n: i + 1, face: t(FACE_WORDS[face]) });
      if (keep.has(i)) label += ", " + t("the advisor keeps it");
      const b = el("button", {
        type: "button",
        cls: "die" + (held ? " held" : "") + (keep.has(i) ? " advised" : "") + (face ? "" : " blank") + (tumble && !held ? " rolling" : ""),
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

  /** Play (not coach): the first turns of a game, after a roll with nothing held, a line under the dice says
   * that they are tapped to be kept; it goes once the player has held a die in this game. */
  function renderHoldHint() {
    const g = S.game;
    const p = me();
    const show =
      !g.coach && !g.over && humanTurn() && !!g.dice && g.rolls_left > 0 && !S.busy && !S.held.size && S.holdHinted !== g.id && !!p && p.turns < 2;
    $("hold-hint").hidden = !show;
  }

  function renderPad() {
    const g = S.game;
    const pad = $("pad");
    const need = padNeeded();
    pad.hidden = !need;
    if (!need) return;
    const rollNo = rollNumber();
    // Right after a roll nothing is held yet: the prompt says to hold the dice kept first; once some are held,
    // it asks for the faces of the dice rolled again only (the held ones are kept).
    let prompt;
    if (!g.dice) prompt = t("Roll {n}: tap the faces of the {k} dice rolled", { n: rollNo, k: need });
    else if (!S.held.size)
      prompt = t("Roll {n}: first tap the dice you keep (above), then the faces of the dice you roll again", { n: rollNo });
    else if (need === 1) prompt = t("Roll {n}: {kept} kept; tap the face of the die rolled again", { n: rollNo, kept: diceText(heldFaces()) });
    else prompt = t("Roll {n}: {kept} kept; tap the faces of the {k} dice rolled again", { n: rollNo, kept: diceText(heldFaces()), k: need });
    $("pad-prompt").textContent = prompt;
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
    $("undo").disabled = (!g.can_undo && !S.pad.length) || S.busy;
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
    const fixed = (currentRules() || {}).joker_boxes || []; // the boxes a joker fills at their points
    const boxes = fixed.map((f) => boxName(f.box)).join(", ");
    const listed = fixed.map((f) => t("{box} {points}", { box: boxName(f.box), points: f.points })).join(", ");
    let template;
    if (english.endsWith("score in full; any open box")) template = N_("Joker: {why} and {name} filled: {boxes} score in full; any open box");
    else if (english.endsWith("filled: any open box")) template = N_("Joker: {why} and {name} filled: any open box");
    else if (english.endsWith("so it must take the roll")) template = N_("Joker: {why}; the {name} box is open, so it must take the roll");
    else if (english.endsWith("takes it at 0")) template = N_("Joker: {why}; {name} and the whole lower section are filled, so an open upper box takes it at 0");
    else if (english.endsWith("so any open lower box takes it")) template = N_("Joker: {why}; {name} is filled, so any open lower box takes it");
    else if (english.includes("so any open lower box takes it (")) template = N_("Joker: {why}; {name} is filled, so any open lower box takes it ({fixed})");
    else return t(english);
    return t(template, { why, name, boxes, fixed: listed });
  }

  /** Why the advisor's best choice beats the one that scores most this turn (the advice's ``why``, as
   * `pentadice advise` prints it after "Why:"), said short in the page's language from its figures: what the
   * best choice gives up this turn, what it leaves for later, and what that is worth. "" without a why (the best
   * choice is the one that scores most this turn, or the advice came from the offline advisor). */
  function whyText(adv) {
    const why = adv && adv.why;
    const best = why && why.best, other = why && why.obvious;
    if (!best || !other || !best.option || !other.option || !isNumber(why.gain)) return "";
    const doing = (o) =>
      o.option.action === "score"
        ? t("scoring {box}", { box: boxName(o.option.box) })
        : o.option.keep && o.option.keep.length
          ? t("keeping {dice}", { dice: diceText(o.option.keep) })
          : t("rerolling all the dice");
    const scores = best.option.action === "score" && other.option.action === "score";
    const less = other.points_this_turn - best.points_this_turn;
    const later = best.points_later - other.points_later;
    const text = t("{doing} scores {less} less this turn than {other}, but leaves {later} more for later: {gain} in expected final score", {
      doing: doing(best),
      less: fmt(less, scores ? 0 : 1),
      other: doing(other),
      later: fmt(later, 1),
      gain: (why.gain >= 0 ? "+" : "−") + fmt(Math.abs(why.gain), 2),
    });
    return text.charAt(0).toUpperCase() + text.slice(1);
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
    const why = whyText(adv);
    if (why) box.append(el("p", { cls: "why" }, el("strong", { text: t("Why:") + " " }), why + "."));
    const bb = bestBox(adv);
    if (bb && adv.best.action === "keep") {
      box.append(el("p", { text: t("Best box if you score now: {option} (expected {v})", { option: optionText(bb), v: fmt(bb.value) }) }));
    }
    if (g.rolls_left > 0 && S.held.size && !S.holdsCarried) {
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
    const banner = $("over-banner");
    if (!g.over) {
      banner.hidden = true;
      return;
    }
    const winners = g.winners || [];
    const totals = g.players.map((p) => p.totals.total);
    const top = Math.max(...totals);
    banner.hidden = false;
    w.textContent =
      winners.length > 1
        ? t("A tie: {names} with {total} points", { names: winners.map(shownName).join(", "), total: top })
        : g.players.length === 1
          ? t("Game over: {total} points", { total: top })
          : about(winners[0], N_("You win with {total} points"), N_("{name} wins with {total} points"), { total: top });
    // Every player's final score, highest first (one player: the line says it).
    const list = $("over-scores");
    list.hidden = g.players.length < 2;
    list.replaceChildren();
    if (list.hidden) return;
    const order = g.players.map((p, i) => i).sort((a, b) => totals[b] - totals[a] || a - b);
    for (const i of order) {
      const p = g.players[i];
      const won = winners.includes(p.name);
      const name = p.computer ? t("{name} (computer)", { name: shownName(p.name) }) : shownName(p.name);
      const li = el("li", { cls: won ? "won" : "", dataset: { player: String(i) } }, el("span", { cls: "who-name", text: name }), " ", el("span", { cls: "num", text: String(totals[i]) }));
      if (won) li.append(" ", el("span", { cls: "badge winner-badge", text: t("winner") }));
      list.append(li);
    }
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
      th.append(el("span", { cls: "name", text: shownName(p.name) }));
      if (p.computer) th.append(el("span", { cls: "tag", text: p.strategy === "win" ? t("computer, plays to win") : t("computer") }));
      hr.append(th);
    });
    if (showHints) hr.append(el("th", { scope: "col", cls: "hint", text: t("Expected / loss") }));
    head.append(hr);

    const sumRow = (label, key, cls) => {
      const tr = el("tr", { cls: "sum " + (cls || "") }, el("th", { scope: "row", text: label }));
      g.players.forEach((p, i) => {
        const td = el("td", { cls: "num" + (i === g.current ? " current" : ""), text: String(p.totals[key]) });
        const need = key === "upper_bonus" ? bonusNeed(rs, p) : 0;
        if (need > 0) {
          // The upper bonus not yet reached, with upper boxes still open: the points it still needs.
          td.replaceChildren(el("span", { cls: "bonus-need", text: t("{n} to go", { n: need }) }));
          td.title = t("{n} more points in the upper section for the bonus", { n: need });
          td.dataset.need = String(need);
        }
        tr.append(td);
      });
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
        // What a box would score shows only to the player who moves, on the screen they move from: a computer's
        // column (or another device's) never looks filled while its dice are out.
        if (filled !== undefined && !(addable && human)) {
          td.textContent = String(filled);
          td.classList.add("filled");
        } else if (i === g.current && g.dice && g.legal && human) {
          const pts = g.legal[box.id];
          if (pts === undefined) {
            td.append(el("span", { cls: "closed", text: "–", title: t("not allowed now") }));
          } else {
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
            if (cd && cd.box === box.id) td.append(el("span", { id: "box-countdown", cls: "cd-badge", "aria-hidden": "true" }));
          }
        } else td.classList.add("empty");
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

  // ---------- shared games ----------

  /** The line of a shared game under the status: the seat this device holds, or that it watches. */
  function renderSeat() {
    const g = S.game;
    const line = $("seat-line");
    line.hidden = !g.shared;
    if (!g.shared) return;
    const mine = g.you !== null && g.you !== undefined ? g.players[g.you] : null;
    let text = mine
      ? about(mine.name, N_("This device holds your seat"), N_("This device holds {name}'s seat"))
      : t("This device watches the game");
    if (!g.over && othersTurn()) text += " · " + t("{name} moves on their own device", { name: me().name });
    if (S.liveDown && !g.over) text += " · " + t("Reconnecting to the game…");
    line.replaceChildren(text);
    line.dataset.you = mine ? String(g.you) : "";
    line.dataset.live = S.liveDown ? "down" : "up";
  }

  /** The other human seats of a shared game whose secrets this device holds (the host's: it shares them). */
  function shareSeats(g) {
    const seats = g && g.shared ? seatsOf(g.id) : null;
    return seats
      ? Object.keys(seats.secrets)
          .map(Number)
          .filter((i) => i !== seats.you && g.players[i])
      : [];
  }

  /** Whether anything was played yet in a game: a roll out, or a box filled. */
  function begun(g) {
    return !!g.dice || g.players.some((p) => p.turns > 0 || Object.keys(p.sheet || {}).length > 0);
  }

  /** The host's panel of a shared game, under the seat line: each other human seat's link (its secret in the
   * fragment) and QR code. It is open while nothing is played yet (the others are joining), then folds once, at
   * the game's first move, to its one line (the dice come up); the host opens or folds it at will meanwhile. */
  function renderShare() {
    const g = S.game;
    const seats = g.shared ? seatsOf(g.id) : null;
    const others = shareSeats(g);
    const panel = $("share");
    panel.hidden = !others.length || !!g.over;
    if (panel.hidden) return;
    const started = begun(g);
    if (S.shareFor !== g.id) {
      S.shareFor = g.id;
      S.shareBegun = started;
      panel.open = !started;
    } else if (!S.shareBegun && started) {
      S.shareBegun = true;
      if (S.shareTouched !== g.id) panel.open = false;
    }
    renderLocalOnly($("share-local"));
    const list = $("share-seats");
    const key = g.id + ":" + others.join(",") + ":" + S.lang + ":" + shareBase();
    if (list.dataset.key === key) return;
    list.dataset.key = key;
    list.replaceChildren();
    for (const i of others) {
      const link = shareBase() + "/games/" + encodeURIComponent(g.id) + "#seat=" + seats.secrets[String(i)];
      const name = g.players[i].name;
      const field = el("input", { type: "text", readonly: true, cls: "share-link", "aria-label": t("{name}'s link", { name }) });
      field.value = link;
      const copy = el("button", {
        type: "button",
        cls: "small",
        text: t("Copy"),
        "aria-label": t("Copy {name}'s link", { name }),
        on: { click: () => copyLink(field, name) },
      });
      const qr = el("div", { cls: "qr", role: "img", "aria-label": t("QR code of {name}'s link", { name }) });
      list.append(el("li", { dataset: { seat: String(i) } }, el("strong", { text: name }), el("div", { cls: "share-row" }, field, copy), qr));
      drawQr(qr, link);
    }
  }

  /** The address other devices reach this server at: GET /api/health's "share_base" (the network address the
   * server listens on), else this page's origin. */
  function shareBase() {
    return networkBase() || location.origin;
  }

  /** GET /api/health's "share_base" where it is a URL's origin; "" when the server gives none (it listens on
   * loopback only) or is not known. */
  function networkBase() {
    const base = S.health && typeof S.health.share_base === "string" ? S.health.share_base : "";
    return /^https?:\/\/[^/\s]+$/.test(base) ? base : "";
  }

  /** Whether the seat links reach this computer only: the server listens on loopback only (its health says no
   * "share_base") and this page was opened at a loopback address (behind a proxy, the page's own origin is one
   * others reach). */
  function linksLocalOnly() {
    if (!S.health || networkBase()) return false;
    const host = location.hostname.replace(/^\[|\]$/g, "").toLowerCase();
    return host === "localhost" || host.endsWith(".localhost") || /^127\./.test(host) || host === "::1";
  }

  /** A message whose {placeholders} are commands, each shown as code (a text node and <code> elements only). */
  function withCode(msgid, codes) {
    return t(msgid)
      .split(/(\{\w+\})/)
      .filter((part) => part !== "")
      .map((part) => {
        const key = /^\{(\w+)\}$/.exec(part);
        return key && key[1] in codes ? el("code", { text: codes[key[1]] }) : document.createTextNode(part);
      });
  }

  /** What the host must do when the links reach this computer only: serve on the network (and with TLS, for a
   * phone's install and offline play). Written into ``box`` (hidden when the links reach the network). */
  function renderLocalOnly(box) {
    const local = linksLocalOnly();
    box.hidden = !local;
    const key = local ? S.lang : "";
    if (box.dataset.key === key) return;
    box.dataset.key = key;
    box.replaceChildren();
    if (!local) return;
    box.append(
      el("p", null, el("strong", { text: t("Only this computer can open these links: the server listens on this computer alone.") })),
      el("p", null, ...withCode(N_("For the other devices, start it with {command}: the links then use the network address it prints."), { command: "pentadice serve --host 0.0.0.0" })),
      el("p", null, ...withCode(N_("Add {tls} to install the page and play offline on a phone (a plain-HTTP page on the network offers neither)."), { tls: "--tls CERT KEY" })),
    );
  }

  /** The set-up's "Play together": when ticked, what comes after Start, and the note when the links would reach
   * this computer only. */
  function renderTogether() {
    const note = $("together-note");
    const on = $("shared").checked && !$("shared").disabled;
    note.hidden = !on;
    if (!on) {
      note.replaceChildren(); // nothing left to describe the check box with
      delete note.dataset.what;
      return;
    }
    const what = t("After Start, the top of the game shows each player's link and QR code.");
    if (note.dataset.what !== what) {
      note.dataset.what = what;
      note.replaceChildren(el("p", { cls: "note", text: what }), el("div", { cls: "warn share-local", id: "together-local" }));
      $("together-local").dataset.key = "-";
    }
    renderLocalOnly($("together-local"));
  }

  async function copyLink(field, name) {
    try {
      await navigator.clipboard.writeText(field.value);
    } catch (e) {
      field.select(); // no clipboard (not a secure context): selected, to copy by hand
      return;
    }
    announce(t("{name}'s link is copied", { name }));
  }

  /** A link's QR code (POST /api/qr: the link, its secret included, in the body only), drawn as SVG elements
   * built here from the server's SVG: only its shapes and their geometry are taken, never markup. */
  async function drawQr(box, link) {
    let text;
    try {
      const res = await fetch("/api/qr", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ text: link }) });
      if (!res.ok) return;
      text = await res.text();
    } catch (e) {
      return; // no code: the link is there to copy
    }
    const doc = new DOMParser().parseFromString(text, "image/svg+xml");
    const root = doc.documentElement;
    if (!root || root.localName !== "svg") return;
    const box0 = root.getAttribute("viewBox") || `0 0 ${root.getAttribute("width")} ${root.getAttribute("height")}`;
    const svg = svgEl("svg", { viewBox: box0, "aria-hidden": "true", focusable: "false" });
    const SAFE = ["d", "x", "y", "width", "height", "transform", "fill", "stroke", "stroke-width", "class"];
    const copy = (from, to) => {
      for (const node of from.children) {
        if (!["g", "path", "rect"].includes(node.localName)) continue;
        const shape = document.createElementNS(SVG, node.localName);
        for (const a of SAFE) if (node.hasAttribute(a)) shape.setAttribute(a, node.getAttribute(a));
        to.append(shape);
        if (node.localName === "g") copy(node, shape);
      }
    };
    copy(root, svg);
    box.replaceChildren(svg);
  }

  /** A shared game's live updates: GET /api/games/<id>/events (Server-Sent Events) says each new version; the
   * view is then asked for again (with this device's seat) and shown. EventSource reconnects by itself after a
   * network error; a stream closed for good (an answer that is not a stream: a 503, a server restarting behind a
   * proxy) is opened again here, 1 s later, then 2, 4, 8, at most 15 s apart. Meanwhile the seat line says
   * it is reconnecting. ``again``: open a new stream even for the game followed now. */
  function followLive(again) {
    const g = S.game;
    const want = g && g.shared ? g.id : null;
    if (!again && S.live && S.live.id === want) return;
    const tries = again && S.live && S.live.id === want ? S.live.tries : 0;
    const down = again && S.liveDown;
    stopLive();
    S.liveDown = down; // still down while the new stream connects
    if (!want || typeof EventSource !== "function") return;
    const source = new EventSource("/api/games/" + encodeURIComponent(want) + "/events");
    const live = { id: want, source, tries, timer: null };
    S.live = live;
    source.addEventListener("open", () => {
      if (S.live !== live) return;
      live.tries = 0;
      setLiveDown(false);
    });
    source.addEventListener("error", () => {
      if (S.live !== live) return;
      setLiveDown(true);
      if (source.readyState === 2 && !live.timer) {
        live.tries += 1;
        const wait = Math.min(15000, 1000 * 2 ** Math.min(live.tries - 1, 4));
        live.timer = setTimeout(() => S.live === live && followLive(true), wait);
      }
    });
    source.addEventListener("game", (ev) => {
      let data;
      try {
        data = JSON.parse(ev.data);
      } catch (e) {
        return;
      }
      if (!S.live || S.live.source !== source || !data || !isNumber(data.version)) return;
      S.liveVersion = data.version;
      catchUp();
    });
  }

  function stopLive() {
    if (S.live) {
      S.live.source.close();
      clearTimeout(S.live.timer);
    }
    S.live = null;
    S.liveVersion = null;
    S.liveDown = false;
  }

  function setLiveDown(down) {
    if (S.liveDown === down) return;
    S.liveDown = down;
    if (S.game && !$("game").hidden) renderSeat();
  }

  /** The network is back (or the page shown again): a closed stream opened again at once, the view caught up. */
  function liveAgain() {
    if (!S.live) return;
    if (S.live.source.readyState === 2) followLive(true);
    catchUp();
  }

  /** The view asked for again when the events said a version other than the one shown (not while a move of
   * this page is in flight: its answer brings the view, and the events are looked at again after it). */
  async function catchUp() {
    const g = S.game;
    if (!g || !S.live || S.live.id !== g.id || S.busy || S.catchingUp) return;
    if (S.liveVersion === null || S.liveVersion <= g.version) return;
    S.catchingUp = true;
    let again = false;
    let failed = false;
    try {
      const view = await api("GET", "/api/games/" + encodeURIComponent(g.id));
      if (S.game !== g || S.busy) return;
      S.game = view;
      noteSeat(view);
      clearTimeout(S.cpuTimer);
      const said = watchedMove(g, view);
      if (said) announce(said); // before the view: at the end, the winner is said after it
      afterView(sameTurn(g, view));
      again = S.liveVersion > view.version;
    } catch (e) {
      failed = true; // the network or the server is gone a moment: asked again in 2 s (the next move may be ours)
    } finally {
      S.catchingUp = false;
    }
    if (again) setTimeout(catchUp, 0);
    else if (failed) setTimeout(catchUp, 2000);
  }

  /** What another device's move did, in words, for the screen reader of a screen that watched it: a roll, a
   * box filled; and "Your turn" when the turn comes to this device. */
  function watchedMove(before, after) {
    const parts = [];
    const who = before.players[before.current];
    const sheetBefore = (who && who.sheet) || {};
    const sheetAfter = (after.players[before.current] || {}).sheet || {};
    const box = Object.keys(sheetAfter).find((b) => b !== "penta_bonus" && sheetAfter[b] !== sheetBefore[b]);
    if (box && who) {
      const scored = { box: boxName(box), points: sheetAfter[box] - (sheetBefore[box] || 0) };
      parts.push(
        scored.points === 1
          ? about(who.name, N_("You score {box}: {points} point"), N_("{name} scores {box}: {points} point"), scored)
          : about(who.name, N_("You score {box}: {points} points"), N_("{name} scores {box}: {points} points"), scored),
      );
    } else if (after.dice && after.current === before.current && JSON.stringify(after.dice) !== JSON.stringify(before.dice) && who) {
      parts.push(about(who.name, N_("You roll {dice}"), N_("{name} rolls {dice}"), { dice: diceText(after.dice) }));
    }
    if (!after.over && humanTurn() && !after.dice && (after.current !== before.current || before.dice)) parts.push(t("Your turn: roll the dice"));
    return parts.join(". ");
  }

  /** Whether two views are of the same turn and roll of one player (the holds made meanwhile stay). */
  function sameTurn(a, b) {
    return a.current === b.current && a.turn === b.turn && a.rolls_left === b.rolls_left && JSON.stringify(a.dice) === JSON.stringify(b.dice);
  }

  /** The points a player's upper section still needs for its bonus (0 once reached, or with no upper box open). */
  function bonusNeed(rs, p) {
    const open = rs.boxes.some((b) => b.section === "upper" && p.sheet[b.id] === undefined);
    if (!open || p.totals.upper_bonus > 0 || !isNumber(rs.upper_threshold)) return 0;
    return Math.max(0, rs.upper_threshold - p.totals.upper);
  }

  // ---------- motion and sound ----------

  /** The sound setting (off unless the player turned it on; kept in localStorage). */
  function soundOn() {
    try {
      return localStorage.getItem("pentadice.sound") === "on";
    } catch (e) {
      return false;
    }
  }

  function renderSound() {
    const b = $("sound-button");
    const on = soundOn();
    b.setAttribute("aria-pressed", String(on));
    b.textContent = on ? t("Sound on") : t("Sound off");
  }

  function toggleSound() {
    const on = !soundOn();
    try {
      localStorage.setItem("pentadice.sound", on ? "on" : "off");
    } catch (e) {
      // storage may be off: the setting lasts until the page is left
    }
    renderSound();
    if (on) playSound("score"); // what it sounds like (and the audio unlocked by this tap)
  }

  /** A short click made with WebAudio (no audio file): a rattle of clicks for a roll, one tick for a box. Only
   * with the sound on. */
  function playSound(kind) {
    if (!soundOn()) return;
    try {
      const Ctx = window.AudioContext || window.webkitAudioContext;
      if (!Ctx) return;
      S.audio = S.audio || new Ctx();
      const ctx = S.audio;
      if (ctx.state === "suspended") ctx.resume();
      const clicks = kind === "roll" ? 4 : 1;
      for (let k = 0; k < clicks; k++) {
        const at = ctx.currentTime + k * 0.06;
        const osc = ctx.createOscillator();
        const gain = ctx.createGain();
        osc.type = "square";
        osc.frequency.value = kind === "roll" ? 180 + 90 * k : 880;
        gain.gain.setValueAtTime(0.0001, at);
        gain.gain.exponentialRampToValueAtTime(0.08, at + 0.004);
        gain.gain.exponentialRampToValueAtTime(0.0001, at + 0.045);
        osc.connect(gain).connect(ctx.destination);
        osc.start(at);
        osc.stop(at + 0.05);
      }
    } catch (e) {
      // no sound: the game goes on
    }
  }

  // ---------- leaving a game not finished ----------

  /** "New game": straight to the set-up when the game is over; an unfinished one asks first (its countdown
   * and the computer wait meanwhile). */
  function askNewGame() {
    const g = S.game;
    const dialog = $("confirm-new");
    if (!g || g.over || !dialog || typeof dialog.showModal !== "function") {
      leaveGame();
      return;
    }
    clearTimeout(S.cpuTimer);
    cancelCountdown();
    dialog.showModal();
    $("confirm-new-keep").focus();
  }

  function answerNewGame(leave) {
    const dialog = $("confirm-new");
    if (dialog.open) dialog.close();
    if (leave) {
      leaveGame();
      return;
    }
    if (S.game && !$("game").hidden) afterView(true); // the countdown and the computer go on
    $("new-game").focus();
  }

  // ---------- moves ----------

  function toggleHold(i) {
    const g = S.game;
    if (!humanTurn() || !g.dice || g.rolls_left <= 0 || S.busy) return;
    if (S.held.has(i)) S.held.delete(i);
    else S.held.add(i);
    S.holdsCarried = false; // the player's own holds: their cost is said
    S.holdHinted = g.id; // the hint to tap the dice is not needed any more in this game
    if (g.coach) S.pad = S.pad.slice(0, diceCount() - S.held.size);
    render();
    const d = $("dice").children[i];
    if (d) d.focus();
  }

  /** Sends one move and shows what happened; the view in the answer replaces the game. */
  async function send(path, body, describe) {
    if (S.busy || !S.game) return;
    S.busy = true;
    if (path !== "/computer") S.moved = true; // this screen's move: the focus is kept on the dice or Roll
    if (path === "/score" || path === "/auto-commit") S.scoredHere = true;
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
      if (res.played && res.played.box) playSound("score");
    } catch (e) {
      if (S.game !== before) return;
      if (e.status === 404) {
        S.busy = false;
        showGone(e);
        return;
      }
      // A shared game's computer step another device made first (409: moved on) says nothing.
      if (!(before.shared && e.status === 409 && path === "/computer")) showError(t(e.message));
      try {
        S.game = await api("GET", "/api/games/" + encodeURIComponent(before.id));
      } catch (e2) {
        // keep what we had
      }
    } finally {
      S.busy = false;
    }
    afterView();
    catchUp(); // a version the events announced meanwhile
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
    send("/roll", { keep, dice }, (played, before) => {
      noteEntry(before.id, keep);
      return describePlayed(played, before);
    });
  }

  /** A coach game's steps, as undo takes them back: each roll entry with the dice kept for it (a box: null). */
  function noteEntry(id, keep) {
    S.entries = (S.entries || []).filter((e) => e.game === id).slice(-60);
    S.entries.push({ game: id, keep });
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
    send("/score", { box }, (played, before) => {
      if (before.coach) noteEntry(before.id, null);
      return describePlayed(played, before);
    });
  }

  function playBest() {
    const adv = advice();
    if (!adv || !humanTurn() || S.busy) return;
    const o = adv.best;
    if (o.action === "score") scoreBox(o.box);
    else {
      S.held = indicesOf(S.game.dice, o.keep);
      S.holdsCarried = false;
      roll();
    }
  }

  async function undo() {
    const g = S.game;
    if (!g || !g.coach || S.busy) return;
    if (S.pad.length) {
      // A roll being entered is taken back whole (never one die at a time).
      S.pad = [];
      renderPad();
      announce(t("The faces entered are taken back"));
      return;
    }
    S.busy = true;
    render();
    try {
      const res = await api("POST", "/api/games/" + encodeURIComponent(g.id) + "/undo", { version: g.version });
      S.game = res.game;
      // A whole roll entry is taken back: the dice before it show again, the dice kept for it held, and the
      // faces of the dice rolled are asked again.
      const back = (S.entries || []).pop();
      const d = res.game.dice;
      S.held = back && back.keep && d && res.game.rolls_left > 0 && back.game === g.id ? indicesOf(d, back.keep) : new Set();
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
    if (Array.isArray(played.rolled)) return about(who, N_("You roll {dice}"), N_("{name} rolls {dice}"), { dice: diceText(played.rolled) });
    let text;
    if (played.box) {
      const scored = { box: boxName(played.box), points: played.points };
      text =
        played.points === 1
          ? about(who, N_("You score {box}: {points} point"), N_("{name} scores {box}: {points} point"), scored)
          : about(who, N_("You score {box}: {points} points"), N_("{name} scores {box}: {points} points"), scored);
      if (played.penta_bonus) text += " " + pentaBonusText(played.penta_bonus);
      if (played.upper_bonus) text += " " + t("+{n} upper bonus", { n: played.upper_bonus });
      if (played.auto) text += " " + t("(filled for you: time was up)");
    } else {
      const move = String(played.move || "");
      const kept = move.startsWith("keep ") ? move.slice(5) : "";
      text = kept
        ? about(who, N_("You keep {kept} and roll: {dice}"), N_("{name} keeps {kept} and rolls: {dice}"), { kept, dice: diceText(played.dice || []) })
        : about(who, N_("You roll all the dice: {dice}"), N_("{name} rolls all the dice: {dice}"), { dice: diceText(played.dice || []) });
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
    followLive();
    if (!keepHolds) {
      // After a roll: in a game the page rolls, the dice kept stay held (set aside, as on a table: Roll again keeps
      // them), but what that keep costs is said only once the player changes the holds of this roll
      // (S.holdsCarried); in a coach game the holds start empty, as its prompt asks ("first tap the dice you
      // keep"): the player taps the real dice kept for the next roll.
      const kept = g.coach ? null : S.keepAfterRoll;
      S.held = g.dice && kept && kept.length && humanTurn() && g.rolls_left > 0 ? indicesOf(g.dice, kept) : new Set();
      if (g.dice && g.rolls_left === 0) S.held = new Set();
      S.holdsCarried = S.held.size > 0;
    }
    S.keepAfterRoll = null;
    if (!g.dice) S.held = new Set();
    render();
    turnFlow();
    keepFocus();
    clearTimeout(S.cpuTimer);
    if (g.over) {
      const w = $("winner").textContent;
      const said = $("live").textContent;
      announce(said && said !== w ? t("{said}. {winner}", { said: said.replace(/[.]$/, ""), winner: w }) : w);
      return;
    }
    const p = me();
    if (p.computer) {
      // A shared game's computers are moved by the devices holding seats: the first human seat's at once, the
      // others only when it has not (it left), a while later; a watcher moves nothing.
      const lead = !g.shared || g.you === g.players.findIndex((q) => !q.computer);
      if (!g.shared || (g.you !== null && g.you !== undefined)) S.cpuTimer = setTimeout(computerStep, lead ? CPU_PAUSE_MS : CPU_PAUSE_MS + 4000);
      return;
    }
    if (!humanTurn()) return; // another device's seat: it counts down there
    if (!g.coach && g.dice && g.rolls_left === 0 && g.auto_commit_seconds !== null && g.auto_commit_seconds !== undefined) {
      if (S.stoppedKey !== turnKey()) startCountdown(g.auto_commit_seconds);
    }
  }

  const reducedMotion = () => window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;

  /** Whether an element is whole on the screen. */
  function onScreen(node) {
    const r = node.getBoundingClientRect();
    return r.height > 0 && r.top >= 0 && r.bottom <= (window.innerHeight || document.documentElement.clientHeight);
  }

  /** The phone flow: when a turn of this screen's player starts, the dice and Roll are brought into view with a
   * "Your turn" cue; when a box was just scored here, the page goes back up to the dice (the next turn's). */
  function turnFlow() {
    const g = S.game;
    const key = g.id + ":" + turnKey();
    const newTurn = S.flowKey !== key;
    S.flowKey = key;
    const mine = !g.over && humanTurn() && !g.dice;
    const cue = $("turn-cue");
    cue.hidden = !mine;
    if (mine) cue.textContent = g.coach ? t("Your turn: enter your roll") : t("Your turn: roll the dice");
    if (!newTurn || $("game").hidden || g.over) return;
    if (mine || S.scoredHere) {
      S.scoredHere = false;
      const target = $("roll").hidden ? $("dice-bar") : $("roll");
      if (!onScreen(target) || !onScreen($("dice"))) {
        $("game").scrollIntoView({ block: "start", behavior: reducedMotion() ? "auto" : "smooth" });
      }
    }
  }

  /** At the last roll, the box the countdown will fill is brought into view (beside the pinned dice): its
   * countdown starts once both show. */
  function showCountdownBox() {
    const cd = S.countdown;
    const button = cd && cd.box ? document.querySelector('#sheet button.score[data-box="' + cd.box + '"]') : null;
    if (button && !countdownInView()) button.scrollIntoView({ block: "nearest", behavior: "auto" });
  }

  /** Focus stays on the dice or Roll after a move (the button pressed was redrawn or disabled). */
  function keepFocus() {
    const active = document.activeElement;
    const parked = active === $("dice"); // where the focus waits while nothing can be pressed
    if (!parked && active && active !== document.body && active !== document.documentElement && active.isConnected && !active.disabled) return;
    if ((!S.moved && !parked) || $("game").hidden) return;
    S.moved = false;
    const roll = $("roll");
    const die = [...$("dice").querySelectorAll("button.die")].find((b) => !b.disabled);
    const face = $("pad").hidden ? null : [...$("pad-faces").querySelectorAll("button")].find((b) => !b.disabled);
    const target = (!roll.hidden && !roll.disabled && roll) || face || die || $("dice");
    target.focus({ preventScroll: true });
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

  /** The auto-commit's countdown: it waits until the dice and the box it will fill are both in view (a phone
   * scrolled elsewhere loses no turn to a box it cannot see), runs from its full time, and starts again in full
   * when either leaves the view. It shows beside the dice (the countdown line, the pinned dice bar) and the box. */
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
    S.countdown = { box: bb ? bb.box : null, left: Math.max(0, Math.ceil(seconds)), key, seconds, end: null };
    renderSheet();
    $("countdown").hidden = false; // its line takes its place before the box is brought into view
    showCountdownBox();
    requestAnimationFrame(showCountdownBox); // again once the page is laid out (the note, the hints)
    watchCountdown();
    countdownShown();
    // Screen readers hear it once (the live region), after what the roll said.
    if (S.countdownSaid && S.countdownSaid.key === key) $("live").textContent = S.countdownSaid.before;
    else S.countdownSaid = { key, before: $("live").textContent };
    const said = S.countdownSaid.before.replace(/[.]$/, "");
    const text = $("countdown-text").textContent;
    announce(said ? t("{said}. {winner}", { said, winner: text }) : text);
  }

  /** Whether the dice and the countdown's box are both on the screen (the box not under the pinned dice). */
  function countdownInView() {
    const cd = S.countdown;
    if (!cd || $("game").hidden) return false;
    const vh = window.innerHeight || document.documentElement.clientHeight;
    const shown = (r) => r.width > 0 && r.height > 0 && r.top >= -1 && r.bottom <= vh + 1;
    const dice = $("dice").getBoundingClientRect();
    if (!shown(dice)) return false;
    const button = cd.box ? document.querySelector('#sheet button.score[data-box="' + cd.box + '"]') : null;
    if (!button) return true;
    const r = button.getBoundingClientRect();
    const apart = r.top >= dice.bottom - 1 || r.bottom <= dice.top + 1 || r.left >= dice.right || r.right <= dice.left;
    return shown(r) && apart;
  }

  /** Watches the dice and the sheet come into and out of view (IntersectionObserver, and the scrolling that
   * moves a box under the pinned dice) while a countdown is on. */
  function watchCountdown() {
    unwatchCountdown();
    const check = () => {
      if (S.countdownFrame) return;
      S.countdownFrame = requestAnimationFrame(() => {
        S.countdownFrame = null;
        countdownShown();
      });
    };
    const steps = Array.from({ length: 21 }, (_, i) => i / 20);
    const observer = typeof IntersectionObserver === "function" ? new IntersectionObserver(check, { threshold: steps }) : null;
    if (observer) for (const node of [$("dice"), $("sheet")]) observer.observe(node);
    window.addEventListener("scroll", check, { passive: true });
    window.addEventListener("resize", check);
    S.countdownWatch = { observer, check };
  }

  function unwatchCountdown() {
    const w = S.countdownWatch;
    if (!w) return;
    if (w.observer) w.observer.disconnect();
    window.removeEventListener("scroll", w.check);
    window.removeEventListener("resize", w.check);
    S.countdownWatch = null;
  }

  /** The countdown as it stands: started when in view, back to waiting (its full time) when not; its words. */
  function countdownShown() {
    const cd = S.countdown;
    if (!cd || cd.key !== turnKey()) return;
    const inView = countdownInView();
    if (inView && cd.end === null) {
      cd.end = Date.now() + cd.seconds * 1000;
      clearTimeout(cd.timer);
      cd.timer = setTimeout(countdownTick, 0);
    } else if (!inView && cd.end !== null) {
      clearTimeout(cd.timer);
      cd.end = null;
    }
    cd.left = cd.end === null ? Math.max(0, Math.ceil(cd.seconds)) : Math.max(0, Math.ceil((cd.end - Date.now()) / 1000));
    const where = cd.box ? boxName(cd.box) : t("The advisor's box");
    $("countdown").hidden = false;
    $("countdown").dataset.state = cd.end === null ? "waiting" : "running";
    $("countdown-text").textContent =
      cd.end === null
        ? t("{box} is filled for you in {n} s, once it shows with the dice", { box: where, n: cd.left })
        : cd.box
          ? t("{box} is filled for you in {n} s", { box: where, n: cd.left })
          : t("The advisor's box is filled for you in {n} s", { n: cd.left });
    const badge = cd.end === null ? "…" + cd.left + " s" : cd.left + " s";
    for (const id of ["box-countdown", "dice-countdown"]) {
      const node = $(id);
      if (!node) continue;
      node.hidden = false;
      node.textContent = badge;
      node.dataset.state = cd.end === null ? "waiting" : "running";
    }
  }

  function countdownTick() {
    const cd = S.countdown;
    if (!cd || cd.key !== turnKey() || cd.end === null) return;
    countdownShown();
    if (cd.end === null) return; // out of view meanwhile
    if (Date.now() >= cd.end) {
      cancelCountdown();
      send("/auto-commit", undefined, (played, before) => describePlayed(played, before));
      return;
    }
    cd.timer = setTimeout(countdownTick, Math.min(250, Math.max(10, cd.end - Date.now())));
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
    unwatchCountdown();
    $("countdown").hidden = true;
    $("countdown").removeAttribute("data-state");
    const badge = $("dice-countdown");
    if (badge) badge.hidden = true;
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
      ? [{ name: t("You"), computer: false, strategy: "optimal", auto: "you" }]
      : [
          { name: t("You"), computer: false, strategy: "optimal", auto: "you" },
          { name: "cpu", computer: true, strategy: "optimal" },
        ];
  }

  /** The players' default names (``auto``: "You", "Player 3", never typed over) said again in the page's
   * language, after it changed. */
  function renameDefaults() {
    for (const p of S.players || []) {
      if (p.auto === "you") p.name = t("You");
      else if (typeof p.auto === "number") p.name = t("Player {n}", { n: p.auto });
    }
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
      nameInput.addEventListener("input", () => {
        S.players[i].name = nameInput.value;
        delete S.players[i].auto; // typed: the player's own name, kept in every language
        renderSheetEntry();
      });
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
    renderSheetEntry();
  }

  // ---------- a coach game from a sheet in progress ----------

  /** The coach's set-up table of a sheet in progress: a number field for each box (rows) and player (columns),
   * typed in at once instead of replaying the turns; the values typed are kept while the table is redrawn. */
  function renderSheetEntry() {
    const table = $("sheet-entry-table");
    if (!table) return;
    const rs = currentRulesByName($("rules").value);
    const players = S.players || [];
    S.entrySheet = S.entrySheet || {};
    const head = el("tr", null, el("th", { scope: "col", text: t("Box") }));
    players.forEach((p, i) => head.append(el("th", { scope: "col", text: p.name || t("Player {n}", { n: i + 1 }) })));
    table.tHead.replaceChildren(head);
    const body = table.tBodies[0];
    body.replaceChildren();
    const rows = (rs.boxes || []).map((b) => ({ id: b.id, name: t(b.name) }));
    if (rs.penta_bonus > 0) rows.push({ id: "penta_bonus", name: pentaBonusName() });
    for (const row of rows) {
      const tr = el("tr", null, el("th", { scope: "row", text: row.name }));
      players.forEach((p, i) => {
        const key = i + ":" + row.id;
        const input = el("input", {
          type: "text",
          inputmode: "numeric",
          maxlength: "4",
          size: "4",
          autocomplete: "off",
          cls: "points",
          "aria-label": t("{box} of {name}", { box: row.name, name: p.name || t("Player {n}", { n: i + 1 }) }),
          dataset: { box: row.id, player: String(i) },
        });
        input.value = S.entrySheet[key] || "";
        input.addEventListener("input", () => (S.entrySheet[key] = input.value.trim()));
        tr.append(el("td", null, input));
      });
      body.append(tr);
    }
  }

  /** The sheets typed in the coach's set-up, as a saved game to start from (POST /api/games {"save": ...}), or
   * null when nothing is typed; an Error saying what is wrong with a value that is not a whole number. */
  function enteredSave(players) {
    const rs = currentRulesByName($("rules").value);
    const typed = S.entrySheet || {};
    if (!Object.values(typed).some((v) => v)) return null;
    const saved = players.map((p, i) => {
      const sheet = {};
      for (const id of [...(rs.boxes || []).map((b) => b.id), "penta_bonus"]) {
        const v = typed[i + ":" + id];
        if (!v) continue;
        if (!/^[0-9]{1,4}$/.test(v)) {
          const name = id === "penta_bonus" ? pentaBonusName() : t((rs.boxes.find((b) => b.id === id) || {}).name || id);
          throw new Error(t("{box} of {name}: the points are a whole number", { box: name, name: p.name }));
        }
        sheet[id] = Number(v);
      }
      const filled = Object.keys(sheet).filter((k) => k !== "penta_bonus").length;
      // Kiriki: each five of a kind added to the filled Kiriki box was a turn of its own.
      const penta = rs.penta_repeat && sheet.penta > 0 ? Math.max(0, Math.floor(sheet.penta / rs.penta_points) - 1) : 0;
      return { name: p.name, computer: false, turns: filled + penta, sheet };
    });
    const open = saved.filter((p) => Object.keys(p.sheet).filter((k) => k !== "penta_bonus").length < rs.boxes.length);
    const least = open.length ? Math.min(...open.map((p) => p.turns)) : 0;
    const current = Math.max(0, saved.findIndex((p) => open.includes(p) && p.turns === least));
    return { format: "pentadice-game", rules: rs.name, players: saved, current, dice: null, rolls_made: 0, auto_commit_seconds: null, coach: true };
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
    if (offlineNow()) return refused(t("offline, the computer plays for points: playing to win needs the server"));
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

  /** What a table being prepared (``building``: {table, what}) is for, in players' words; "" where the server
   * names no table (the saved tables being loaded, or the tables in general). */
  function preparingWhat(building) {
    const b = building && typeof building === "object" ? building : {};
    if (Object.prototype.hasOwnProperty.call(PREPARING_WORDS, b.table)) return t(PREPARING_WORDS[b.table]);
    if (b.what === "the saved tables, loading") return t("loading what is saved");
    if (!b.table || b.what === "the tables") return "";
    return t(String(b.what || b.table));
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
      const what = preparingWhat(building);
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

  /** Whether the page runs without a server now (offline.js answers its games). */
  function offlineNow() {
    return !!(window.PentaOffline && window.PentaOffline.mode === "offline");
  }

  /** Offline (no server, or the exported app): a note says what works and what needs the server, and the
   * set-up offers only what works: no shared game, no seed, no computer that plays to win. Online again (the
   * server found once more), everything comes back and the old "cannot be reached" goes. */
  function renderOffline() {
    const off = offlineNow();
    const note = $("offline-note");
    note.hidden = !off;
    note.textContent = off
      ? t("Offline: coach and solo games against the computer play on this device. Shared games, playing to win, chances, reviews and the history need the server.")
      : "";
    $("shared").disabled = off;
    if (off) $("shared").checked = false;
    renderTogether();
    $("seed").disabled = off;
    if (!off && S.wasOffline && $("error").textContent === t("The server cannot be reached")) showError("");
    S.wasOffline = off;
    if (!off && S.hist && S.hist.away && !S.hist.loading && !$("history").hidden) loadHistory(); // the server is back
    if (S.rules.length) updateWinOptions();
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
    renderTogether();
    if (preparing && !$("setup").hidden) S.healthTimer = setTimeout(refreshHealth, POLL_MS);
  }

  /** An error of the API in words: a 503 while tables are being prepared says which, and how far. */
  function errorText(e) {
    let text = t(e.message);
    const data = e.status === 503 && e.data ? e.data : null;
    const prep = data && data.preparing && typeof data.preparing === "object" ? data.preparing : null;
    if (prep) {
      const what = preparingWhat(prep) || t("the game");
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
    if (S.mode === "play" && $("shared").checked) body.shared = true; // each human seat on its own device
    let save = null;
    if (S.mode === "coach") {
      try {
        save = enteredSave(players);
      } catch (e) {
        showError(e.message);
        return;
      }
    }
    $("start").disabled = true;
    try {
      const game = await api("POST", "/api/games", save ? { save } : body);
      if (game.shared && Array.isArray(game.seats)) {
        // The only answer that carries the seats' secrets: kept here, this device holds the first human seat.
        const secrets = {};
        for (const seat of game.seats) if (seat && typeof seat.secret === "string") secrets[String(seat.seat)] = seat.secret;
        keepSeats(game.id, { you: game.you, secrets });
        delete game.seats;
      }
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
    if (which !== "game") stopLive(); // a shared game's live updates, while it shows only
    renderFoot();
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
    noteSeat(game);
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
    stopLive();
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
    stopLive();
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
    } else {
      $("shared").checked = false; // as the names: a new game starts on one screen unless asked again
      renderTogether();
      announce("");
      showSection("setup");
    }
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
      renderReview(review, g.rules, finalOf(g));
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
      renderReview(review, savedRules(file.bytes), savedFinal(file.bytes));
    } catch (e) {
      showError(t(e.message));
    }
  }

  /** The players' scores and the winners of a game view (null without one): {over, players: [{name, computer,
   * strategy, score, winner}]}. */
  function finalOf(view) {
    if (!view || !Array.isArray(view.players)) return null;
    const winners = view.winners || [];
    return {
      over: !!view.over,
      players: view.players.map((p) => ({
        name: p.name,
        computer: !!p.computer,
        strategy: p.strategy || null,
        score: p.totals && isNumber(p.totals.total) ? p.totals.total : null,
        winner: !!view.over && winners.includes(p.name),
      })),
    };
  }

  /** The scores and winners of a finished game of the history list (null when it is not listed there). */
  function historyFinal(id) {
    const g = S.hist && S.hist.games.find((x) => x.id === id);
    if (!g) return null;
    return { over: true, players: (g.players || []).map((p) => ({ name: p.name, computer: !!p.computer, strategy: p.strategy || null, score: p.score, winner: !!p.winner })) };
  }

  /** What a save file says of its players (the strategies; the scores are the server's to add up: not here). */
  function savedFinal(bytes) {
    try {
      const save = JSON.parse(new TextDecoder("utf-8").decode(bytes));
      const players = Array.isArray(save.players) ? save.players : [];
      return { over: false, players: players.map((p) => ({ name: String(p.name), computer: !!p.computer, strategy: p.strategy || null, score: null, winner: false })) };
    } catch (e) {
      return null;
    }
  }

  /** The scores and winners a review carries itself, where the server gives them (``score``, ``winner`` and
   * ``strategy`` of each player; ``over``), or null. */
  function finalOfReview(review) {
    const players = review.players || [];
    if (!players.length || !players.every((p) => isNumber(p.score))) return null;
    return {
      over: review.over !== false,
      players: players.map((p) => ({ name: p.name, computer: !!p.computer, strategy: p.strategy || null, score: p.score, winner: !!p.winner })),
    };
  }

  /** The final scores and the winner above the review (the scores so far for a game not finished). */
  function renderFinal(final) {
    const rows = final ? final.players.filter((p) => isNumber(p.score)) : [];
    if (!rows.length) return null;
    const box = el("section", { cls: "final-scores", "aria-labelledby": "final-title" });
    box.append(el("h3", { id: "final-title", text: final.over ? t("Final scores") : t("Scores so far") }));
    const ol = el("ol", { cls: "final-list" });
    const sorted = rows.slice().sort((a, b) => b.score - a.score);
    for (const p of sorted) {
      const name = p.computer ? t("{name} (computer)", { name: shownName(p.name) }) : shownName(p.name);
      const li = el("li", { cls: p.winner ? "won" : "" }, el("span", { cls: "who-name", text: name }), " ", el("span", { cls: "num", text: String(p.score) }));
      if (p.winner) li.append(" ", el("span", { cls: "badge winner-badge", text: t("winner") }));
      ol.append(li);
    }
    box.append(ol);
    const winners = rows.filter((p) => p.winner);
    if (final.over && winners.length) {
      const top = winners[0].score;
      box.append(
        el("p", {
          cls: "final-winner",
          text:
            winners.length > 1
              ? t("A tie: {names} with {total} points", { names: winners.map((p) => shownName(p.name)).join(", "), total: top })
              : about(winners[0].name, N_("You win with {total} points"), N_("{name} wins with {total} points"), { total: top }),
        }),
      );
    }
    return box;
  }

  /** Whether the review's player ``i`` is a computer that plays to win (its losses are risks taken on purpose). */
  function playsToWin(review, final, i) {
    const p = (review.players || [])[i] || {};
    if (p.strategy) return p.strategy === "win";
    const f = final && final.players[i];
    return !!(f && f.computer && f.strategy === "win" && f.name === p.name);
  }

  function renderReview(review, rulesName, final) {
    S.lastReview = review;
    S.reviewFinal = final || null;
    S.reviewRules = rulesName && S.rules.some((r) => r.name === rulesName) ? rulesName : null;
    const out = $("review-out");
    out.replaceChildren();
    if (rulesName && S.rules.some((r) => r.name === rulesName) && !S.game) $("rules").value = rulesName;
    const finalBox = renderFinal(final && final.players.some((p) => isNumber(p.score)) ? final : finalOfReview(review) || final);
    if (finalBox) out.append(finalBox);
    (review.players || []).forEach((p, i) => {
      const expert = p.decisions > 0 && p.mean_loss < EXPERT;
      const risky = playsToWin(review, final, i);
      const card = el("section", { cls: "player-review" + (risky ? " plays-to-win" : "") });
      const title = risky ? t("{name} (computer, plays to win)", { name: p.name }) : p.computer ? t("{name} (computer)", { name: p.name }) : shownName(p.name);
      card.append(el("h3", { text: title }));
      if (risky) {
        card.append(
          el("p", {
            cls: "note",
            text: t("This computer plays to win, not for the most points: it gives up expected points where that raises its chance of winning. Its losses below are risks taken on purpose, not mistakes."),
          }),
        );
      }
      const dl = el("dl", { cls: "stats" });
      dl.append(el("dt", { text: t("Decisions") }), el("dd", { text: String(p.decisions) }));
      dl.append(el("dt", { text: risky ? t("Expected points given up for the win") : t("Total loss") }), el("dd", { text: fmt(p.total_loss) }));
      dl.append(
        el("dt", { text: t("Mean loss per decision") }),
        risky
          ? el("dd", { text: fmt(p.mean_loss, 3) })
          : el("dd", null, el("span", { text: fmt(p.mean_loss, 3) + " " }), el("span", { cls: expert ? "expert" : "not-expert", text: expert ? t("expert play (below 0.2)") : t("below 0.2 is expert play") })),
      );
      card.append(dl);
      const worst = (p.worst || []).filter((d) => d.loss > 5e-4);
      if (worst.length) {
        card.append(el("h4", { text: risky ? t("The largest risks taken to win") : t("The worst decisions") }));
        const ol = el("ol", { cls: "worst" });
        for (const d of worst) ol.append(el("li", { text: decisionText(d) }));
        card.append(ol);
      } else if (p.decisions) {
        card.append(el("p", { cls: "good", text: t("Every decision was the best one.") }));
      }
      out.append(card);
    });
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
        const risk = d.loss > 5e-4 && playsToWin(review, final, d.index);
        body.append(
          el(
            "tr",
            { cls: risk ? "risk" : d.loss > 5e-4 ? "lost" : "" },
            el("td", { text: shownName(d.player) }),
            el("td", { cls: "num", text: String(d.turn) }),
            el("td", { text: diceText(d.dice || []) + " · " + rollWords(d.rolls_left) }),
            el("td", { text: optionText(d.chosen) }),
            el("td", { text: optionText(d.best) }),
            el("td", { cls: "num", text: risk ? t("{loss} (a risk for the win)", { loss: fmtLoss(d.loss) }) : fmtLoss(d.loss) }),
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

  /** The history's figure of play, the mean points lost per decision (its columns, its plot), always with two
   * decimals (0.40, 0.00, 1.63: one format down the column); a loss too small to show as 0.01 is "< 0.01", never
   * 0.00 (which says no loss at all). The review's figures, a decision's, keep fmtLoss. */
  function lossText(x) {
    if (!isNumber(x)) return "–";
    return x > 0 && x < 0.005 ? "< " + fmt(0.01, 2) : fmt(x, 2);
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
      hist.failed = true;
      // Offline (or the server out of reach) the history is not lost: it is the server's. Said as a note in the
      // view, not as an error; it loads when the server is found again (renderOffline).
      hist.away = offlineNow() || e.status === 0;
      if (S.hist === hist && !hist.away) showError(t(e.message));
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
    const empty = !hist.loading && !hist.failed && hist.total === 0 && !hist.games.length;
    $("history-empty").hidden = !empty;
    $("history-away").hidden = !hist.away;
    $("history-games").hidden = empty || !!hist.failed; // no "Finished games: 0" when they could not be asked
    $("history-players").hidden = empty || !!hist.failed || !hist.players.length;
    $("history-count").textContent = hist.loading ? t("Loading…") : t("Finished games: {n}", { n: hist.total });
    const games = $("games-table");
    headRow(games, HISTORY_COLUMNS);
    const body = games.tBodies[0];
    body.replaceChildren();
    for (const g of hist.games) {
      const date = dateText(g.finished);
      const who = el("td", { cls: "who" });
      for (const p of g.players || []) {
        const name = p.computer ? t("{name} (computer)", { name: p.name }) : shownName(p.name);
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
      const winner = winners.length > 1 ? t("A tie: {names}", { names: winners.map(shownName).join(", ") }) : winners.map(shownName).join(", ");
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
      const loss = el("td", { cls: "num", text: lossText(p.mean_loss), dataset: { label: t("Points lost per decision") } });
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
          el("td", { cls: "num", text: lossText(g.mean_loss), dataset: { label: t("Points lost per decision") } }),
          el("td", { cls: "act" }, reviewButton(g.id, g.rules, date)),
        ),
      );
    }
  }

  /** The axis of figures from 0 to at least ``max`` in at most ``most`` steps of a round size (1, 2, 2.5 or 5
   * times a power of ten): {step, top, digits}, where ``digits`` are the decimals every tick is written with
   * (those of the step: 0.0, 0.1, 0.2; 0.00, 0.25, 0.50; 0, 1, 2), the same for all. */
  function niceAxis(max, most = 4) {
    const raw = Math.max(max, 1e-9) / most;
    const mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 2.5, 5, 10].map((s) => s * mag).find((s) => s >= raw - 1e-12);
    const top = Math.ceil(max / step - 1e-9) * step;
    let digits = 0;
    while (digits < 6 && Math.abs(Math.round(step * 10 ** digits) - step * 10 ** digits) > 1e-6) digits++;
    return { step, top: Math.max(top, step), digits };
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
    const axis = niceAxis(Math.max(expert * 1.5, ...points.map((p) => p.g.mean_loss)));
    const top = axis.top;
    const pad = 12; // the first and the last points off the axes
    const x = (k) => (n === 1 ? L + (W - L - R) / 2 : L + pad + ((k - 1) * (W - L - R - 2 * pad)) / (n - 1));
    const y = (v) => T + (H - T - B) * (1 - v / top);
    const svg = svgEl("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: "loss-plot", role: "img", "aria-labelledby": "plot-title", "aria-describedby": "plot-desc" });
    const last = points[points.length - 1].g;
    svg.append(
      svgEl("title", { id: "plot-title" }, t("Points lost per decision by {name}, game by game", { name: chosen.name })),
      svgEl(
        "desc",
        { id: "plot-desc" },
        t("{n} games; the latest: {loss} points per decision; below {expert} is expert play.", { n, loss: lossText(last.mean_loss), expert: fmt(expert, 1) }),
      ),
    );
    const steps = Math.round(top / axis.step);
    for (let i = 0; i <= steps; i++) {
      const v = i * axis.step;
      svg.append(svgEl("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), class: i ? "grid" : "axis" }));
      svg.append(svgEl("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end", class: "tick" }, fmt(v, axis.digits)));
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
        svgEl("title", null, t("Game {n}: {loss} points per decision, score {score}", { n: p.k, loss: lossText(p.g.mean_loss), score: p.g.score })),
      );
      svg.append(dot);
    }
    svg.append(svgEl("text", { x: L + (W - L - R) / 2, y: H - 8, "text-anchor": "middle", class: "axis-label" }, t("Games, in the order played")));
    svg.append(
      svgEl("text", { x: 0, y: 0, transform: `translate(14 ${T + (H - T - B) / 2}) rotate(-90)`, "text-anchor": "middle", class: "axis-label" }, t("Points lost per decision")),
    );
    return svg;
  }

  /** A finished game of the history in the review view (GET /api/games/{id}/review), with a way back. */
  async function openReview(id, rules) {
    showError("");
    try {
      const [review, view] = await Promise.all([
        api("GET", "/api/games/" + encodeURIComponent(id) + "/review"),
        api("GET", "/api/games/" + encodeURIComponent(id)).catch(() => null), // its scores and winner, where kept
      ]);
      setMode("review");
      $("review-back").hidden = false;
      renderReview(review, rules, finalOf(view) || historyFinal(id));
      $("review-title").focus();
    } catch (e) {
      showError(errorText(e));
    }
  }

  // ---------- keyboard ----------

  function onKey(ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if ($("confirm-new").open) return; // the question first (Esc answers it: keep playing)
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
    if (k === "Enter" && (ev.target === document.body || ev.target === document.documentElement || ev.target === $("dice"))) {
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
    document.addEventListener("visibilitychange", () => document.hidden || liveAgain());
    window.addEventListener("online", liveAgain);
    window.addEventListener("pentadice-offline-mode", renderOffline); // offline.js found the server gone or back
    for (const b of document.querySelectorAll(".mode")) b.addEventListener("click", () => setMode(b.dataset.mode));
    $("lang").addEventListener("change", () => loadMessages($("lang").value));
    $("help-button").addEventListener("click", () => toggleHelp());
    $("theme").value = keptTheme();
    $("theme").addEventListener("change", () => chooseTheme($("theme").value));
    $("skip").addEventListener("click", (ev) => {
      // The skip link: to Start on the set-up, to Roll (or the dice) in a game, else to the view's heading.
      ev.preventDefault();
      const shown = ["setup", "game", "review", "history", "gone"].find((id) => !$(id).hidden);
      let target = shown === "setup" ? $("start") : null;
      if (shown === "game") target = [$("roll"), ...$("pad-faces").querySelectorAll("button"), ...$("dice").querySelectorAll("button")].find((b) => b.offsetParent && !b.disabled) || $("dice");
      if (!target) target = $(shown).querySelector("h2");
      if (target && target.tagName === "H2" && !target.hasAttribute("tabindex")) target.setAttribute("tabindex", "-1");
      if (target) target.focus();
    });
    $("setup-form").addEventListener("submit", startGame);
    $("add-player").addEventListener("click", () => {
      if (S.players.length >= 6) return;
      const n = S.players.length + 1;
      S.players.push({ name: t("Player {n}", { n }), computer: false, strategy: "optimal", auto: n });
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
    $("new-game").addEventListener("click", askNewGame);
    $("confirm-new-keep").addEventListener("click", () => answerNewGame(false));
    $("confirm-new-leave").addEventListener("click", () => answerNewGame(true));
    $("confirm-new").addEventListener("cancel", (ev) => {
      ev.preventDefault(); // Esc: keep playing
      answerNewGame(false);
    });
    $("sound-button").addEventListener("click", toggleSound);
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
    $("shared").addEventListener("change", renderTogether);
    $("share").querySelector("summary").addEventListener("click", () => (S.shareTouched = S.game && S.game.id));
    $("rules").addEventListener("change", () => {
      renderFoot();
      renderSheetEntry();
      updateWinOptions();
      renderPrep();
    });
    $("review-title").setAttribute("tabindex", "-1");
    // The set-up's players drawn at once, before the first answer of the server (in English until the catalogue
    // comes; setMode draws the same rows again): index.html's rows hold their room on the first paint, and these
    // are the address's (one player in a coach game), so the form below does not jump down the screen once the
    // answers come (Lighthouse measured that shift on a phone). A game's or the history's address shows another view.
    const asked = params.get("mode");
    if (!GAME_PATH.test(location.pathname) && location.pathname !== HISTORY_PATH && !["review", "history"].includes(asked)) {
      markMode(asked === "coach" ? "coach" : "play");
      renderPlayers(defaultPlayers(S.mode));
    }
    renderSound();

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
    renderOffline();
    if (GAME_PATH.test(location.pathname) || location.pathname === HISTORY_PATH) {
      markMode("play");
      await route();
    } else setMode(["play", "coach", "review", "history"].includes(params.get("mode")) ? params.get("mode") : "play");
    document.body.dataset.ready = "1";
  }

  document.addEventListener("DOMContentLoaded", init);
})();
