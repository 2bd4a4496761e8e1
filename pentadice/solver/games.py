"""Whole games played by compiled code, for the simulator: the optimal strategy, or any strategy that a value
table stands for (the greedy one is a table of zeros: each turn then maximises its own points).

The dice come from a counter-based generator: die ``i`` of roll ``r`` of turn ``t`` of game ``g`` is a hash of
the run's key and of ``(g, t, r, i)`` (SplitMix64's mixing function; a draw that would favour a face is drawn
again), so that a game's dice depend on its seed and its number only: the same games whatever the chunk of
games it is played in and whatever the number of threads, drawn as they are needed (no dice held in memory).
:func:`pentadice.simulator.simulate.game_dice` computes the same dice in NumPy, to replay a game.

The games are played in step, turn by turn: the games whose sheets have the same open boxes (and Penta flag,
where the sheet has a Penta box) share one computation of the turn's values for all the rule set's lanes of
upper subtotals (the solver's wide kernels for ``RuleSet.lanes``, the same compiled code), and each game reads
the lane of its own subtotal. A state's key is ``open_mask * n_flags + flag`` (:func:`n_keys`): ``n_flags`` is
2 with a Penta box, else 1. Sizes (boxes, successor rows, lanes) come from the rule set's parameters and the
arrays, never from constants. No kernel is ``parallel=True`` (its compilation costs seconds): the simulator
plays each turn of a chunk in Python threads, each thread a share of the turn's groups (:func:`play_turn`).
Everything the games call is the solver's compiled code or in this file: a first ``simulate`` after a
``solve`` compiles only :func:`group_games` and the ``play_turn`` of the rule set's lanes.
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


# The names play_turn calls, rebound in each compiled copy to the rule set's lanes (see play_turn_for).
W = kernels.LANES
wide_turn_levels = kernels.wide.turn_levels
wide_box_successor = kernels.wide.box_successor
wide_score_options = kernels.wide.score_options
wide_successor_row = kernels.wide.successor_row
aligned_rows = kernels.wide.aligned_rows


def play_turn(
    V, p, n_dice, counts, scores, size, add, subs, subkeeps, key, first, t,
    masks, penta_scored_flags, subtotals, order, starts, part, parts, scores_out, bonus_out,
):  # fmt: skip
    """Play turn ``t`` of the games grouped by :func:`group_games` (game ``g`` is number ``first + g`` of the run
    of ``key``): the groups numbered ``part``, ``part + parts``, ... of the turn (each thread its own share of
    the groups, every group's turn values computed once), and a share of the games of each group of at least
    :data:`SHARED_GROUP` games (its values computed by every thread). Releases the GIL (compiled with nogil).
    Plain Python compiled once per lane count (:func:`play_turn_for`): ``V`` has ``W`` lanes (the table's
    subtotals padded to the rule set's lanes).

    For a group, ``L[0, h, u]`` is the value of hand ``h`` after the last roll and ``L[r, k, u]`` (``r >= 1``)
    that of keeping multiset ``k`` with ``r`` rerolls left, for every subtotal lane ``u``; each game then keeps
    what the values of its lane say is best, and fills the best box: its points plus the successor row's value
    (the solver's sums, so the same bits as the advisor's values). Box scores go into ``scores_out[g]`` (one
    column per box of the sheet) and Penta bonus points are added to ``bonus_out[g]``. One function, not one
    per step: each level of compiled calls costs compile time on a first run.
    """
    n_keeps = counts.shape[0]
    n_rolls = p[P_ROLLS]
    n_boxes = p[P_N_BOXES]
    penta_box = p[P_PENTA_BOX]
    n_flags = 2 if penta_box >= 0 else 1
    cap = p[P_UPPER_THRESHOLD]
    K = aligned_rows(n_keeps)
    B = aligned_rows(n_keeps)
    L = np.empty((n_rolls, n_keeps, W))
    rows = aligned_rows(p[P_N_ROWS])
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
        # The group's turn values, every lane (the solver's code).
        wide_turn_levels(V, 0.0, p, n_dice, counts, scores, add, subs, open_mask, penta_scored, L, rows, K, B)
        for i in range(first_game, last_game):
            g = order[i]
            game = first + g
            sub = subtotals[g]
            hand = final_hand(L, n_dice, n_rolls, size, add, subkeeps, key, game, t, sub)
            # The best box: its points plus the next state's value (upper bonus included) from the group's
            # successor rows, the same sums as the advisor's score values.
            bonus = wide_score_options(p, counts[hand], open_mask, penta_scored, points)
            box = -1
            best = 0.0
            for b in range(n_boxes):
                pts = points[b]
                if pts < 0:
                    continue
                value = rows[wide_successor_row(p, b, pts), sub] + float(pts + bonus)
                if box < 0 or value > best:
                    box = b
                    best = value
            pts = points[box]
            bonus_out[g] += bonus
            if (open_mask >> box) & 1 == 1:
                scores_out[g, box] = pts
            else:  # Kiriki: five of a kind added to the Penta box, filling nothing
                scores_out[g, box] += pts
            nxt, flag, added = wide_box_successor(p, box, pts, open_mask, penta_scored)
            masks[g] = nxt
            penta_scored_flags[g] = flag
            subtotals[g] = min(sub + added, cap)
        lo = hi


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
            wide_box_successor=w.box_successor,
            wide_score_options=w.score_options,
            aligned_rows=w.aligned_rows,
        )
        fn = play_turn
        clone = types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__, fn.__closure__)
        clone.__qualname__ = f"{fn.__qualname__}_w{lanes}"  # one cache entry per lane count
        clone.__module__ = fn.__module__
        clone.__doc__ = fn.__doc__
        compiled = jit(clone, nogil=True)
        drop_stale_cache([compiled])
        _PLAY_TURN[lanes] = compiled
    return _PLAY_TURN[lanes]


drop_stale_cache([die, group_games, final_hand])
