/* The JS advisor against the Python advisor's answers (tests/test_js_advisor.py writes them: each case's
 * "expect" is `pentadice advise --batch`'s answer, options best first): run by Node
 * (tests/js/check_advisor.mjs) and in Chromium on the same cases. UMD: globalThis.PentaCompare in a page. */
(function (root, factory) {
  if (typeof module === "object" && module.exports) module.exports = factory();
  else root.PentaCompare = factory();
})(typeof globalThis !== "undefined" ? globalThis : this, function () {
  "use strict";
  const TOLERANCE = 1e-9;

  function keyOf(o) {
    return o.action === "score"
      ? "s:" + o.box + ":" + o.points + ":" + o.penta_bonus + ":" + o.upper_bonus
      : "k:" + o.keep.join("");
  }

  /** Whether `got` (a key) is an acceptable first option of `expected` ([[key, value], ...] best first, already
   * filtered to one kind): the same key, or one of equal value within the tolerance (a tie). */
  function sameBest(expected, got) {
    if (!expected.length) return got === null;
    if (got === null) return false;
    if (expected[0][0] === got) return true;
    const top = expected[0][1];
    return expected.some(([k, v]) => k === got && Math.abs(v - top) <= TOLERANCE);
  }

  /** Checks every advice case: the same options (boxes with their points and bonuses, keeps), each value within
   * 1e-9, the same best option, best box and best keep (but for ties within 1e-9), the same joker note and
   * message. Returns {checked, mismatches: [first few], maxError}. */
  function checkAdvice(tables, cases) {
    const mismatches = [];
    let maxError = 0;
    for (let i = 0; i < cases.length; i++) {
      const c = cases[i];
      const problems = [];
      let got;
      try {
        got = tables.advise({ dice: c.dice, rolls_left: c.rolls_left, sheet: c.sheet });
      } catch (e) {
        problems.push("error: " + e.message);
      }
      if (got) {
        const mine = new Map(got.options.map((o) => [keyOf(o), o.value]));
        const theirs = c.expect.options.map((o) => [keyOf(o), o.value]); // best first
        if (mine.size !== theirs.length) problems.push("options: " + mine.size + " not " + theirs.length);
        for (const [k, v] of theirs) {
          if (!mine.has(k)) {
            problems.push("missing option " + k);
            continue;
          }
          const err = Math.abs(mine.get(k) - v);
          if (!(err <= TOLERANCE)) problems.push(k + ": " + mine.get(k) + " not " + v);
          if (err > maxError) maxError = err;
        }
        const firstOf = (kind) => {
          const o = got.options.find((x) => x.action === kind);
          return o ? keyOf(o) : null;
        };
        if (!sameBest(theirs, keyOf(got.best))) problems.push("best " + keyOf(got.best) + " not " + theirs[0][0]);
        for (const kind of ["score", "keep"]) {
          const prefix = kind === "score" ? "s:" : "k:";
          if (!sameBest(theirs.filter(([k]) => k.startsWith(prefix)), firstOf(kind))) problems.push("best " + kind + " " + firstOf(kind));
        }
        if ((got.joker || null) !== (c.expect.joker || null)) problems.push("joker " + got.joker + " not " + c.expect.joker);
        if ((got.message || null) !== (c.expect.message || null)) problems.push("message " + got.message);
        if (JSON.stringify(got.sheet) !== JSON.stringify(c.expect.sheet)) problems.push("sheet " + JSON.stringify(got.sheet));
        if (JSON.stringify(got.dice) !== JSON.stringify(c.expect.dice) || got.rolls_left !== c.expect.rolls_left) problems.push("dice");
        if (got.score_so_far !== c.expect.score_so_far) problems.push("score so far " + got.score_so_far);
      }
      if (problems.length && mismatches.length < 5) mismatches.push({ case: i, situation: c, problems: problems.slice(0, 5) });
      else if (problems.length) mismatches.push({ case: i });
    }
    return { checked: cases.length, mismatches: mismatches.length, first: mismatches.slice(0, 5), maxError };
  }

  /** Checks the legal boxes, their points and the Penta bonus against rules.legal_scores' answers. */
  function checkLegal(tables, cases) {
    const bad = [];
    for (let i = 0; i < cases.length; i++) {
      const c = cases[i];
      const got = tables.legal(c.dice, c.open, c.penta_scored);
      const same =
        got.bonus === c.bonus &&
        JSON.stringify(Object.entries(got.legal).sort()) === JSON.stringify(Object.entries(c.legal).sort());
      if (!same) bad.push({ case: c, got });
    }
    return { checked: cases.length, mismatches: bad.length, first: bad.slice(0, 5) };
  }

  return { checkAdvice, checkLegal, keyOf, TOLERANCE };
});
