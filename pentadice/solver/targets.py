"""Target scores: P*(s, t), the highest probability of scoring at least ``t`` more points from state ``s``.

The backward pass is the values' (``pentadice.solver.turn``), with other lanes: one row per state holds one lane per
target ``t = 0, 1, ...`` (points still needed), and each target has its own optimal policy:

1. hand values after the last roll: per lane, the best legal box, ``max_b P*(next_b, t - gain_b)``, where a
   box's gain is its points, the Penta bonus and the upper bonus, and ``P*(., t') = 1`` for ``t' <= 0``: a
   shift of the next state's row by the gain;
2. keep values: the mean over the six faces of the keep one die larger (lane by lane);
3. best sub-keeps: the best keep inside a multiset, lane by lane (each lane its own policy).

A state's row is as long as it needs to be: lanes past the longest successor row plus the largest gain of a
turn are exactly 0, and trailing lanes below :data:`EPS` are cut (each cut moves an earlier state's
probability by at most ``EPS``: the turn is a max and a mean, which never enlarge a difference; ``n`` layers
give at most ``n EPS``).

Every size comes from the rule set's parameter vector ``p`` (boxes, successor rows, the Penta box if any) and
the arrays' shapes, so one kernel serves every sheet (13 boxes and 5 dice, Yatzy's 15, 6 dice).

Kiriki: a state whose Kiriki box holds points comes back to itself when five of a kind is added to the box,
gaining ``penta_points`` (50) points. Lane ``t`` then reads the state's own lane ``t - 50``: the lanes are
solved in windows of 50, in increasing order, each window reading only windows already done. This is exact (no
iteration to a fixed point); rows stop once a window is below ``EPS`` past every successor's reach.

Plain Python that Numba compiles (:func:`compiled`), the rules' functions rebound to their compiled versions;
the advisor runs the same functions uncompiled for one situation and one lane (:func:`situation_targets`).
"""

from __future__ import annotations

import functools
import math
import types
from dataclasses import dataclass

import numpy as np

from pentadice.game import rules
from pentadice.game.rules import box_successor, comes_back, hand_options, score_options, successors, upper_bonus

EPS = 1e-10  # trailing lanes below this are cut to 0 (see the module's docstring)
TILE = 128  # lanes computed together: a tile's rows of every keep (2 x 462 x 128 float64) stay in a core's L2 cache
MAX_STATES = 4_000_000  # table entries (flags x masks x subtotals) above this are refused (see refusal)


def successor_targets(p, n_dice, off, ln, open_mask, flag, sub, self_len, r_off, r_len, r_ub, r_self):
    """Where the row of each way to fill a box lies (``r_off``, ``r_len``; ``r_self``: this state's own row,
    Kiriki, ``self_len`` lanes long so far), and the upper bonus it pays (``r_ub``), by the successor rows of
    :func:`pentadice.game.rules.successors`. Returns the largest length of a successor's row (the state's own
    excepted)."""
    cap = p[rules.P_UPPER_THRESHOLD]
    for r in range(p[rules.P_N_ROWS]):  # rows no way to fill a box leads to: empty
        r_len[r] = 0
        r_self[r] = 0
    succ, own = successors(p, n_dice, open_mask, flag)
    longest = 0
    for i in range(succ.shape[0]):
        r, a = succ[i, rules.S_ROW], succ[i, rules.S_ADD]
        nsub = min(sub + a, cap)
        r_off[r] = off[succ[i, rules.S_FLAG], succ[i, rules.S_MASK], nsub]
        r_len[r] = ln[succ[i, rules.S_FLAG], succ[i, rules.S_MASK], nsub]
        r_ub[r] = upper_bonus(p, sub, a)
        if r != own:
            longest = max(longest, r_len[r])
    if own >= 0:
        r_len[own] = self_len
        r_self[own] = 1
    return longest


def hand_targets(opt_row, opt_gain, n_opt, prev, cur, r_off, r_len, r_ub, r_self, a, b, K):
    """``K[h, t - a]`` for ``a <= t < b``: per target lane ``t``, the best legal box for hand ``h`` after the
    last roll. (A tile of lanes at a time: the keeps' rows of a tile stay in the processor's cache.)

    The hands' options are :func:`pentadice.game.rules.hand_options`'s (``opt_gain``: points and Penta bonus);
    ``prev`` holds the rows of the states one box fuller, ``cur`` this state's own (Kiriki); the ``r_*`` arrays
    (:func:`successor_targets`) say where each way to fill a box leads.
    """
    for h in range(n_opt.shape[0]):
        best = K[h]
        for c in range(b - a):
            best[c] = 0.0
        for i in range(n_opt[h]):
            r = opt_row[h, i]
            g = int(opt_gain[h, i]) + r_ub[r]
            src = cur if r_self[r] == 1 else prev
            top = min(b, g + 1)  # t - g <= 0: the target is already met
            for c in range(top - a):
                best[c] = 1.0
            lo = max(a, g + 1)
            hi = min(b, g + r_len[r])  # past the next row's end its probabilities are 0
            base = r_off[r] - g  # lane t reads the next row's lane t - g
            if hi > lo:
                srow = src[base + lo : base + hi]
                krow = best[lo - a : hi - a]
                for c in range(hi - lo):
                    x = srow[c]
                    y = krow[c]
                    krow[c] = x if x > y else y  # a select, not a branch: it vectorises


def keep_targets(add, n_hands, K, w):
    """Rows ``n_hands..`` of ``K``, columns ``:w``: each keep's probability, the mean over the six faces.

    (Row views indexed by the loop's counter: plain offsets the loop vectoriser packs into vector instructions.)
    """
    for k in range(n_hands, K.shape[0]):
        r0 = K[add[k, 0]]
        r1 = K[add[k, 1]]
        r2 = K[add[k, 2]]
        r3 = K[add[k, 3]]
        r4 = K[add[k, 4]]
        r5 = K[add[k, 5]]
        out = K[k]
        for t in range(w):
            out[t] = (r0[t] + r1[t] + r2[t] + r3[t] + r4[t] + r5[t]) / 6.0


def best_subkeep_targets(subs, n_hands, K, B, w):
    """As ``turn.best_subkeeps``, column by column over ``:w``: each lane (target) picks its own best keep (a
    keep has up to five smaller keeps with 5 dice, six with 6: ``subs``' columns)."""
    six = subs.shape[1] > 5
    last = K.shape[0] - 1
    for t in range(w):
        B[last, t] = K[last, t]
    for k in range(last - 1, -1, -1):
        b0 = B[subs[k, 0]]
        b1 = B[subs[k, 1]]
        b2 = B[subs[k, 2]]
        b3 = B[subs[k, 3]]
        b4 = B[subs[k, 4]]
        b5 = B[subs[k, 5]] if six else b4
        own = K[k]
        out = B[k] if k >= n_hands else K[k]
        for t in range(w):
            m = own[t]
            x = b0[t]
            m = x if x > m else m
            x = b1[t]
            m = x if x > m else m
            x = b2[t]
            m = x if x > m else m
            x = b3[t]
            m = x if x > m else m
            x = b4[t]
            m = x if x > m else m
            x = b5[t]
            m = x if x > m else m
            out[t] = m


def target_states(
    prev, cur, off, ln, alloc, p, n_dice, counts, scores, add, subs, weight, flags, masks, subtotals, gmax, lo, hi
):
    """The row of every state ``i`` in ``lo <= i < hi`` (``flags[i], masks[i], subtotals[i]``), written into
    ``cur`` at ``off[state]`` (room for ``alloc[i]`` lanes), its length into ``ln[state]``.

    ``gmax``: the largest gain of one turn. One function rather than one call per state: each level of compiled
    calls costs compile time on a first run.
    """
    n_hands = weight.shape[0]
    K = np.empty((counts.shape[0], TILE))
    B = np.empty((counts.shape[0], TILE))
    acc = np.empty(TILE)
    r_off = np.zeros(p[rules.P_N_ROWS], dtype=np.int64)
    r_len = np.zeros(p[rules.P_N_ROWS], dtype=np.int64)
    r_ub = np.zeros(p[rules.P_N_ROWS], dtype=np.int64)
    r_self = np.zeros(p[rules.P_N_ROWS], dtype=np.int64)
    total = float(6**n_dice)
    step = p[rules.P_PENTA_POINTS]
    for i in range(lo, hi):
        flag = flags[i]
        open_mask = masks[i]
        sub = subtotals[i]
        o = off[flag, open_mask, sub]
        room = alloc[i]
        # Lanes past every successor's row plus the largest gain are 0.
        reach = max(1, successor_targets(p, n_dice, off, ln, open_mask, flag, sub, 0, r_off, r_len, r_ub, r_self))
        _, opt_row, opt_gain, n_opt, _ = hand_options(p, counts[:n_hands], scores, open_mask, flag)
        reach += gmax
        repeating = comes_back(p, open_mask, flag)
        n = min(room, reach) if not repeating else room
        window = n if not repeating else step  # Kiriki: windows that read only windows already solved
        wa = 0
        while wa < n:
            wb = min(n, wa + window)
            top = 0.0
            successor_targets(p, n_dice, off, ln, open_mask, flag, sub, wa, r_off, r_len, r_ub, r_self)
            for a in range(wa, wb, TILE):  # tiles of lanes: independent of each other
                b = min(wb, a + TILE)
                w = b - a
                hand_targets(opt_row, opt_gain, n_opt, prev, cur, r_off, r_len, r_ub, r_self, a, b, K)
                for _ in range(p[rules.P_ROLLS] - 1):
                    keep_targets(add, n_hands, K, w)
                    best_subkeep_targets(subs, n_hands, K, B, w)
                for c in range(w):
                    acc[c] = 0.0
                for h in range(n_hands):
                    x = float(weight[h])
                    row = K[h]
                    for c in range(w):
                        acc[c] += x * row[c]
                for c in range(w):
                    y = acc[c] / total
                    cur[o + a + c] = y
                    top = max(top, y)
            wa = wb
            if repeating and wa >= reach and top < EPS:
                n = wa
        while n > 1 and cur[o + n - 1] < EPS:
            n -= 1
        ln[flag, open_mask, sub] = n


def situation_targets(
    p, n_dice, n_hands, counts, scores, add, subs, buf, off, ln, hand, open_mask, flag, sub, t, rerolls, K, B, points
):
    """One situation, one target ``t`` (one lane): ``K[k, 0]`` the probability of keeping multiset ``k`` and
    rerolling the rest (with ``rerolls`` rerolls left, when there are), and the returned array: per box the
    probability of scoring the dice now (-1 where the box may not take them). ``buf``/``off``/``ln`` hold the
    rows of the next states (and of this state, Kiriki)."""
    n_boxes = p[rules.P_N_BOXES]
    if rerolls > 0:
        r_off = np.zeros(p[rules.P_N_ROWS], dtype=np.int64)
        r_len = np.zeros(p[rules.P_N_ROWS], dtype=np.int64)
        r_ub = np.zeros(p[rules.P_N_ROWS], dtype=np.int64)
        r_self = np.zeros(p[rules.P_N_ROWS], dtype=np.int64)
        self_len = ln[flag, open_mask, sub]
        successor_targets(p, n_dice, off, ln, open_mask, flag, sub, self_len, r_off, r_len, r_ub, r_self)
        _, opt_row, opt_gain, n_opt, _ = hand_options(p, counts[:n_hands], scores, open_mask, flag)
        hand_targets(opt_row, opt_gain, n_opt, buf, buf, r_off, r_len, r_ub, r_self, t, t + 1, K)
        for _ in range(rerolls):
            keep_targets(add, n_hands, K, 1)
            best_subkeep_targets(subs, n_hands, K, B, 1)
    out = np.full(n_boxes, -1.0)
    cap = p[rules.P_UPPER_THRESHOLD]
    bonus = score_options(p, counts[hand], open_mask, flag, points)
    for bx in range(n_boxes):
        pts = points[bx]
        if pts < 0:
            continue
        nmask, nflag, added = box_successor(p, bx, pts, open_mask, flag)
        nsub = min(sub + added, cap)
        j = t - (pts + bonus + upper_bonus(p, sub, added))
        if j <= 0:
            out[bx] = 1.0
        elif j < ln[nflag, nmask, nsub]:
            out[bx] = buf[off[nflag, nmask, nsub] + j]
        else:
            out[bx] = 0.0
    return out


def quantize(rows: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, ...]:
    """Rows ``rows[starts[i] : starts[i] + lengths[i]]`` (non-increasing, from 1) as uint16 fixed point
    ``round(P * 65535)``: ``(first, count, data)`` with lanes below ``first`` at 1 (65535), the ``count`` lanes
    after them in ``data`` (rows one after another), 0 beyond."""
    total = int(lengths.sum())
    ends = np.cumsum(lengths)
    within = np.arange(total) - np.repeat(ends - lengths, lengths)
    q = np.rint(rows[np.repeat(starts, lengths) + within] * QUANT).astype(np.uint16)
    row_of = np.repeat(np.arange(len(lengths)), lengths)
    ones = q == QUANT
    mid = ~ones & (q != 0)
    first = np.bincount(row_of[ones], minlength=len(lengths))
    count = np.bincount(row_of[mid], minlength=len(lengths))
    return first, count, q[mid]


QUANT = 65535  # stored probabilities: uint16 fixed point, q / 65535


KERNELS = (successor_targets, hand_targets, keep_targets, best_subkeep_targets, target_states)


@functools.cache
def compiled() -> types.SimpleNamespace:
    """The kernels compiled by Numba (releasing the GIL), with the rules' functions rebound to compiled ones.

    Imported and compiled late: quick commands never pay for Numba."""
    from pentadice.solver.compiled import jit
    from pentadice.solver.kernels import drop_stale_cache, narrow

    done = {
        name: getattr(narrow, name)
        for name in ("score_options", "upper_bonus", "box_successor", "comes_back", "hand_options", "successors")
    }
    for fn in KERNELS:
        scope = dict(fn.__globals__)
        scope.update(done)
        clone = types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__, fn.__closure__)
        clone.__qualname__ = f"targets_{fn.__qualname__}"
        clone.__module__ = fn.__module__
        done[fn.__name__] = jit(clone, nogil=True)
    drop_stale_cache([done[fn.__name__] for fn in KERNELS])  # they compile in rules.py's functions too
    return types.SimpleNamespace(**done)


@functools.cache
def repeats(rs) -> int:
    """Kiriki: how many five of a kinds added to the box a row makes room for: with ``q`` the chance of rolling
    all dice alike in a turn (keeping the largest group: about 4.6 % with 5 dice and 3 rolls), ``q ** repeats``
    is far below :data:`EPS` (the rows stop earlier, once they are below it)."""
    n = rs.dice
    chance = np.zeros(n + 1)  # chance[c]: c dice alike kept so far
    chance[1] = 1.0  # one die is always "alike"
    for _ in range(rs.rolls):
        nxt = np.zeros(n + 1)
        for c in range(1, n + 1):
            if c == n:
                nxt[n] += chance[c]
                continue
            free = n - c  # roll the others: the kept face again, or (c == 1) any face repeated
            for hits in range(free + 1):
                p_hits = math.comb(free, hits) * (1 / 6) ** hits * (5 / 6) ** (free - hits)
                nxt[max(c + hits, 1)] += chance[c] * p_hits
        chance = nxt
    q = min(max(chance[n], 1e-3), 0.999)
    return math.ceil(2 * math.log(EPS) / math.log(q)) + 1


@functools.cache
def box_max(rs) -> tuple[int, ...]:
    """The most points each box of the sheet can take from one roll (from the rules' score table; a box the
    joker fills at its points at least those), 0 for a box the game does not have."""
    from pentadice.game import rules

    table = rules.score_table(rs)[:, : rs.n_boxes]
    out = []
    for b, box in enumerate(rs.sheet):
        if not (rs.box_mask >> b) & 1:
            out.append(0)
            continue
        top = int(table[:, b].max(initial=0))
        if box.kind in (*rules.FIXED_KINDS, rules.K_ALL_ALIKE, rules.K_PENTA):
            top = max(top, box.points)
        out.append(top)
    return tuple(out)


def penta_bonus(rs) -> int:
    """The bonus a further five of a kind pays (0 without a Penta box)."""
    return int(rs.params()[rules.P_PENTA_BONUS])


def max_gain(rs) -> int:
    """The most points one turn can add: a box's points, the Penta bonus and the upper bonus."""
    return max(box_max(rs), default=0) + penta_bonus(rs) + rs.upper_bonus


def bound(rs, flag: int, open_mask: int, sub: int) -> int:
    """An upper bound on the points still to come from a state (Kiriki: with :func:`repeats` repeats)."""
    most = box_max(rs)
    total = sum(most[b] for b in range(rs.n_boxes) if (open_mask >> b) & 1)
    if open_mask & rs.upper_mask and sub < rs.upper_threshold:
        total += rs.upper_bonus
    total += penta_bonus(rs) * bin(open_mask).count("1")
    if rs.penta_repeat and rs.penta_box >= 0:
        total += repeats(rs) * rs.penta_points
    return total


def refusal(rs) -> str | None:
    """Why the target table of ``rs`` is not built (too large), or None. Penta's table has 1.0M entries (2
    flags x 8,192 masks x 64 subtotals) and holds 1.5 GB of float64 rows at once; the rows grow with the
    states of a layer, so the table is refused past :data:`MAX_STATES` entries."""
    flags, masks, subs = rs.table_shape
    entries = flags * masks * subs
    if entries <= MAX_STATES:
        return None
    per = 1.54e9 / (2 * 8192 * 64)  # bytes of float64 rows per entry held at once, as measured for Penta
    return (
        f"the target table of {rs.title} is too large to build in memory: {entries:,} states ({rs.n_boxes} boxes: "
        f"2**{rs.n_boxes} = {masks:,} box masks x {subs} upper subtotals"
        + (f" x {flags} Penta flags" if flags > 1 else "")
        + f"), about {entries * per / 1e9:,.0f} GB of float64 rows at once and {entries * 400 / 1e9:,.0f} GB on "
        f"disk; the limit is {MAX_STATES:,} states (Penta: {2 * 8192 * 64:,})"
    )


@dataclass
class Built:
    """A built target table: per state ``[flag, open_mask, subtotal]`` the lanes at 1 (``first``, -1 where the
    state cannot occur), the stored lanes (``count``) and where they start in ``data`` (``offset``)."""

    first: np.ndarray
    count: np.ndarray
    offset: np.ndarray
    data: np.ndarray
    seconds: float
    compile_seconds: float
    threads: int
    lanes: int  # lane-states computed
    longest: int  # the longest row (targets up to longest - 1)
    peak_layer_bytes: int  # the float64 rows held at once (two layers)


def compile_kernels(rs) -> float:
    """Compile (or load from Numba's cache) the target kernels; returns the seconds it took."""
    import time

    from pentadice.game import rules
    from pentadice.solver.turn_inputs import turn_inputs

    start = time.perf_counter()
    k = compiled()
    small = rules.PENTA_RULES.reduced(dice=rs.dice)  # the kernels' types do not depend on the sheet
    shape = (2, 1 << small.n_boxes, 64)
    z = np.zeros(0, dtype=np.int64)
    k.target_states(
        np.zeros(1), np.zeros(1), np.zeros(shape, np.int64), np.zeros(shape, np.int64), z,
        *turn_inputs(small).layer(), z, z, z, 1, 0, 0,
    )  # fmt: skip
    return time.perf_counter() - start


def layers(rs) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The reachable states by number of open boxes: ``(flags, masks, subtotals)`` per layer, 1 box open first."""
    from pentadice.game import states

    reach = states.reachable(rs)
    flags, masks, subs = np.nonzero(reach)
    pop = np.bitwise_count(masks.astype(np.uint64)).astype(np.int64)
    out = []
    for k in range(1, int(pop.max()) + 1):
        sel = pop == k
        out.append(tuple(np.ascontiguousarray(x[sel].astype(np.int64)) for x in (flags, masks, subs)))
    return out


PARTS_PER_THREAD = 4
PART_STATES = 2000  # at most this many states a part: a Ctrl-C waits for one part at most
PART_LANES = 200_000  # and at most this many lanes (the work of a part; about 0.3 s of one core, Kiriki's)


def part_cuts(alloc: np.ndarray, threads: int) -> np.ndarray:
    """Where a layer of states (``alloc[i]`` lanes each) is cut into parts: at least ``PARTS_PER_THREAD``
    parts a thread, each of at most :data:`PART_STATES` states and about :data:`PART_LANES` lanes (a state's
    row is never cut); increasing, from 0 to ``len(alloc)``."""
    n = len(alloc)
    n_parts = max(threads * PARTS_PER_THREAD, -(-n // PART_STATES), -(-int(np.sum(alloc)) // PART_LANES), 1)
    ends = np.cumsum(alloc, dtype=np.int64)
    marks = np.linspace(0, int(ends[-1]) if n else 0, n_parts + 1)[1:-1]
    by_lanes = np.searchsorted(ends, marks, side="right")  # cut after the state where each mark falls
    by_states = np.arange(PART_STATES, n, PART_STATES)
    return np.unique(np.concatenate(([0], by_lanes, by_states, [n]))).astype(int)


def build(rs, threads: int = 1, progress=None, rows: dict | None = None, check=None) -> Built:
    """P*(s, t) for every reachable state of ``rs`` and every target, layer by layer (two layers of float64
    rows in memory at once), the states of a layer shared out among ``threads`` threads; stored as
    :func:`quantize` says. Given ``rows`` (a dict; small games, for checks), the float64 row of every state
    ``(flag, open_mask, subtotal)`` is put there too. ``check`` is called after each part of a layer (a
    Ctrl-C raised there stops the build within seconds)."""
    import itertools
    import time
    from concurrent.futures import ThreadPoolExecutor

    from pentadice.solver.turn_inputs import turn_inputs

    reason = refusal(rs)
    if reason:
        raise ValueError(reason)
    compile_seconds = compile_kernels(rs)
    k = compiled()
    start = time.perf_counter()
    inputs = turn_inputs(rs).layer()
    shape = rs.table_shape
    off = np.zeros(shape, dtype=np.int64)
    ln = np.zeros(shape, dtype=np.int64)
    first = np.full(shape, -1, dtype=np.int64)
    count = np.zeros(shape, dtype=np.int64)
    ln[:, 0, :] = 1  # game over: P = 1 for t <= 0, 0 beyond
    first[:, 0, :] = 1
    prev = np.ones(1)
    gmax = max_gain(rs)
    chunks: list[np.ndarray] = []
    lanes = longest = peak = 0
    all_layers = layers(rs)
    pool = ThreadPoolExecutor(threads) if threads > 1 else None
    try:
        for i, (flags, masks, subs) in enumerate(all_layers):
            alloc = np.array([bound(rs, f, m, s) + 1 for f, m, s in zip(flags, masks, subs, strict=True)])
            starts = np.concatenate(([0], np.cumsum(alloc)[:-1])).astype(np.int64)
            off[flags, masks, subs] = starts
            cur = np.empty(int(alloc.sum()))
            peak = max(peak, cur.nbytes + prev.nbytes)
            args = (prev, cur, off, ln, alloc, *inputs, flags, masks, subs, gmax)
            # Parts of at most PART_STATES states and PART_LANES lanes, so that ``check`` (a Ctrl-C) is heard
            # within a part, not a layer (Kiriki's rows are long: a part of states alone took seconds).
            cuts = part_cuts(alloc, threads)
            if pool is None:
                for a, b in itertools.pairwise(cuts):
                    if b > a:
                        k.target_states(*args, a, b)
                        if check is not None:
                            check()
            else:
                parts = [pool.submit(k.target_states, *args, a, b) for a, b in itertools.pairwise(cuts) if b > a]
                for part in parts:
                    part.result()
                    if check is not None:
                        check()
            lengths = ln[flags, masks, subs]
            if rows is not None:
                for f, m, s, a, n in zip(flags, masks, subs, starts, lengths, strict=True):
                    rows[int(f), int(m), int(s)] = cur[a : a + n].copy()
            lanes += int(lengths.sum())
            longest = max(longest, int(lengths.max()))
            f1, c1, data = quantize(cur, starts, lengths)
            first[flags, masks, subs] = f1
            count[flags, masks, subs] = c1
            chunks.append(data)
            prev = cur
            if progress is not None:
                progress(i + 1, len(all_layers))
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
    data = np.concatenate(chunks) if chunks else np.zeros(0, np.uint16)
    offset = np.zeros(shape, dtype=np.int64)
    # Rows lie in data layer by layer, in the order of layers(); their offsets follow from the counts.
    seq = np.concatenate([np.ravel_multi_index((f, m, s), shape) for f, m, s in all_layers])
    counts = count.ravel()[seq]
    offset.ravel()[seq] = np.cumsum(counts) - counts
    return Built(
        first, count, offset, data, time.perf_counter() - start, compile_seconds, threads, lanes, longest, peak
    )
