/* pentadice's advisor in the browser: the options of a situation and their values from a rule set's exported
 * tables (GET /app-tables/NAME.json and NAME.f64, made by pentadice/faces/web/app_tables.py), as `pentadice advise
 * --json` gives them (without "why"). Plain JavaScript, no build step; loaded by the page
 * (globalThis.PentaAdvisor) and by Node (require / import).
 *
 * The browser scores nothing itself: the points of every hand in every box come from the exported score table
 * (pentadice.game.rules.score_table), a joker's from the exported joker points. What is ported from
 * pentadice/game/rules.py is the logic around them: which boxes may take the dice (the joker's placement), the
 * Penta bonus, the successor rows and the next state; the turn's arithmetic is pentadice/solver/turn.py's, in
 * the same order, so the values come out with the same bits. tests/test_js_advisor.py checks both against
 * Python, in Node and in Chromium. */
(function (root, factory) {
  if (typeof module === "object" && module.exports) module.exports = factory();
  else root.PentaAdvisor = factory();
})(typeof globalThis !== "undefined" ? globalThis : this, function () {
  "use strict";

  const FORMAT = "pentadice-app-tables";
  const NO_SCORE_MESSAGE = "No open box scores: you must sacrifice one";
  const BONUS_KEY = "penta_bonus";
  const UPPER_IDS = ["ones", "twos", "threes", "fours", "fives", "sixes"];

  class AdviceError extends Error {}

  /** One rule set's tables: the description (the parsed JSON) and the values (an ArrayBuffer of float64). */
  class Tables {
    constructor(meta, buffer) {
      if (!meta || meta.format !== FORMAT) throw new AdviceError("not the offline app's tables");
      if (new Uint8Array(new Float64Array([1]).buffer)[7] !== 0x3f) throw new AdviceError("a big-endian machine");
      const shape = meta.values.shape;
      const size = shape[0] * shape[1] * shape[2];
      if (buffer.byteLength !== size * 8) {
        throw new AdviceError("the " + meta.rules + " values are " + buffer.byteLength + " bytes, not " + size * 8);
      }
      this.meta = meta;
      this.name = meta.rules;
      this.V = new Float64Array(buffer);
      this.masks = shape[1];
      this.lanes = shape[2];
      const L = meta.param_layout;
      const p = meta.params;
      this.p = p;
      this.L = L;
      this.dice = p[L.P_DICE];
      this.rolls = p[L.P_ROLLS];
      this.boxMask = p[L.P_BOXES];
      this.cap = p[L.P_UPPER_THRESHOLD];
      this.upperBonusPoints = p[L.P_UPPER_BONUS];
      this.pentaBonusPoints = p[L.P_PENTA_BONUS];
      this.joker = p[L.P_JOKER];
      this.jokerNeedsFull = p[L.P_JOKER_NEEDS_FULL];
      this.pentaRepeat = p[L.P_PENTA_REPEAT];
      this.nBoxes = p[L.P_N_BOXES];
      this.pentaBox = p[L.P_PENTA_BOX];
      this.upperMask = p[L.P_UPPER_MASK];
      this.lowerMask = p[L.P_LOWER_MASK];
      this.nRows = p[L.P_N_ROWS];
      this.faceBox = p.slice(L.P_FACE_BOX, L.P_FACE_BOX + 6);
      const n = this.nBoxes;
      this.kind = new Int32Array(n);
      this.boxA = new Int32Array(n);
      this.boxRow = new Int32Array(n);
      for (let b = 0; b < n; b++) {
        const o = L.P_BOX_DATA + L.BOX_FIELDS * b;
        this.kind[b] = p[o + L.F_KIND];
        this.boxA[b] = p[o + L.F_A];
        this.boxRow[b] = p[o + L.F_ROW];
      }
      this.K_FACE = meta.kinds.K_FACE;
      this.K_PENTA = meta.kinds.K_PENTA;
      this.JOKER_NONE = meta.joker_codes.none;
      this.JOKER_FORCED = meta.joker_codes.forced;
      this.boxIds = meta.box_ids;
      this.boxIndex = {};
      this.boxIds.forEach((id, i) => (this.boxIndex[id] = i));
      this.inGame = meta.in_game;
      this.boxNames = {};
      for (const box of meta.boxes) this.boxNames[box.id] = box.name;
      // The dice tables, flat.
      const h = meta.hands;
      this.nHands = h.n_hands;
      this.nKeeps = h.n_keeps;
      this.counts = flat(h.counts, 6);
      this.add = flat(h.add, 6);
      this.subsWidth = h.subs[0].length;
      this.subs = flat(h.subs, this.subsWidth);
      this.subkeepsWidth = h.subkeeps[0].length;
      this.subkeeps = flat(h.subkeeps, this.subkeepsWidth);
      this.keepIndex = new Map();
      this.keepFaces = [];
      for (let k = 0; k < this.nKeeps; k++) {
        const faces = [];
        for (let f = 0; f < 6; f++) for (let c = 0; c < this.counts[k * 6 + f]; c++) faces.push(f + 1);
        this.keepFaces.push(faces);
        this.keepIndex.set(faces.join(""), k);
      }
      this.scoreWidth = 2 * n + 1;
      this.scores = flat(meta.score_table, this.scoreWidth);
      this.jokerPoints = meta.joker_points || null;
      // Scratch of the turn.
      this.K = new Float64Array(this.nKeeps);
      this.B = new Float64Array(this.nKeeps);
      this.rowValues = new Float64Array(this.nRows);
      this.pointsScratch = new Int32Array(n);
    }

    /** The value table's entry: the expected points still to come from a state. */
    value(flag, mask, sub) {
      return this.V[(flag * this.masks + mask) * this.lanes + sub];
    }

    /** The keep number of a multiset of faces. */
    keepOf(dice) {
      const key = dice.slice().sort((a, b) => a - b).join("");
      const k = this.keepIndex.get(key);
      if (k === undefined) throw new AdviceError("not a keep of these dice: " + dice.join(" "));
      return k;
    }

    /** rules.penta_filled: the game has a Penta box and it is filled (with any score). */
    pentaFilled(openMask) {
      const b = this.pentaBox;
      return b >= 0 && ((openMask >> b) & 1) === 0 && ((this.boxMask >> b) & 1) === 1;
    }

    /** The face all the dice of hand h show (0-5), or -1. */
    allAlike(h) {
      for (let f = 0; f < 6; f++) if (this.counts[h * 6 + f] === this.dice) return f;
      return -1;
    }

    /** rules.joker_applies. */
    jokerApplies(h, openMask, pentaScored) {
      const face = this.allAlike(h);
      if (face < 0 || !this.pentaFilled(openMask) || this.joker === this.JOKER_NONE) return false;
      if (pentaScored === 0 && this.jokerNeedsFull === 1) return false;
      const own = this.faceBox[face];
      return this.joker === this.JOKER_FORCED || own < 0 || ((openMask >> own) & 1) === 0;
    }

    /** rules.score_options for hand h, its points read from the exported tables: fills points[b] (-1 where box b
     * may not take the dice) and returns the Penta bonus the roll earns. */
    scoreOptions(h, openMask, pentaScored, points) {
      const n = this.nBoxes;
      const row = h * this.scoreWidth;
      if (this.scores[row + n] === 1) {
        for (let b = 0; b < n; b++) points[b] = ((openMask >> b) & 1) === 1 ? this.scores[row + b] : -1;
        return 0;
      }
      const face = this.allAlike(h);
      const allSame = face >= 0;
      const scoredAndFilled = pentaScored === 1 && this.pentaFilled(openMask);
      const bonus = allSame && scoredAndFilled ? this.pentaBonusPoints : 0;
      const joker = this.jokerApplies(h, openMask, pentaScored);
      const given = joker ? this.jokerPoints[h] : null;
      let allowed = openMask;
      if (joker && this.joker === this.JOKER_FORCED) {
        const own = this.faceBox[face];
        if (own >= 0 && ((openMask >> own) & 1) === 1) allowed = 1 << own;
        else if ((openMask & this.lowerMask) !== 0) allowed = openMask & this.lowerMask;
        else allowed = openMask & this.upperMask;
      }
      if (allSame && scoredAndFilled && this.pentaRepeat === 1) allowed |= 1 << this.pentaBox;
      for (let b = 0; b < n; b++) {
        points[b] = ((allowed >> b) & 1) === 0 ? -1 : given ? given[b] : this.scores[row + b];
      }
      return bonus;
    }

    /** rules.successor_row. */
    successorRow(b, pts) {
      if (this.kind[b] === this.K_FACE) return this.boxRow[b] + Math.floor(pts / this.boxA[b]);
      if (this.kind[b] === this.K_PENTA && pts > 0) return this.boxRow[b] + 1;
      return this.boxRow[b];
    }

    /** rules.upper_bonus. */
    upperBonus(sub, added) {
      return sub < this.cap && sub + added >= this.cap ? this.upperBonusPoints : 0;
    }

    /** turn.successor_rows for one subtotal (rules.successors: each way to fill an open box; Kiriki's own row). */
    successorRows(openMask, pentaScored, s) {
      const rows = this.rowValues;
      const cap = this.cap;
      if (this.pentaRepeat === 1 && pentaScored === 1 && this.pentaFilled(openMask) && openMask !== 0) {
        rows[this.boxRow[this.pentaBox] + 1] = this.value(pentaScored, openMask, Math.min(s, cap)) + 0;
      }
      for (let b = 0; b < this.nBoxes; b++) {
        if (((openMask >> b) & 1) === 0) continue;
        const kind = this.kind[b];
        const nxt = openMask & ~(1 << b);
        const rowsOf = kind === this.K_FACE ? this.dice + 1 : kind === this.K_PENTA ? 2 : 1;
        for (let c = 0; c < rowsOf; c++) {
          const flag = kind === this.K_PENTA ? c : pentaScored;
          const a = kind === this.K_FACE ? c * this.boxA[b] : 0;
          rows[this.boxRow[b] + c] = this.value(flag, nxt, Math.min(s + a, cap)) + this.upperBonus(s, a);
        }
      }
    }

    /** turn.hand_values: K[h] the value of hand h after the last roll (the best legal box). */
    handValues(openMask, pentaScored) {
      const n = this.nBoxes;
      const pts = this.pointsScratch;
      const K = this.K;
      const rows = this.rowValues;
      for (let h = 0; h < this.nHands; h++) {
        let best = -Infinity;
        const row = h * this.scoreWidth;
        if (this.scores[row + n] === 1) {
          for (let b = 0; b < n; b++) {
            if (((openMask >> b) & 1) === 0) continue;
            const x = rows[this.scores[row + n + 1 + b]] + this.scores[row + b];
            if (x > best) best = x;
          }
        } else {
          const bonus = this.scoreOptions(h, openMask, pentaScored, pts);
          for (let b = 0; b < n; b++) {
            if (pts[b] < 0) continue;
            const x = rows[this.successorRow(b, pts[b])] + (pts[b] + bonus);
            if (x > best) best = x;
          }
        }
        K[h] = best;
      }
    }

    /** turn.keep_values and turn.best_subkeeps: one roll earlier. */
    rollEarlier() {
      const K = this.K;
      const B = this.B;
      const add = this.add;
      for (let k = this.nHands; k < this.nKeeps; k++) {
        const o = k * 6;
        K[k] = (K[add[o]] + K[add[o + 1]] + K[add[o + 2]] + K[add[o + 3]] + K[add[o + 4]] + K[add[o + 5]]) / 6.0;
      }
      const w = this.subsWidth;
      const subs = this.subs;
      const last = this.nKeeps - 1;
      B[last] = K[last];
      for (let k = last - 1; k >= 0; k--) {
        let m = K[k];
        for (let i = 0; i < w; i++) {
          const x = B[subs[k * w + i]];
          if (x > m) m = x;
        }
        if (k >= this.nHands) B[k] = m;
        else K[k] = m;
      }
    }

    /** The state of a sheet ({box: points, penta_bonus: n}): open boxes, upper subtotal, Penta flag, score. */
    stateOf(sheet) {
      let open = this.boxMask;
      let upper = 0;
      let lower = 0;
      for (const [box, pts] of Object.entries(sheet || {})) {
        if (box === BONUS_KEY) continue;
        const b = this.boxIndex[box];
        if (b === undefined || !this.inGame.includes(box)) throw new AdviceError("unknown box " + JSON.stringify(box));
        if (!Number.isInteger(pts) || pts < 0) throw new AdviceError(box + ": points are a whole number, not " + pts);
        open &= ~(1 << b);
        if (UPPER_IDS.includes(box)) upper += pts;
        else lower += pts;
      }
      const bonus = (sheet && sheet[BONUS_KEY]) || 0;
      const pentaId = this.pentaBox >= 0 ? this.boxIds[this.pentaBox] : null;
      const pentaScored = pentaId !== null && (sheet || {})[pentaId] > 0 ? 1 : 0;
      const upperBonus = upper >= this.cap ? this.upperBonusPoints : 0;
      return {
        openMask: open,
        upper,
        sub: Math.min(upper, this.cap),
        pentaScored,
        score: upper + upperBonus + lower + bonus,
      };
    }

    /** The boxes that may take the dice and their points, and the Penta bonus: rules.legal_scores. */
    legal(dice, openBoxes, pentaScored) {
      let mask = 0;
      for (const box of openBoxes) mask |= 1 << this.boxIndex[box];
      mask &= this.boxMask;
      const h = this.keepOf(dice);
      if (h >= this.nHands) throw new AdviceError("the game uses " + this.dice + " dice");
      const pts = new Int32Array(this.nBoxes);
      const bonus = this.scoreOptions(h, mask, pentaScored ? 1 : 0, pts);
      const out = {};
      for (let b = 0; b < this.nBoxes; b++) if (pts[b] >= 0) out[this.boxIds[b]] = pts[b];
      return { legal: out, bonus };
    }

    /** Every option of a situation ({dice, rolls_left, sheet}) with its value, best first: the answer of
     * `pentadice advise --json` (ties: scoring before keeping, boxes in sheet order, larger keeps first, then by
     * their faces). */
    advise(situation) {
      const dice = checkDice(situation.dice, this.dice);
      const rollsLeft = situation.rolls_left === undefined ? 2 : situation.rolls_left;
      if (!Number.isInteger(rollsLeft) || rollsLeft < 0 || rollsLeft >= this.rolls) {
        throw new AdviceError("rolls left must be 0 to " + (this.rolls - 1) + ", not " + rollsLeft);
      }
      const sheet = situation.sheet || {};
      const st = this.stateOf(sheet);
      if (st.openMask === 0) throw new AdviceError("the sheet is full: the game is over");
      const hand = this.keepOf(dice);
      // The turn (turn.situation_values).
      if (rollsLeft > 0) {
        this.successorRows(st.openMask, st.pentaScored, st.sub);
        this.handValues(st.openMask, st.pentaScored);
        for (let r = 0; r < rollsLeft; r++) this.rollEarlier();
      }
      const pts = new Int32Array(this.nBoxes);
      const bonus = this.scoreOptions(hand, st.openMask, st.pentaScored, pts);
      const ranked = [];
      for (let b = 0; b < this.nBoxes; b++) {
        if (pts[b] < 0) continue;
        const upper = ((this.upperMask >> b) & 1) === 1;
        const added = this.kind[b] === this.K_FACE ? pts[b] : 0;
        const flag = b !== this.pentaBox ? st.pentaScored : pts[b] > 0 ? 1 : 0;
        const nxt = this.value(flag, st.openMask & ~(1 << b), Math.min(st.sub + added, this.cap));
        const rest = nxt + this.upperBonus(st.sub, added) + (pts[b] + bonus);
        const option = {
          action: "score",
          box: this.boxIds[b],
          points: pts[b],
          penta_bonus: bonus,
          upper_bonus: upper ? this.upperBonus(st.sub, pts[b]) : 0,
        };
        ranked.push({ rest, key: [0, b], option });
      }
      if (rollsLeft > 0) {
        for (let i = 0; i < this.subkeepsWidth; i++) {
          const k = this.subkeeps[hand * this.subkeepsWidth + i];
          if (k < 0) break;
          ranked.push({ rest: this.K[k], key: [1, -this.keepFaces[k].length, this.keepFaces[k]], option: { action: "keep", keep: this.keepFaces[k] } });
        }
      }
      let best = -Infinity;
      for (const r of ranked) if (r.rest > best) best = r.rest;
      ranked.sort(compareRanked);
      const options = ranked.map((r) => finish(r, st.score, best));
      const scoring = options.filter((o) => o.action === "score");
      const out = {
        rules: this.name,
        dice,
        rolls_left: rollsLeft,
        sheet: this.sheetDict(sheet),
        score_so_far: st.score,
        best: options[0],
        options,
      };
      const joker = this.jokerNote(hand, dice, sheet, st, scoring);
      if (joker) out.joker = joker;
      if (rollsLeft === 0 && scoring.every((o) => o.points === 0)) out.message = NO_SCORE_MESSAGE;
      return out;
    }

    /** The sheet as Sheet.as_dict: boxes in sheet order, the bonus last when there is one. */
    sheetDict(sheet) {
      const out = {};
      for (const id of this.boxIds) if (sheet[id] !== undefined) out[id] = sheet[id];
      if (sheet[BONUS_KEY]) out[BONUS_KEY] = sheet[BONUS_KEY];
      return out;
    }

    /** advice.joker_note: why the joker shapes the boxes, in English (the page translates it). */
    jokerNote(hand, dice, sheet, st, scoring) {
      if (this.pentaBox < 0 || !this.jokerApplies(hand, st.openMask, st.pentaScored)) return null;
      const face = dice[0];
      const faceId = this.faceBox[face - 1] >= 0 ? this.boxIds[this.faceBox[face - 1]] : null;
      const name = faceId ? this.boxNames[faceId] : String(face);
      const pentaId = this.boxIds[this.pentaBox];
      const penta = this.boxNames[pentaId];
      const why = "a new " + penta + " with the " + penta + " box at " + sheet[pentaId];
      const allowed = scoring.map((o) => o.box);
      // The boxes a joker fills at their points, named from the sheet (RuleSet.joker_boxes).
      const fixed = this.meta.rules_answer.joker_boxes || [];
      if (this.meta.rules_answer.joker === "free") {
        if (!fixed.length) return "Joker: " + why + " and " + name + " filled: any open box";
        const boxes = fixed.map((f) => this.boxNames[f.box]).join(", ");
        return "Joker: " + why + " and " + name + " filled: " + boxes + " score in full; any open box";
      }
      if (allowed.length === 1 && allowed[0] === faceId) {
        return "Joker: " + why + "; the " + name + " box is open, so it must take the roll";
      }
      if (allowed.every((b) => ((this.upperMask >> this.boxIndex[b]) & 1) === 1)) {
        return "Joker: " + why + "; " + name + " and the whole lower section are filled, so an open upper box takes it at 0";
      }
      if (!fixed.length) return "Joker: " + why + "; " + name + " is filled, so any open lower box takes it";
      const listed = fixed.map((f) => this.boxNames[f.box] + " " + f.points).join(", ");
      return "Joker: " + why + "; " + name + " is filled, so any open lower box takes it (" + listed + ")";
    }
  }

  function flat(rows, width) {
    const out = new Int32Array(rows.length * width);
    for (let i = 0; i < rows.length; i++) for (let j = 0; j < width; j++) out[i * width + j] = rows[i][j];
    return out;
  }

  function checkDice(dice, n) {
    if (!Array.isArray(dice) || dice.length !== n) throw new AdviceError("give the " + n + " dice");
    for (const d of dice) if (!Number.isInteger(d) || d < 1 || d > 6) throw new AdviceError("a die shows 1 to 6, not " + d);
    return dice.slice().sort((a, b) => a - b);
  }

  function compareRanked(x, y) {
    if (x.rest !== y.rest) return y.rest - x.rest;
    const a = x.key;
    const b = y.key;
    if (a[0] !== b[0]) return a[0] - b[0];
    if (a[0] === 0) return a[1] - b[1];
    if (a[1] !== b[1]) return a[1] - b[1];
    for (let i = 0; i < a[2].length; i++) if (a[2][i] !== b[2][i]) return a[2][i] - b[2][i];
    return 0;
  }

  function finish(r, soFar, best) {
    const o = r.option;
    const value = soFar + r.rest;
    const loss = best - r.rest;
    if (o.action === "keep") return { action: "keep", keep: o.keep.slice(), value, loss };
    return { action: "score", box: o.box, points: o.points, penta_bonus: o.penta_bonus, upper_bonus: o.upper_bonus, value, loss };
  }

  async function sha256Hex(buffer) {
    const digest = await globalThis.crypto.subtle.digest("SHA-256", buffer);
    return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
  }

  /** A rule set's tables fetched from `base` (e.g. "/app-tables"), the values checked against their SHA-256. */
  async function load(base, name, options) {
    const opts = options || {};
    const get = opts.fetch || globalThis.fetch.bind(globalThis);
    const metaRes = await get(base + "/" + encodeURIComponent(name) + ".json");
    if (!metaRes.ok) throw new AdviceError("the " + name + " tables cannot be had (HTTP " + metaRes.status + ")");
    const meta = await metaRes.json();
    // The values' address carries their SHA-256: a new table is a new address (the service worker keeps them).
    const valuesRes = await get(base + "/" + encodeURIComponent(meta.values.file) + "?sha256=" + meta.values.sha256);
    if (!valuesRes.ok) throw new AdviceError("the " + name + " values cannot be had (HTTP " + valuesRes.status + ")");
    const buffer = await valuesRes.arrayBuffer();
    if (opts.verify !== false && globalThis.crypto && globalThis.crypto.subtle) {
      const sha = await sha256Hex(buffer);
      if (sha !== meta.values.sha256) throw new AdviceError("the " + name + " values are damaged (SHA-256 differs)");
    }
    return new Tables(meta, buffer);
  }

  return { Tables, AdviceError, load, sha256Hex, NO_SCORE_MESSAGE, FORMAT };
});
