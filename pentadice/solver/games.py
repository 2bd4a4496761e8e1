"""Whole games played by compiled code, for the simulator: the optimal strategy, or any strategy that a value
table stands for (the greedy one is a table of zeros: each turn then maximises its own points).

The dice come from a counter-based generator: die ``i`` of roll ``r`` of turn ``t`` of game ``g`` is a hash of
the run's key and of ``(g, t, r, i)`` (SplitMix64's mixing function; a draw that would favour a face is drawn
again), so that a game's dice depend on its seed and its number only: the same games whatever the chunk of
games it is played in and whatever the number of threads, drawn as they are needed (no dice held in memory).
:func:`pentadice.simulator.simulate.game_dice` computes the same dice in NumPy, to replay a game.

The games are played in step, turn by turn: the games whose sheets have the same open boxes (and Penta flag,
where the sheet has a Penta box) make a group; a state's key is ``open_mask * n_flags + flag`` (:func:`n_keys`),
``n_flags`` 2 with a Penta box, else 1. A group of at least ``wide_from`` games (:func:`wide_from`) shares one
computation of the turn's values for all the rule set's lanes of upper subtotals (the solver's wide kernels for
``RuleSet.lanes``, the same compiled code), and each game reads the lane of its own subtotal. A smaller group
(nearly all of them past the first turns of a sheet of many boxes, such as Maxi Yatzy's 20, where a game is
soon alone in its state) makes one unit per subtotal its games have. On a sheet without a Penta box, the units
of a turn are computed ``RuleSet.lanes`` at a time, one state per lane (:func:`batch_levels`); with one (whose
five-alike hands score by the state), one at a time in one lane (:func:`lane_levels`). Each lane's arithmetic
is the same every way, so the values, and the games, have the same bits however the groups go (tested):
``wide_from`` sets the speed only. The table is read as solved, never copied. Sizes (boxes, successor rows,
lanes) come from the rule set's parameters and the arrays, never from constants. No kernel is
``parallel=True`` (its compilation costs seconds): the simulator plays each turn of a chunk in Python threads,
each thread a share of the turn's groups (:func:`play_turn`). Everything the games call is the solver's compiled
code or in this file: a first ``simulate`` after a ``solve`` compiles this file's functions and the
``play_turn`` and ``batch_levels`` of the rule set's lanes.
"""

from __future__ import annotations

import types

import numpy as np

from pentadice.game import rules
from pentadice.solver import kernels
from pentadice.solver.compiled import jit
from pentadice.solver.kernels import drop_stale_cache

P_ROLLS = rules.P_ROLLS
P_UPPER_THRESHOLD = rules.P_UPPER_THRESHOLD
P_N_BOXES = rules.P_N_BOXES
P_N_ROWS = rules.P_N_ROWS
P_PENTA_BOX = rules.P_PENTA_BOX
SHARED_GROUP = 2048  # games of one state from which the threads share the group (each computes its values)

# The dice generator: counter (g * GAME_STRIDE + (t * 4 + r) * 8 + i) spread by GOLDEN, mixed by SplitMix64.
MAX_TURNS = 64  # a game needing more turns (Kiriki's extra turns: odds far below 1e-40) is reported as an error
GAME_STRIDE = np.uint64(MAX_TURNS * 4 * 8)
GOLDEN = np.uint64(0x9E3779B97F4A7C15)
MIX1 = np.uint64(0xBF58476D1CE4E5B9)
MIX2 = np.uint64(0x94D049BB133111EB)
FAIR_LIMIT = np.uint64(2**64 - 2**64 % 6)  # draws at or above it would favour faces 1 to 4: drawn again
SIX = np.uint64(6)


def n_keys(rs: rules.RuleSet) -> int:
    """The number of state keys ``open_mask * rs.n_flags + flag`` of a rule set (the grouping's buckets)."""
    return rs.n_flags << rs.n_boxes


@jit
def die(key, game, t, roll, i):
    """Face (1-6) of die ``i`` of roll ``roll`` of turn ``t`` of game ``game`` in the run of ``key``: SplitMix64's
    mixing function of the counter, mixed again while the draw would favour a face."""
    z = key + (np.uint64(game) * GAME_STRIDE + np.uint64((t * 4 + roll) * 8 + i)) * GOLDEN
    while True:
        z = (z ^ (z >> np.uint64(30))) * MIX1
        z = (z ^ (z >> np.uint64(27))) * MIX2
        z = z ^ (z >> np.uint64(31))
        if z < FAIR_LIMIT:
            return np.int64(z % SIX) + 1
        z = z + GOLDEN


@jit
def group_games(masks, penta_scored_flags, n_flags, order, starts):
    """Group the games by state (a counting sort on the key ``masks * n_flags + penta_scored_flags``, ``starts``
    holding :func:`n_keys` + 1 entries): the games of key ``k`` are ``order[starts[k - 1]:starts[k]]``, the
    finished ones (keys below ``n_flags``) first. Returns how many games are still playing."""
    n_games = masks.shape[0]
    for k in range(starts.shape[0]):
        starts[k] = 0
    for g in range(n_games):
        starts[masks[g] * n_flags + penta_scored_flags[g] + 1] += 1
    for k in range(starts.shape[0] - 1):
        starts[k + 1] += starts[k]
    for g in range(n_games):
        k = masks[g] * n_flags + penta_scored_flags[g]
        order[starts[k]] = g
        starts[k] += 1
    return n_games - starts[n_flags - 1]


@jit(nogil=True)
def final_hand(L, n_dice, n_rolls, size, add, subkeeps, key, game, t, sub):
    """The hand a game ends turn ``t`` with, keeping at each roll what its lane ``sub`` of the turn values ``L``
    says is best (scoring now, the whole hand, wins ties; see :func:`play_turn`): the first roll's dice added to
    the empty keep one by one, then each reroll's. The solitaire and the multiplayer simulators share it."""
    hand = add.shape[0] - 1
    for d in range(n_dice):
        hand = add[hand, die(key, game, t, 0, d) - 1]
    for r in range(n_rolls - 1, 0, -1):  # r rerolls left: score now, or keep the best sub-keep
        best = L[0, hand, sub]
        choice = -1
        for j in range(subkeeps.shape[1]):
            kept = subkeeps[hand, j]
            if kept < 0:
                break
            if L[r, kept, sub] > best:
                best = L[r, kept, sub]
                choice = kept
        if choice < 0:
            break
        hand = choice
        for d in range(n_dice - size[choice]):
            hand = add[hand, die(key, game, t, n_rolls - r, d) - 1]
    return hand


# The one-lane turn functions (the advisor's), for groups of few games (see play_turn).
narrow_successor_rows = kernels.narrow.successor_rows
narrow_score_options = kernels.narrow.score_options
narrow_successor_row = kernels.narrow.successor_row
narrow_keep_values = kernels.narrow.keep_values
narrow_best_subkeeps = kernels.narrow.best_subkeeps
narrow_rows = kernels.narrow.aligned_rows


def wide_from(rs: rules.RuleSet) -> int:
    """The games of one state from which :func:`play_turn` computes their turn for every lane at once, by
    default (measured, 2026-12-03: ``benchmarks/bench_simulate.py --wide-from N``): 16 on a sheet without a Penta
    box, whose smaller groups are computed many states at once (Maxi Yatzy 35,000 games/s against 23,000 at 8
    and 16,000 at 4); 1 (always) on one with it, whose smaller groups would be computed one state at a time (Penta
    174,000 games/s against 149,000-163,000 at 2 to 16)."""
    return 16 if rs.penta_box < 0 else 1


@jit(nogil=True)
def lane_hand_values(p, counts, scores, by_box, open_mask, penta_scored, rows, out, points):
    """``out[h, 0]``: hand ``h``'s value after the last roll in one lane, as the value pass's ``hand_values``
    computes it (the best open box's successor row plus its points; the same options, so the same maximum, to
    the bit), box by box rather than hand by hand: ``by_box`` is ``scores`` transposed (a box's points and
    successor rows of every hand, side by side), and no arrays of options are built. Hands whose points depend
    on the state (five alike where there is a Penta box: ``scores[h, n_boxes] != 1``) ask the rules' score
    options, as ``hand_options`` does."""
    n_hands = scores.shape[0]
    n_boxes = p[P_N_BOXES]
    fixed = by_box[n_boxes]
    for h in range(n_hands):
        out[h, 0] = -np.inf
    for b in range(n_boxes):
        if (open_mask >> b) & 1 == 0:
            continue
        gain = by_box[b]
        row = by_box[n_boxes + 1 + b]
        for h in range(n_hands):
            if fixed[h] == 1:
                x = rows[row[h], 0] + float(gain[h])
                if x > out[h, 0]:
                    out[h, 0] = x
    for h in range(n_hands):
        if fixed[h] == 1:
            continue
        bonus = narrow_score_options(p, counts[h], open_mask, penta_scored, points)
        for b in range(n_boxes):
            pts = points[b]
            if pts < 0:
                continue
            x = rows[narrow_successor_row(p, b, pts), 0] + float(pts + bonus)
            if x > out[h, 0]:
                out[h, 0] = x


@jit(nogil=True)
def lane_levels(V, p, n_dice, counts, scores, by_box, add, subs, open_mask, penta_scored, sub, L, rows, K, B, points):
    """One state's turn values for the one subtotal ``sub``, into lane 0 of ``L`` (``(n_rolls, n_keeps, 1)``) and
    ``rows``: what the solver's ``turn_levels`` computes in lane ``sub``, by the same one-lane functions the
    advisor runs (the successor rows seen from ``sub``) and :func:`lane_hand_values`, so the same bits."""
    n_hands = scores.shape[0]
    n_keeps = counts.shape[0]
    n_rolls = p[P_ROLLS]
    narrow_successor_rows(V, p, n_dice, open_mask, penta_scored, sub, rows, 0.0)
    lane_hand_values(p, counts, scores, by_box, open_mask, penta_scored, rows, K, points)
    for h in range(n_hands):
        L[0, h, 0] = K[h, 0]
    for r in range(1, n_rolls):
        narrow_keep_values(add, n_hands, K)
        if r < n_rolls - 1:
            narrow_best_subkeeps(subs, n_hands, K, B)
        for j in range(n_hands, n_keeps):
            L[r, j, 0] = K[j, 0]


narrow_box_successor = kernels.narrow.box_successor

# The names play_turn and batch_levels call, rebound in each compiled copy to the rule set's lanes (see
# play_turn_for).
W = kernels.LANES
wide_turn_levels = kernels.wide.turn_levels
wide_hand_values = kernels.wide.hand_values
wide_keep_values = kernels.wide.keep_values
wide_best_subkeeps = kernels.wide.best_subkeeps
wide_successors = kernels.wide.successors
wide_upper_bonus = kernels.wide.upper_bonus
aligned_rows = kernels.wide.aligned_rows
S_ROW, S_MASK, S_FLAG, S_ADD = rules.S_ROW, rules.S_MASK, rules.S_FLAG, rules.S_ADD


@jit(nogil=True, inline="always")  # in the turn's loop: a call per game would cost Penta a tenth of its speed
def play_game(
    L, succ, lane, p, n_dice, counts, size, add, subkeeps, key, first, t, g, open_mask, penta_scored,
    points, masks, penta_scored_flags, subtotals, scores_out, bonus_out,
):  # fmt: skip
    """Game ``g`` (number ``first + g`` of the run of ``key``) plays turn ``t`` by lane ``lane`` of its state's
    turn values ``L`` and successor rows ``succ``: the keeps :func:`final_hand` takes, then the best box (its
    points plus the next state's value, upper bonus included: the same sums as the advisor's score values; the
    first box of the sheet on a tie). Its box's points go into ``scores_out[g]``, Penta bonus points into
    ``bonus_out[g]``, and its state moves on."""
    n_boxes = p[P_N_BOXES]
    sub = subtotals[g]
    hand = final_hand(L, n_dice, p[P_ROLLS], size, add, subkeeps, key, first + g, t, lane)
    bonus = narrow_score_options(p, counts[hand], open_mask, penta_scored, points)
    box = -1
    best = 0.0
    for b in range(n_boxes):
        pts = points[b]
        if pts < 0:
            continue
        value = succ[narrow_successor_row(p, b, pts), lane] + float(pts + bonus)
        if box < 0 or value > best:
            box = b
            best = value
    pts = points[box]
    bonus_out[g] += bonus
    if (open_mask >> box) & 1 == 1:
        scores_out[g, box] = pts
    else:  # Kiriki: five of a kind added to the Penta box, filling nothing
        scores_out[g, box] += pts
    nxt, flag, added = narrow_box_successor(p, box, pts, open_mask, penta_scored)
    masks[g] = nxt
    penta_scored_flags[g] = flag
    subtotals[g] = min(sub + added, p[P_UPPER_THRESHOLD])


def batch_levels(V, p, n_dice, counts, scores, add, subs, unit_mask, unit_sub, n_units, L, rows, K, B):
    """The turn values of up to ``W`` different states at once, one per lane: lane ``u`` is the state of open
    boxes ``unit_mask[u]`` at subtotal ``unit_sub[u]`` (a sheet without a Penta box: every hand's points are the
    score table's, whatever the state). Each lane's successor rows are its own state's, and the rows of a box
    open in another lane's state but not in its own are -inf there, so the hand values of the union of the
    open boxes take in each lane the maximum over its own open boxes: the same options, so the same bits, as
    :func:`lane_levels`; the keeps' steps do not depend on the state. ``L`` and ``rows`` as ``turn_levels``."""
    n_hands = scores.shape[0]
    n_keeps = counts.shape[0]
    n_rolls = p[P_ROLLS]
    cap = p[P_UPPER_THRESHOLD]
    for r in range(rows.shape[0]):
        for u in range(W):
            rows[r, u] = -np.inf if u < n_units else 0.0
    union = 0
    for u in range(n_units):
        union |= unit_mask[u]
        s = unit_sub[u]
        succ, _ = wide_successors(p, n_dice, unit_mask[u], 0)
        for i in range(succ.shape[0]):
            r, nxt, f, a = succ[i, S_ROW], succ[i, S_MASK], succ[i, S_FLAG], succ[i, S_ADD]
            rows[r, u] = V[f, nxt, min(s + a, cap)] + wide_upper_bonus(p, s, a)
    wide_hand_values(p, counts[:n_hands], scores, union, 0, rows, K, 0.0)
    for h in range(n_hands):
        for u in range(W):
            L[0, h, u] = K[h, u]
    for r in range(1, n_rolls):
        wide_keep_values(add, n_hands, K)
        if r < n_rolls - 1:
            wide_best_subkeeps(subs, n_hands, K, B)
        for j in range(n_hands, n_keeps):
            for u in range(W):
                L[r, j, u] = K[j, u]


def play_turn(
    V, p, n_dice, counts, scores, size, add, subs, subkeeps, key, first, t,
    masks, penta_scored_flags, subtotals, order, starts, part, parts, scores_out, bonus_out, wide_from,
):  # fmt: skip
    """Play turn ``t`` of the games grouped by :func:`group_games` (game ``g`` is number ``first + g`` of the run
    of ``key``): the groups numbered ``part``, ``part + parts``, ... of the turn (each thread its own share of
    the groups), and a share of the games of each group of at least :data:`SHARED_GROUP` games (its values
    computed by every thread). Releases the GIL (compiled with nogil). Plain Python compiled once per lane count
    (:func:`play_turn_for`). ``V`` is the table as solved (subtotals 0 to the threshold: every read is of a
    capped subtotal, so no padding is needed).

    A group of at least ``wide_from`` games computes its turn for every subtotal lane at once (the solver's
    ``turn_levels``): ``L[0, h, u]`` the value of hand ``h`` after the last roll, ``L[r, k, u]`` (``r >= 1``)
    that of keeping multiset ``k`` with ``r`` rerolls left. A smaller group's games, sorted by subtotal, make one
    unit per subtotal: on a sheet without a Penta box the units of the turn are computed ``W`` at a time, one
    state per lane (:func:`batch_levels`); with one, one at a time in one lane (:func:`lane_levels`). Each lane's
    arithmetic is the same every way, so the games have the same bits whatever ``wide_from`` (tested): it sets
    the speed only. Each game then plays by its lane (:func:`play_game`).
    """
    n_keeps = counts.shape[0]
    n_rolls = p[P_ROLLS]
    n_boxes = p[P_N_BOXES]
    penta_box = p[P_PENTA_BOX]
    n_flags = 2 if penta_box >= 0 else 1
    batched = penta_box < 0
    K = aligned_rows(n_keeps)
    B = aligned_rows(n_keeps)
    L = np.empty((n_rolls, n_keeps, W))
    rows = aligned_rows(p[P_N_ROWS])
    Kn = narrow_rows(n_keeps)
    Bn = narrow_rows(n_keeps)
    Ln = np.empty((n_rolls, n_keeps, 1))
    rows_n = narrow_rows(p[P_N_ROWS])
    width = max(wide_from, 1)
    small = np.empty(width, dtype=np.int64)  # a small group's games, sorted by subtotal
    unit_mask = np.empty(W, dtype=np.int64)  # the units waiting for a batch: their state,
    unit_sub = np.empty(W, dtype=np.int64)
    unit_start = np.zeros(W + 1, dtype=np.int64)  # and their games, pending[unit_start[u]:unit_start[u + 1]]
    pending = np.empty(W * width, dtype=np.int64)
    n_units = 0
    by_box = np.ascontiguousarray(scores.T)  # a box's points and successor rows of every hand, side by side
    points = np.empty(n_boxes, dtype=np.int64)
    lo = starts[n_flags - 1]
    group = -1
    for k in range(n_flags, starts.shape[0] - 1):
        hi = starts[k]
        if hi == lo:
            continue
        if hi - lo >= SHARED_GROUP:  # a big group: every thread computes its values, and plays a share of it
            first_game = lo + (hi - lo) * part // parts
            last_game = lo + (hi - lo) * (part + 1) // parts
        else:  # small groups go to the threads in turn
            group += 1
            first_game, last_game = lo, hi
            if group % parts != part:
                lo = hi
                continue
        open_mask = k // n_flags
        penta_scored = k - open_mask * n_flags
        if hi - lo >= wide_from:  # the group's turn values, every lane (the solver's code)
            wide_turn_levels(V, 0.0, p, n_dice, counts, scores, add, subs, open_mask, penta_scored, L, rows, K, B)
            for i in range(first_game, last_game):
                g = order[i]
                play_game(
                    L, rows, subtotals[g], p, n_dice, counts, size, add, subkeeps, key, first, t, g, open_mask,
                    penta_scored, points, masks, penta_scored_flags, subtotals, scores_out, bonus_out,
                )  # fmt: skip
            lo = hi
            continue
        m = last_game - first_game  # a few games: sorted by subtotal (insertion sort)
        for i in range(m):
            g = order[first_game + i]
            j = i
            while j > 0 and subtotals[small[j - 1]] > subtotals[g]:
                small[j] = small[j - 1]
                j -= 1
            small[j] = g
        i = 0
        while i < m:
            sub = subtotals[small[i]]
            j = i
            while j < m and subtotals[small[j]] == sub:
                j += 1
            if batched:  # a unit waiting for its batch; a full batch is computed and played
                unit_mask[n_units] = open_mask
                unit_sub[n_units] = sub
                at = unit_start[n_units]
                for q in range(i, j):
                    pending[at + q - i] = small[q]
                unit_start[n_units + 1] = at + j - i
                n_units += 1
                if n_units == W:
                    batch_levels(V, p, n_dice, counts, scores, add, subs, unit_mask, unit_sub, n_units, L, rows, K, B)
                    for u in range(n_units):
                        for q in range(unit_start[u], unit_start[u + 1]):
                            play_game(
                                L, rows, u, p, n_dice, counts, size, add, subkeeps, key, first, t, pending[q],
                                unit_mask[u], 0, points, masks, penta_scored_flags, subtotals, scores_out, bonus_out,
                            )  # fmt: skip
                    n_units = 0
            else:  # one lane: this subtotal's turn
                lane_levels(
                    V, p, n_dice, counts, scores, by_box, add, subs, open_mask, penta_scored, sub, Ln, rows_n, Kn, Bn,
                    points,
                )  # fmt: skip
                for q in range(i, j):
                    play_game(
                        Ln, rows_n, 0, p, n_dice, counts, size, add, subkeeps, key, first, t, small[q], open_mask,
                        penta_scored, points, masks, penta_scored_flags, subtotals, scores_out, bonus_out,
                    )  # fmt: skip
            i = j
        lo = hi
    if n_units > 0:  # the last batch, part full
        batch_levels(V, p, n_dice, counts, scores, add, subs, unit_mask, unit_sub, n_units, L, rows, K, B)
        for u in range(n_units):
            for q in range(unit_start[u], unit_start[u + 1]):
                play_game(
                    L, rows, u, p, n_dice, counts, size, add, subkeeps, key, first, t, pending[q], unit_mask[u], 0,
                    points, masks, penta_scored_flags, subtotals, scores_out, bonus_out,
                )  # fmt: skip


_PLAY_TURN: dict[int, object] = {}


def play_turn_for(lanes: int):
    """:func:`play_turn` compiled for ``lanes`` lanes (``RuleSet.lanes``), calling the solver's turn functions
    compiled for those lanes (:func:`pentadice.solver.kernels.wide_for`); made once per lane count."""
    if lanes not in _PLAY_TURN:
        w = kernels.wide_for(lanes)
        scope = dict(play_turn.__globals__)
        scope.update(
            W=lanes,
            wide_turn_levels=w.turn_levels,
            wide_hand_values=w.hand_values,
            wide_keep_values=w.keep_values,
            wide_best_subkeeps=w.best_subkeeps,
            wide_successors=w.successors,
            wide_upper_bonus=w.upper_bonus,
            aligned_rows=w.aligned_rows,
        )

        def clone_of(fn):
            clone = types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__, fn.__closure__)
            clone.__qualname__ = f"{fn.__qualname__}_w{lanes}"  # one cache entry per lane count
            clone.__module__ = fn.__module__
            clone.__doc__ = fn.__doc__
            return jit(clone, nogil=True)

        scope["batch_levels"] = batch = clone_of(batch_levels)
        compiled = clone_of(play_turn)
        drop_stale_cache([compiled, batch])
        _PLAY_TURN[lanes] = compiled
    return _PLAY_TURN[lanes]


drop_stale_cache([die, group_games, final_hand, lane_hand_values, lane_levels, play_game])
