"""The compiled kernels of the multiplayer simulator (:mod:`pentadice.simulator.multiplayer`): one turn of the
players due to play, by groups.

The players due to play form groups by (table, state) (a win player's table is the theta it picked for the turn,
from every sheet of its game as it stands when its turn starts), each group's turn values are computed once for
all the rule set's lanes of subtotals (``RuleSet.lanes``: 64, or 80 for Maxi Yatzy), and each player reads its
own lane, as the solitaire simulator does (:func:`play_groups`); win players in their last turns play by the
end-game table instead (:func:`play_endgame_groups`). Sizes (boxes, successor rows, lanes, state keys) come from
the rule set's parameters and the arrays; :func:`play_groups` is compiled once per lane count
(:func:`play_groups_for`). Each player of a game rolls its own dice: the counter-based dice of
:mod:`pentadice.solver.games` with the player's stream number.
"""

from __future__ import annotations

import math
import time
import types

import numpy as np

from pentadice.game import rules
from pentadice.players import lastturns
from pentadice.simulator.simulate import seed_key
from pentadice.solver import games as kernel
from pentadice.solver import kernels as turn_kernels
from pentadice.solver import utility
from pentadice.solver.compiled import cached, jit
from pentadice.solver.turn_inputs import turn_inputs

die = kernel.die
final_hand = kernel.final_hand
theta_turn_values = utility.wide.theta_turn_values  # rebound per lane count (play_groups_for)
endgame_turn_values = utility.target.target_turn_values
wide_score_options = turn_kernels.wide.score_options
wide_successor_row = turn_kernels.wide.successor_row
wide_upper_bonus = turn_kernels.wide.upper_bonus
wide_box_successor = turn_kernels.wide.box_successor
lt_mixture = lastturns.mixture
lt_best_keep = lastturns.best_keep
lt_best_box = lastturns.best_box
P_ROLLS = rules.P_ROLLS
P_UPPER_THRESHOLD = rules.P_UPPER_THRESHOLD
P_N_BOXES = rules.P_N_BOXES
P_N_ROWS = rules.P_N_ROWS
W = utility.LANES  # rebound per lane count (play_groups_for)
SUB_STRIDE = 256  # end-game group keys: (open_mask * 2 + flag) * SUB_STRIDE + subtotal (thresholds up to 216)
SHARED_GROUP = 2048


def play_groups(
    T, thetas, p, n_dice, counts, scores, size, add, subs, subkeeps, key, t, n_keys,
    order, group_starts, group_keys, stream, masks, flags, subtotals, totals, scores_out, bonus_out, part, parts,
):  # fmt: skip
    """One turn of the players ``order[group_starts[i]:group_starts[i + 1]]`` of each group ``i`` (key
    ``table * n_keys + open_mask * 2 + penta_scored``): group values computed once (the table of
    ``thetas[table]``, ``W`` lanes), each player its own lane; groups shared among ``parts`` threads as in the
    solitaire simulator. Plain Python compiled once per lane count (:func:`play_groups_for`)."""
    n_keeps = counts.shape[0]
    n_rolls = p[P_ROLLS]
    cap = p[P_UPPER_THRESHOLD]
    n_boxes = p[P_N_BOXES]
    K = np.empty((n_keeps, W))
    B = np.empty((n_keeps, W))
    L = np.empty((n_rolls, n_keeps, W))
    rows = np.zeros((p[P_N_ROWS], W))
    points = np.empty(n_boxes, dtype=np.int64)
    n_groups = group_keys.shape[0]
    small = -1
    for gi in range(n_groups):
        lo = group_starts[gi]
        hi = group_starts[gi + 1]
        if hi - lo >= SHARED_GROUP:
            first_entry = lo + (hi - lo) * part // parts
            last_entry = lo + (hi - lo) * (part + 1) // parts
        else:
            small += 1
            if small % parts != part:
                continue
            first_entry, last_entry = lo, hi
        gkey = group_keys[gi]
        ti = gkey // n_keys
        k = gkey % n_keys
        open_mask = k >> 1
        penta_scored = k & 1
        theta = thetas[ti]
        theta_turn_values(T[ti], theta, p, n_dice, counts, scores, add, subs, open_mask, penta_scored, L, rows, K, B)
        for i in range(first_entry, last_entry):
            e = order[i]
            game = stream[e]
            sub = subtotals[e]
            hand = final_hand(L, n_dice, n_rolls, size, add, subkeeps, key, game, t, sub)
            bonus = wide_score_options(p, counts[hand], open_mask, penta_scored, points)
            box = -1
            best = 0.0
            for b in range(n_boxes):
                pts = points[b]
                if pts < 0:
                    continue
                row = wide_successor_row(p, b, pts)
                gain = float(pts + bonus)
                # theta 0: points plus the next state's value (the solver's sums); else utility times exp
                value = rows[row, sub] + gain if theta == 0.0 else rows[row, sub] * math.exp(theta * gain)
                if box < 0 or value > best:
                    box = b
                    best = value
            pts = points[box]
            bonus_out[e] += bonus
            totals[e] += pts + bonus
            if (open_mask >> box) & 1 == 1:
                scores_out[e, box] = pts
            else:
                scores_out[e, box] += pts
            nxt, flag, added = wide_box_successor(p, box, pts, open_mask, penta_scored)
            totals[e] += wide_upper_bonus(p, sub, added)
            masks[e] = nxt
            flags[e] = flag
            subtotals[e] = min(sub + added, cap)


_PLAY_GROUPS: dict[int, object] = {}


def play_groups_for(lanes: int):
    """:func:`play_groups` compiled for ``lanes`` lanes (``RuleSet.lanes``), calling the utility kernels
    compiled for those lanes (:func:`pentadice.solver.utility.wide_for`); made once per lane count."""
    if lanes not in _PLAY_GROUPS:
        scope = dict(play_groups.__globals__)
        scope.update(W=lanes, theta_turn_values=utility.wide_for(lanes).theta_turn_values)
        fn = play_groups
        clone = types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__, fn.__closure__)
        clone.__qualname__ = f"{fn.__qualname__}_w{lanes}"  # one cache entry per lane count
        clone.__module__ = fn.__module__
        clone.__doc__ = fn.__doc__
        compiled = jit(clone, nogil=True)
        turn_kernels.drop_stale_cache([compiled], extra=[utility, lastturns])
        _PLAY_GROUPS[lanes] = compiled
    return _PLAY_GROUPS[lanes]


@jit(nogil=True)
def play_endgame_groups(
    Wt, rowix, p, n_dice, counts, scores, size, add, subs, subkeeps, key, t,
    order, group_starts, group_keys, C, opp_rows, opp_shift, stream, masks, flags, subtotals, totals, scores_out,
    bonus_out, part, parts,
):  # fmt: skip
    """One turn of win players in their last turns (:mod:`pentadice.players.lastturns`), by the end-game
    table: groups of key ``(open_mask * 2 + penta_scored) * SUB_STRIDE + subtotal``, each player weighing the lanes
    by the distribution of the points it must beat (``C``'s rows ``opp_rows[e]`` of the other players, shifted
    by ``opp_shift[e]``). Otherwise as :func:`play_groups`."""
    n_keeps = counts.shape[0]
    n_rolls = p[P_ROLLS]
    cap = p[P_UPPER_THRESHOLD]
    n_lanes = Wt.shape[3]
    n_opp = opp_rows.shape[1]
    K = np.empty((n_keeps, n_lanes))
    B = np.empty((n_keeps, n_lanes))
    L = np.empty((n_rolls, n_keeps, n_lanes))
    q = np.empty(n_lanes)
    points = np.empty(p[P_N_BOXES], dtype=np.int64)
    small = -1
    for gi in range(group_keys.shape[0]):
        lo = group_starts[gi]
        hi = group_starts[gi + 1]
        small += 1
        if small % parts != part:
            continue
        gkey = group_keys[gi]
        sub = gkey % SUB_STRIDE
        k = gkey // SUB_STRIDE
        open_mask = k >> 1
        penta_scored = k & 1
        endgame_turn_values(
            Wt, rowix, p, n_dice, counts, scores, add, subs, open_mask, penta_scored, sub, L, K, B, points
        )
        for i in range(lo, hi):
            e = order[i]
            game = stream[e]
            lt_mixture(C, opp_rows[e], opp_shift[e], n_opp, q)
            hand = n_keeps - 1
            for j in range(n_dice):
                hand = add[hand, die(key, game, t, 0, j) - 1]
            for r in range(n_rolls - 1, 0, -1):
                choice = lt_best_keep(L, q, hand, r, subkeeps)
                if choice < 0:
                    break
                hand = choice
                for j in range(n_dice - size[choice]):
                    hand = add[hand, die(key, game, t, n_rolls - r, j) - 1]
            box = lt_best_box(Wt, rowix, p, counts[hand], open_mask, penta_scored, sub, q, points)
            bonus = wide_score_options(p, counts[hand], open_mask, penta_scored, points)
            pts = points[box]
            bonus_out[e] += bonus
            totals[e] += pts + bonus
            scores_out[e, box] = pts
            nxt, flag, added = wide_box_successor(p, box, pts, open_mask, penta_scored)
            totals[e] += wide_upper_bonus(p, sub, added)
            masks[e] = nxt
            flags[e] = flag
            subtotals[e] = min(sub + added, cap)


turn_kernels.drop_stale_cache([play_endgame_groups], extra=[utility, lastturns])


def compile_seconds(rs: rules.RuleSet = rules.PENTA_RULES) -> float:
    """Compile (or load from Numba's cache) the multiplayer kernel for ``rs``'s lanes; returns the seconds it
    took."""
    start = time.perf_counter()
    none = np.zeros(0, dtype=np.int64)
    V = np.zeros((1, rs.n_flags, 1 << rs.n_boxes, rs.lanes))
    p, n_dice, counts, scores_t, size, add, subs, subkeeps = turn_inputs(rs).games()
    sc = np.empty((0, rs.n_boxes), np.int16)
    play_groups_for(rs.lanes)(
        V, np.zeros(1), p, n_dice, counts, scores_t, size, add, subs, subkeeps, seed_key(0), 0, 2 << rs.n_boxes,
        none, np.zeros(1, dtype=np.int64), none, none, none, none, none, none, sc, none, 0, 1,
    )  # fmt: skip
    return time.perf_counter() - start


def needs_compiling(rs: rules.RuleSet = rules.PENTA_RULES) -> bool:
    """Whether the multiplayer kernel for ``rs``'s lanes is not in Numba's cache yet (a first run)."""
    return not cached(play_groups_for(rs.lanes))
