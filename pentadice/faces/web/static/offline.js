/* The offline app: with no server (the files `pentadice export-app` writes, or a server that cannot be reached),
 * the page's API calls for a solo game against the computer and a coach game are answered here, in the browser,
 * from the exported tables (advisor.js): globalThis.PentaOffline.
 *
 *   handles(method, path)  true when the app runs offline and the path is one answered here (app.js's api()
 *                          then calls api() below instead of the network); a game made offline (its id
 *                          "off-...") is always answered here, a server's game never;
 *   api(method, path, body) a Promise of the JSON the server answers (GET /api/rules, /api/health, POST
 *                          /api/games, GET /api/games/ID, POST .../roll, .../score, .../auto-commit,
 *                          .../computer, .../undo, POST /api/advise); a refusal rejects with an Error carrying
 *                          .status and .data ({"error": ...}), as the server's.
 *
 * Dice come from crypto.getRandomValues; the points from the exported score table (advisor.js); the computer's
 * moves and the advice from advisor.js. The games are kept in localStorage, so a reload goes on. It registers
 * the service worker (sw.js), which keeps the app's files and the tables for use with no network. */
(function () {
  "use strict";

  const script = document.currentScript;
  const BASE = new URL(".", script && script.src ? script.src : location.href).href; // the app's folder
  const TABLES = BASE + "app-tables";
  const STORE = "pentadice-offline-games";
  const WANTED = "pentadice-offline-rules"; // rule sets used offline: kept by the service worker
  const LAST = "pentadice-offline-last"; // the rule set of the last game: its tables are read at once offline
  const FIRST = "pentadice-offline-first"; // the first rule set the server offered: the service worker stores it
  const MAX_GAMES = 30;
  const MAX_PLAYERS = 6;
  const UPPER_IDS = ["ones", "twos", "threes", "fours", "fives", "sixes"];
  const PROBE_AGAIN_MS = 10000;
  const ID = /^off-[A-Za-z0-9_-]{1,60}$/;
  const ROUTES = [
    ["GET", /^\/api\/rules$/, "rules"],
    ["GET", /^\/api\/messages$/, "messages"],
    ["GET", /^\/api\/health$/, "health"],
    ["POST", /^\/api\/games$/, "newGame"],
    ["POST", /^\/api\/advise$/, "advise"],
    ["GET", /^\/api\/games\/([^/]+)$/, "view"],
    ["POST", /^\/api\/games\/([^/]+)\/(roll|score|auto-commit|computer|undo)$/, "move"],
  ];

  const S = {
    mode: "unknown", // "offline": answered here; "server": the server answers; "unknown": being found out
    config: null,
    probed: 0,
    probe: null,
    tables: new Map(), // rule set name -> Promise of PentaAdvisor.Tables
    metas: new Map(), // rule set name -> Promise of its description
  };

  class OfflineError extends Error {
    constructor(message, status) {
      super(message);
      this.status = status;
      this.data = { error: message };
    }
  }
  const refuse = (status, message) => {
    throw new OfflineError(message, status);
  };

  // ---------- is there a server? ----------

  /** The mode set; a change is told to the page (the event "pentadice-offline-mode"), which shows what works. */
  function setMode(mode) {
    const was = S.mode;
    S.mode = mode;
    if (was !== mode) window.dispatchEvent(new CustomEvent("pentadice-offline-mode", { detail: mode }));
    return mode;
  }

  function probe() {
    S.probed = Date.now();
    S.probe = (async () => {
      try {
        const res = await fetch(BASE + "config.json", { cache: "no-store" });
        S.config = res.ok ? await res.json() : null;
      } catch (e) {
        S.config = S.config || null;
      }
      if (S.config && S.config.server === false) return setMode("offline");
      if (navigator.onLine === false) return setMode("offline");
      try {
        const res = await fetch("/api/health", { cache: "no-store", headers: { Accept: "application/json" } });
        const server = res.ok && !res.headers.get("x-pentadice-offline");
        if (server) rememberFirst((await res.json().catch(() => null)) || {});
        return setMode(server ? "server" : "offline");
      } catch (e) {
        return setMode("offline");
      }
    })();
    return S.probe;
  }

  /** What the server's health says that offline play needs later: the first rule set it serves, whose tables the
   * service worker stored at install (GET /api/health's "rules", in the server's order). */
  function rememberFirst(health) {
    const first = Array.isArray(health.rules) ? health.rules[0] : null;
    if (typeof first === "string" && first) localStorage.setItem(FIRST, first);
  }

  /** The page's call found no server (the network is off, or the service worker answered for a server gone):
   * offline from now on, until the next look finds the server again. */
  function wentOffline() {
    if (S.mode === "offline") return;
    S.probed = Date.now();
    setMode("offline");
  }

  function exported() {
    return !!(S.config && S.config.server === false);
  }

  function routeOf(method, path) {
    const clean = String(path).split("?")[0];
    for (const [m, re, name] of ROUTES) {
      const found = re.exec(clean);
      if (found && m === method) return { name, args: found.slice(1) };
    }
    return null;
  }

  function localGame(route) {
    return route && (route.name === "view" || route.name === "move") && ID.test(route.args[0]);
  }

  function handles(method, path) {
    const route = routeOf(method, path);
    if (!route) return false;
    if (localGame(route)) return true;
    if (route.name === "view" || route.name === "move") return false; // a server's game: only the server has it
    if (route.name === "messages") return exported(); // else the server's, or the service worker's last copy
    if (!exported() && Date.now() - S.probed > PROBE_AGAIN_MS) probe(); // the server may have gone, or come back
    return S.mode !== "server";
  }

  async function api(method, path, body) {
    const route = routeOf(method, path);
    if (!route) refuse(404, "no such path: " + path);
    if (!localGame(route) && !exported()) {
      // Not a game of this device: the server's answer when it is back. Before a new game (where the game will
      // live is decided), or when the last look is older than 3 s, the server is looked for again first (it may
      // have come back since); a look under way is waited for.
      const stale = route.name === "newGame" || Date.now() - S.probed > 3000;
      if (S.mode !== "server" && navigator.onLine !== false && stale) probe();
      if (S.probe) await S.probe;
    }
    if (!localGame(route) && S.mode === "server") return forward(method, path, body);
    return HANDLERS[route.name](body, ...route.args, path);
  }

  /** A request the server answers after all (asked while finding out whether there is one). */
  async function forward(method, path, body) {
    const opts = { method, headers: { Accept: "application/json" } };
    if (body !== undefined) {
      opts.headers["Content-Type"] = "application/json";
      opts.body = JSON.stringify(body);
    }
    let res;
    try {
      res = await fetch(path, opts);
    } catch (e) {
      res = null;
    }
    if (!res || res.headers.get("x-pentadice-offline")) {
      wentOffline(); // gone since: answered here
      return HANDLERS[routeOf(method, path).name](body, ...routeOf(method, path).args, path);
    }
    const data = await res.json().catch(() => null);
    if (!res.ok) refuse(res.status, data && typeof data.error === "string" ? data.error : "HTTP " + res.status);
    return data;
  }

  // ---------- tables ----------

  function ruleNames() {
    if (S.config && Array.isArray(S.config.rules)) return S.config.rules.map((r) => r.name);
    const first = localStorage.getItem(FIRST);
    return Array.from(new Set([...(first ? [first] : []), ...wanted()]));
  }

  /** The rule set of a request that names none: the first stored (the server's own default is its first). */
  function defaultRules() {
    return ruleNames()[0] || "";
  }

  function wanted() {
    try {
      const list = JSON.parse(localStorage.getItem(WANTED) || "[]");
      return Array.isArray(list) ? list.filter((x) => typeof x === "string") : [];
    } catch (e) {
      return [];
    }
  }

  function meta(name) {
    if (!S.metas.has(name)) {
      const p = fetch(TABLES + "/" + encodeURIComponent(name) + ".json").then((r) => (r.ok ? r.json() : null), () => null);
      S.metas.set(name, p);
    }
    return S.metas.get(name);
  }

  /** A table file: offline, straight from the service worker's cache (several times faster than through the
   * worker for 8 MB), else from the network (through the worker, which stores it). */
  async function tableFile(url) {
    if (S.mode !== "server" && globalThis.caches) {
      const hit = await caches.match(new URL(url, location.href).href).catch(() => null);
      if (hit) return hit;
    }
    return fetch(url);
  }

  function tablesOf(name) {
    if (!S.tables.has(name)) {
      // The service worker checks the values' SHA-256 before it stores them; without one, the page checks them.
      const verify = !(navigator.serviceWorker && navigator.serviceWorker.controller);
      const p = globalThis.PentaAdvisor.load(TABLES, name, { fetch: tableFile, verify }).catch((e) => {
        S.tables.delete(name);
        throw new OfflineError("the " + name + " tables are not stored on this device (" + e.message + ")", 503);
      });
      S.tables.set(name, p);
    }
    return S.tables.get(name);
  }

  /** Keep a rule set's tables for offline use (the service worker stores them when they are fetched). */
  function keep(name) {
    localStorage.setItem(LAST, name);
    const list = wanted();
    if (!list.includes(name)) localStorage.setItem(WANTED, JSON.stringify([...list, name].slice(-8)));
    return tablesOf(name);
  }

  async function servedRules() {
    const out = [];
    for (const name of ruleNames()) {
      const m = await meta(name);
      if (m && m.rules_answer) out.push(m.rules_answer);
    }
    return out;
  }

  // ---------- games kept in localStorage ----------

  function loadAll() {
    try {
      const all = JSON.parse(localStorage.getItem(STORE) || "{}");
      return all && typeof all === "object" ? all : {};
    } catch (e) {
      return {};
    }
  }

  function saveGame(game) {
    const all = loadAll();
    all[game.id] = game;
    const ids = Object.keys(all).sort((a, b) => (all[a].touched || 0) - (all[b].touched || 0));
    while (ids.length > MAX_GAMES) delete all[ids.shift()];
    game.touched = Date.now();
    try {
      localStorage.setItem(STORE, JSON.stringify(all));
    } catch (e) {
      refuse(507, "this device's storage is full: the game cannot be kept");
    }
  }

  function gameOf(id) {
    const game = loadAll()[id];
    if (!game) refuse(404, "no such game " + JSON.stringify(String(id).slice(0, 40)) + " (on this device)");
    return game;
  }

  function newId() {
    const bytes = new Uint8Array(12);
    crypto.getRandomValues(bytes);
    return "off-" + btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  /** Dice from the browser's cryptographic generator, each face 1-6 equally likely (bytes of 252 or more are
   * drawn again: 252 is 42 x 6). */
  function rollDice(n) {
    const out = [];
    const byte = new Uint8Array(1);
    while (out.length < n) {
      crypto.getRandomValues(byte);
      if (byte[0] < 252) out.push((byte[0] % 6) + 1);
    }
    return out;
  }

  // ---------- the game (pentadice/players/engine.py's, for the subset the page plays) ----------

  const sorted = (dice) => dice.slice().sort((a, b) => a - b);

  function upperTotal(sheet) {
    let total = 0;
    for (const id of UPPER_IDS) total += sheet[id] || 0;
    return total;
  }

  function totals(t, player) {
    const upper = upperTotal(player.sheet);
    const cap = t.meta.rules_answer.upper_threshold;
    const upperBonus = upper >= cap ? t.meta.rules_answer.upper_bonus : 0;
    let lower = 0;
    for (const [box, pts] of Object.entries(player.sheet)) if (!UPPER_IDS.includes(box)) lower += pts;
    return { upper, upper_bonus: upperBonus, lower, penta_bonus: player.bonus, total: upper + upperBonus + lower + player.bonus };
  }

  function sheetWithBonus(player) {
    return player.bonus ? { ...player.sheet, penta_bonus: player.bonus } : { ...player.sheet };
  }

  function filled(t, player) {
    return Object.keys(player.sheet).length;
  }

  function over(t, game) {
    return game.players.every((p) => filled(t, p) === t.inGame.length);
  }

  function openBoxes(t, player) {
    return t.inGame.filter((b) => player.sheet[b] === undefined);
  }

  function pentaScored(t, player) {
    const id = t.pentaBox >= 0 ? t.boxIds[t.pentaBox] : null;
    return id !== null && (player.sheet[id] || 0) > 0;
  }

  function legalOf(t, game) {
    const player = game.players[game.current];
    return t.legal(game.dice, openBoxes(t, player), pentaScored(t, player));
  }

  function situation(game) {
    const player = game.players[game.current];
    return { dice: game.dice, rolls_left: game.rules_rolls - game.rolls_made, sheet: sheetWithBonus(player) };
  }

  function view(t, game) {
    const done = over(t, game);
    const out = {
      id: game.id,
      rules: game.rules,
      players: game.players.map((p) => ({
        name: p.name,
        computer: p.computer,
        strategy: p.computer ? p.strategy : null,
        turns: p.turns,
        sheet: t.sheetDict(sheetWithBonus(p)),
        totals: totals(t, p),
      })),
      over: done,
      current: done ? null : game.current,
      turn: done ? null : game.players[game.current].turns + 1,
      dice: game.dice ? game.dice.slice() : null,
      rolls_left: game.dice ? game.rules_rolls - game.rolls_made : null,
      deadline: null,
    };
    if (game.dice) {
      const { legal, bonus } = legalOf(t, game);
      const last = game.rules_rolls - game.rolls_made === 0;
      const zero = Object.values(legal).every((v) => v === 0);
      Object.assign(out, { legal, penta_bonus: bonus, warning: last && zero ? globalThis.PentaAdvisor.NO_SCORE_MESSAGE : null });
    }
    if (done) {
      const best = Math.max(...game.players.map((p) => totals(t, p).total));
      out.winners = game.players.filter((p) => totals(t, p).total === best).map((p) => p.name);
    }
    const personToMove = game.dice && !done && !game.players[game.current].computer;
    Object.assign(out, {
      coach: game.coach,
      auto_commit_seconds: game.auto_commit_seconds,
      can_undo: game.coach && game.undo.length > 0,
      history: game.history,
      version: game.version,
      advice: personToMove ? t.advise(situation(game)) : null,
      chances: null,
      chances_pending: false,
      preparing: null,
      offline: true,
    });
    return out;
  }

  function checkName(name) {
    if (typeof name !== "string" || !name.trim()) refuse(422, "a player needs a name");
    if (name.length > 40) refuse(422, "a name has at most 40 characters");
    if (/[\u0000-\u001f\u007f]/.test(name)) refuse(422, "a name has no control characters");
    return name.trim();
  }

  function playersOf(value) {
    let list;
    if (typeof value === "string") {
      let unnamed = 0;
      list = value.split(",").map((raw) => {
        const item = raw.trim();
        if (!item) refuse(422, "empty player name in " + JSON.stringify(value));
        const [kind, ...rest] = item.split(":").map((x) => x.trim());
        if (kind.toLowerCase() === "cpu") {
          // cpu, cpu:STRATEGY, cpu:NAME, cpu:STRATEGY:NAME
          const named = rest.length === 2 || (rest.length === 1 && !["optimal", "win"].includes(rest[0].toLowerCase()));
          const strategy = rest.length && !(rest.length === 1 && named) ? rest[0].toLowerCase() : "optimal";
          const name = named ? rest[rest.length - 1] : "";
          if (!name) unnamed++;
          return { name, computer: true, strategy };
        }
        if (rest.length) refuse(422, "unknown player kind " + JSON.stringify(kind) + " in " + JSON.stringify(item));
        return { name: item, computer: false, strategy: "optimal" };
      });
      let n = 0;
      for (const p of list) if (p.computer && !p.name) p.name = unnamed === 1 ? "cpu" : "cpu " + ++n;
    } else if (Array.isArray(value)) {
      list = value.map((item, i) => {
        if (!item || typeof item !== "object") refuse(422, "players[" + i + "] is not an object");
        return { name: item.name, computer: item.computer === true, strategy: item.strategy == null ? "optimal" : String(item.strategy).toLowerCase() };
      });
    } else refuse(422, 'players must be "Ana,cpu" or a list of 1 to ' + MAX_PLAYERS + ' {"name", "computer"}');
    if (list.length < 1 || list.length > MAX_PLAYERS) refuse(422, "a game has 1 to " + MAX_PLAYERS + " players, not " + list.length);
    const seen = new Set();
    for (const p of list) {
      p.name = checkName(p.name);
      const key = p.name.toLowerCase();
      if (seen.has(key)) refuse(422, "two players are called " + JSON.stringify(p.name));
      seen.add(key);
      if (p.strategy === "win") refuse(422, "offline, the computer plays for points: playing to win needs the server"); // the page's words (in its catalogue)
      if (p.strategy !== "optimal") refuse(422, "strategy must be one of optimal, win, not " + JSON.stringify(p.strategy));
    }
    return list.map((p) => ({ ...p, turns: 0, sheet: {}, bonus: 0 }));
  }

  function checkVersion(game, body) {
    const version = body && body.version;
    if (version !== undefined && version !== null && version !== game.version) {
      refuse(409, "the game has moved on since the view you played from (version " + version + ", now " + game.version + "): read it again (GET /api/games/{id})");
    }
  }

  function personToAct(game, t) {
    if (over(t, game)) refuse(409, "the game is over");
    const p = game.players[game.current];
    if (p.computer) refuse(409, "it is " + p.name + "'s turn, the computer's: POST .../computer plays it");
  }

  function faces(value, what, n) {
    if (!Array.isArray(value) || value.length > n || !value.every((d) => Number.isInteger(d) && d >= 1 && d <= 6)) {
      refuse(422, what + " must be a list of up to " + n + " faces 1 to 6");
    }
    return value;
  }

  function remember(game) {
    if (!game.coach) return;
    game.undo.push({
      players: game.players.map((p) => ({ sheet: { ...p.sheet }, bonus: p.bonus, turns: p.turns })),
      current: game.current,
      dice: game.dice ? game.dice.slice() : null,
      rolls_made: game.rolls_made,
      history: game.history,
    });
    if (game.undo.length > 1000) game.undo.shift();
  }

  function roll(t, game, keep, rolled) {
    const n = t.dice - keep.length;
    remember(game);
    game.dice = sorted(keep.concat(rolled || rollDice(n)));
    game.rolls_made += 1;
    return game.dice;
  }

  function checkShowing(game, keep) {
    const showing = {};
    for (const d of game.dice) showing[d] = (showing[d] || 0) + 1;
    for (const d of keep) {
      if (!showing[d]) refuse(409, "cannot keep " + sorted(keep).join(" ") + ": the dice show " + game.dice.join(" "));
      showing[d]--;
    }
  }

  function lossOf(t, game, match) {
    const option = t.advise(situation(game)).options.find(match);
    return option ? option.loss : undefined;
  }

  function keepMove(t, game, keep, rolled) {
    const player = game.players[game.current];
    checkShowing(game, keep);
    if (keep.length === t.dice) refuse(409, "keeping all the dice rolls nothing: score them in a box");
    if (game.rules_rolls - game.rolls_made === 0) refuse(409, "no rolls left: score the dice in a box");
    const key = sorted(keep).join(",");
    const loss = lossOf(t, game, (o) => o.action === "keep" && o.keep.join(",") === key);
    const dice = roll(t, game, sorted(keep), rolled);
    game.history += 1;
    const out = { player: player.name, move: keep.length ? "keep " + sorted(keep).join(" ") : "roll", dice: dice.slice(), computer: player.computer };
    if (loss !== undefined) out.loss = loss;
    return out;
  }

  function scoreMove(t, game, box, auto) {
    const player = game.players[game.current];
    const { legal, bonus } = legalOf(t, game);
    const name = (b) => t.boxNames[b] || b;
    if (!(box in legal)) {
      if (player.sheet[box] !== undefined) refuse(409, name(box) + " is already filled (" + player.sheet[box] + ")");
      refuse(409, "the joker does not allow " + name(box) + " now; allowed: " + Object.keys(legal).map(name).join(", "));
    }
    const loss = lossOf(t, game, (o) => o.action === "score" && o.box === box);
    const points = legal[box];
    const before = upperTotal(player.sheet);
    const cap = t.meta.rules_answer.upper_threshold;
    const upper = UPPER_IDS.includes(box);
    const upperBonus = upper && before < cap && before + points >= cap ? t.meta.rules_answer.upper_bonus : 0;
    const dice = game.dice.slice();
    remember(game);
    player.sheet[box] = (player.sheet[box] || 0) + points;
    player.bonus += bonus;
    player.turns += 1;
    game.history += 1;
    nextPlayer(t, game);
    const out = { player: player.name, move: "score " + box, dice, computer: player.computer, box, points, penta_bonus: bonus, upper_bonus: upperBonus, auto: !!auto };
    if (loss !== undefined) out.loss = loss;
    return out;
  }

  function nextPlayer(t, game) {
    game.dice = null;
    game.rolls_made = 0;
    for (let step = 1; step <= game.players.length; step++) {
      const nxt = (game.current + step) % game.players.length;
      if (filled(t, game.players[nxt]) < t.inGame.length) {
        game.current = nxt;
        return;
      }
    }
  }

  function parseBox(t, text) {
    if (typeof text !== "string") refuse(422, "box must be a box id, not " + JSON.stringify(text));
    const key = (s) => s.toLowerCase().replace(/[\s_-]/g, "");
    const found = t.inGame.find((b) => key(b) === key(text) || key(t.boxNames[b] || "") === key(text));
    if (!found) refuse(422, "unknown box " + JSON.stringify(text.slice(0, 40)) + "; boxes: " + t.inGame.join(" "));
    return found;
  }

  // ---------- the routes ----------

  const HANDLERS = {
    async rules() {
      return { rules: await servedRules() };
    },

    /** The page's words (the exported app's messages/LANG.json): the language asked, else the browser's. */
    async messages(body, path) {
      const known = (S.config && S.config.languages) || ["en"];
      const asked = new URLSearchParams(String(path).split("?")[1] || "").get("lang");
      const wanted = [asked, ...(navigator.languages || [])].filter(Boolean).map((x) => x.toLowerCase().split("-")[0]);
      const lang = wanted.find((x) => known.includes(x === "in" ? "id" : x)) || "en";
      if (asked && !known.includes(asked.toLowerCase())) refuse(422, "unknown language " + JSON.stringify(asked) + "; known: " + known.join(", "));
      const res = await fetch(BASE + "messages/" + (lang === "in" ? "id" : lang) + ".json").catch(() => null);
      if (!res || !res.ok) refuse(503, "the page's words cannot be read");
      return res.json();
    },

    async health() {
      const games = Object.values(loadAll());
      const finished = games.filter((g) => g.finished).length;
      const names = (await servedRules()).map((r) => r.name);
      return { status: "ok", rules: names, games: games.length, finished_games: finished, kept: "on this device",
               database: "browser", preparing: false, tables: null, offline: true };
    },

    async advise(body) {
      if (!body || typeof body !== "object") refuse(422, "the body must be a JSON object");
      const t = await tablesOf(body.rules || defaultRules());
      try {
        const out = t.advise(body);
        return body.top ? { ...out, options: out.options.slice(0, body.top) } : out;
      } catch (e) {
        refuse(422, e.message);
      }
    },

    async newGame(body) {
      const data = body || {};
      if ("save" in data) refuse(422, "offline, a saved game cannot be resumed: open the app with its server");
      const name = data.rules == null ? defaultRules() : data.rules;
      if (!ruleNames().includes(name)) refuse(422, "the " + name + " rule set is not stored on this device; stored: " + ruleNames().join(", "));
      const kind = data.dice === undefined ? "random" : data.dice;
      if (kind !== "random" && kind !== "manual") refuse(422, 'dice must be "random" or "manual" (a coach game), not ' + JSON.stringify(kind));
      const players = playersOf(data.players === undefined ? "You,cpu" : data.players);
      const coach = kind === "manual";
      if (coach && players.some((p) => p.computer)) refuse(422, "a coach game follows real dice: its players are people, not the computer");
      let seconds = data.auto_commit === undefined ? 3 : data.auto_commit;
      if (seconds !== null && (typeof seconds !== "number" || !(seconds >= 0) || seconds > 600)) refuse(422, "auto_commit must be seconds 0 to 600, or null");
      const t = await keep(name);
      const game = { id: newId(), rules: name, rules_rolls: t.rolls, coach, players, current: 0, dice: null, rolls_made: 0,
                     history: 0, undo: [], auto_commit_seconds: seconds, version: 1, finished: false };
      saveGame(game);
      return view(t, game);
    },

    async view(body, id) {
      const game = gameOf(id);
      return view(await tablesOf(game.rules), game);
    },

    async move(body, id, action) {
      const game = gameOf(id);
      const t = await tablesOf(game.rules);
      const data = body || {};
      checkVersion(game, data);
      let played;
      if (action === "roll") {
        const keepFaces = faces(data.keep || [], "keep", t.dice);
        let rolled = data.dice;
        if (rolled !== undefined && rolled !== null) {
          if (!game.coach) refuse(422, 'dice are given in coach games ("dice": "manual") only: this one rolls');
          rolled = faces(rolled, "dice", t.dice);
        } else rolled = null;
        personToAct(game, t);
        if (!game.dice && keepFaces.length) refuse(409, "there are no dice to keep before the turn's first roll");
        const left = game.rules_rolls - game.rolls_made;
        if (game.coach && (!game.dice || left > 0) && keepFaces.length < t.dice) {
          const rolling = t.dice - keepFaces.length;
          if (!rolled || rolled.length !== rolling) refuse(422, "dice: a coach game takes the faces of the " + rolling + " dice rolled, not " + (rolled ? rolled.length : "none"));
        }
        const player = game.players[game.current];
        played = game.dice ? keepMove(t, game, keepFaces, rolled) : { player: player.name, computer: false, rolled: roll(t, game, [], rolled).slice() };
      } else if (action === "score") {
        if (!("box" in data)) refuse(422, 'box: the field is missing: {"box": "fives"}');
        const box = parseBox(t, data.box);
        personToAct(game, t);
        if (!game.dice) refuse(409, "roll the dice first");
        played = scoreMove(t, game, box, false);
      } else if (action === "auto-commit") {
        personToAct(game, t);
        if (game.auto_commit_seconds === null) refuse(409, "the auto-commit is off in this game");
        if (!game.dice || game.rules_rolls - game.rolls_made > 0) refuse(409, "the auto-commit only fills a box after the last roll");
        played = scoreMove(t, game, t.advise(situation(game)).options.find((o) => o.action === "score").box, true);
      } else if (action === "computer") {
        if (over(t, game)) refuse(409, "the game is over");
        const player = game.players[game.current];
        if (!player.computer) refuse(409, "it is " + player.name + "'s turn, a person's: the computer does not play it");
        if (!game.dice) played = { player: player.name, computer: true, rolled: roll(t, game, [], null).slice() };
        else {
          const best = t.advise(situation(game)).best;
          played = best.action === "keep" ? keepMove(t, game, best.keep, null) : scoreMove(t, game, best.box, false);
        }
      } else {
        if (!game.coach) refuse(409, "only a coach game takes a step back: here the game rolls the dice, and undo would reroll");
        const snap = game.undo.pop();
        if (!snap) refuse(409, "nothing to undo");
        game.players.forEach((p, i) => Object.assign(p, { sheet: snap.players[i].sheet, bonus: snap.players[i].bonus, turns: snap.players[i].turns }));
        Object.assign(game, { current: snap.current, dice: snap.dice, rolls_made: snap.rolls_made, history: snap.history });
      }
      game.version += 1;
      game.finished = over(t, game);
      saveGame(game);
      const out = played ? { played } : {};
      out.game = view(t, game);
      return out;
    },
  };

  // ---------- start ----------

  function register() {
    if (!("serviceWorker" in navigator) || !window.isSecureContext) return;
    navigator.serviceWorker.register(BASE + "sw.js", { scope: BASE }).catch(() => {
      /* no service worker (a private window, a browser setting): the app works while online */
    });
  }

  /** Offline, the tables of the last game's rule set are read at once, while the page starts: the first
   * advice does not wait for them. */
  function preload() {
    const name = localStorage.getItem(LAST) || defaultRules();
    if (globalThis.PentaAdvisor && ruleNames().includes(name)) tablesOf(name).catch(() => null);
  }

  window.addEventListener("offline", () => setMode("offline"));
  window.addEventListener("online", () => probe());
  // While offline, look for the server again every 10 s, calls or none: a page left open (the history, a finished
  // game) finds the server when it is back, not only at its next call.
  setInterval(() => {
    if (S.mode === "offline" && !exported() && Date.now() - S.probed >= PROBE_AGAIN_MS) probe();
  }, PROBE_AGAIN_MS);
  if (navigator.onLine === false) setMode("offline");
  probe().then((mode) => mode === "offline" && preload());
  register();

  globalThis.PentaOffline = {
    handles,
    api,
    wentOffline,
    keep,
    get mode() {
      return S.mode;
    },
    ready: () => S.probe,
    tablesOf,
  };
})();
