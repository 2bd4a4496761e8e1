"""The win player's last turns: exact play against the other players' final-score distributions.

When the win player has at most ``K`` boxes open and so has every other player (or has finished), it picks each
keep and box by the end-game table of :func:`pentadice.solver.utility.solve_endgame` (``Wt[state, d]``: the
highest win credit, 1 a win and 1/2 a tie, against a final score ``d`` points ahead) averaged over the
distribution of ``d``: the best other final total minus its own total. Each other player's points still to come
follow its exact distribution under optimal (expected-score) play (:mod:`pentadice.advisor.distribution`), the players
independent, so ``P(best other final - mine <= x) = prod_j P(R_j <= x + mine - total_j)``.

Against finished players the distribution is one point and this is the exact end game. Otherwise it is an
approximation: each option is credited with the average of ``Wt``, whose later choices each know ``d``; the
player does not, yet (a bound above what it can get), and the others are assumed to play optimal.

The kernels here are shared by the multiplayer simulator and :class:`pentadice.players.win.WinStrategy`, so
that both make the same choices bit for bit.
"""

from __future__ import annotations

import threading

import numpy as np

from pentadice.game import rules
from pentadice.solver import kernels as turn_kernels
from pentadice.solver import utility
from pentadice.solver.compiled import jit

D_LANES = utility.TARGET_LANES  # d = 0 .. 511
P_UPPER_THRESHOLD = rules.P_UPPER_THRESHOLD
P_PENTA_BONUS = rules.P_PENTA_BONUS
P_N_BOXES = rules.P_N_BOXES
wide_score_options = turn_kernels.wide.score_options
wide_upper_bonus = turn_kernels.wide.upper_bonus
wide_box_successor = turn_kernels.wide.box_successor


@jit(nogil=True)
def mixture(C, opp_rows, opp_shift, n_opp, q):
    """``q[d]``: the probability that the best other final total is ``d`` points above the player's total
    (``0 <= d < D_LANES``), from ``C[row, y] = P(R <= y)`` of each other player's row and
    ``shift = my total - its total``. Returns the probability that it is at least 0 points above."""
    n = C.shape[1]
    rows = opp_rows[:n_opp].copy()
    shift = opp_shift[:n_opp].copy()
    for a in range(1, n_opp):  # a fixed order of the factors, whatever the players' order: the same rounding
        b = a
        while b > 0 and (rows[b] < rows[b - 1] or (rows[b] == rows[b - 1] and shift[b] < shift[b - 1])):
            rows[b], rows[b - 1] = rows[b - 1], rows[b]
            shift[b], shift[b - 1] = shift[b - 1], shift[b]
            b -= 1
    opp_rows, opp_shift = rows, shift
    prev = 1.0
    for j in range(n_opp):
        y = -1 + opp_shift[j]
        prev *= 0.0 if y < 0 else (1.0 if y >= n else C[opp_rows[j], y])
    below = prev
    for d in range(q.shape[0]):
        cdf = 1.0
        for j in range(n_opp):
            y = d + opp_shift[j]
            cdf *= 0.0 if y < 0 else (1.0 if y >= n else C[opp_rows[j], y])
        q[d] = cdf - prev
        prev = cdf
    return 1.0 - below


@jit(nogil=True)
def credit(q, row):
    """``sum_d q[d] * row[d]``, in order (the same rounding everywhere)."""
    s = 0.0
    for d in range(q.shape[0]):
        s += q[d] * row[d]
    return s


@jit(nogil=True)
def best_keep(L, q, hand, r, subkeeps):
    """The sub-keep to keep with ``r`` rerolls left (its index), or -1: score now (the first best; a keep only
    when strictly better than scoring now, as the simulator's optimal player)."""
    best = credit(q, L[0, hand])
    choice = -1
    for j in range(subkeeps.shape[1]):
        kept = subkeeps[hand, j]
        if kept < 0:
            break
        v = credit(q, L[r, kept])
        if v > best:
            best = v
            choice = kept
    return choice


@jit(nogil=True)
def best_box(Wt, rowix, p, hand_counts, open_mask, flag, sub, q, points):
    """The box to fill (the first best): the expected credit of each legal box, its successor's row read
    ``gain`` lanes lower (1 below lane 0)."""
    cap = p[P_UPPER_THRESHOLD]
    bonus = wide_score_options(p, hand_counts, open_mask, flag, points)
    box = -1
    best = 0.0
    n = q.shape[0]
    for b in range(p[P_N_BOXES]):
        pts = points[b]
        if pts < 0:
            continue
        nmask, nflag, added = wide_box_successor(p, b, pts, open_mask, flag)
        gain = pts + bonus + wide_upper_bonus(p, sub, added)
        row = Wt[rowix[nmask], nflag, min(sub + added, cap)]
        v = 0.0
        for d in range(n):
            x = d - gain
            v += q[d] * (1.0 if x < 0 else row[x])
        if box < 0 or v > best:
            box = b
            best = v
    return box


turn_kernels.drop_stale_cache([mixture, credit, best_keep, best_box])


@jit(nogil=True)
def push_back(p, sids, n_chunk, out, tlist, ntouch, D, rowix):
    """``D[rowix[mask], ps, u, r]`` of the chunk's states ``sids[:n_chunk]``: the probability of ``r`` more
    points from the state (lane ``u``) under the advisor's policy, from the turn's outcomes ``out`` (as
    :func:`pentadice.solver.forward.chunk_outcomes` gives them) and the successors' rows (solved before). The
    outcome entries read are set back to zero."""
    cap = p[P_UPPER_THRESHOLD]
    pb = p[P_PENTA_BONUS]
    n_boxes = p[P_N_BOXES]
    n_points = out.shape[3]
    n = D.shape[3]
    for i in range(n_chunk):
        sid = sids[i]
        ps = sid >> n_boxes
        mask = sid & ((1 << n_boxes) - 1)
        dest = D[rowix[mask], ps]
        for u in range(dest.shape[0]):
            for r in range(n):
                dest[u, r] = 0.0
        for t in range(ntouch[i]):
            rest, pts = divmod(tlist[i, t], n_points)  # the entry (b * 2 + bf) * n_points + pts
            b, bf = divmod(rest, 2)
            nxt, nps, added = wide_box_successor(p, b, pts, mask, ps)
            src = D[rowix[nxt], nps]
            for u in range(dest.shape[0]):
                q = out[i, b, bf, pts, u]
                if q == 0.0:
                    continue
                out[i, b, bf, pts, u] = 0.0
                u2 = min(u + added, cap)
                gain = pts + bf * pb + wide_upper_bonus(p, u, added)
                for r in range(gain, n):
                    dest[u, r] += q * src[u2, r - gain]


turn_kernels.drop_stale_cache([push_back])


def endgame_rows(rs: rules.RuleSet, max_open: int) -> np.ndarray:
    """The end-game table's row of each open-box mask (-1: not in it), as :func:`utility.solve_endgame` lays
    them out: the masks of the game with at most ``max_open`` boxes open, in increasing order."""
    masks = np.arange(1 << rs.n_boxes, dtype=np.int64)
    pop = np.bitwise_count(masks)
    small = masks[((masks & ~rs.box_mask) == 0) & (pop <= max_open)]
    rowix = np.full(1 << rs.n_boxes, -1, dtype=np.int64)
    rowix[small] = np.arange(len(small))
    return rowix


def points_to_come(rs: rules.RuleSet, values: np.ndarray, max_open: int) -> tuple[np.ndarray, np.ndarray]:
    """``(D, rowix)``: ``D[rowix[mask], penta_scored, subtotal, r]``, the exact probability of scoring ``r``
    more points (``r < D_LANES``) from each state with at most ``max_open`` boxes open, under the advisor's
    policy (the distribution module's: the same turn outcomes), by backward recursion over the layers."""
    from pentadice.advisor import distribution
    from pentadice.solver import forward as fw
    from pentadice.solver.remaining import points_axis
    from pentadice.solver.turn_inputs import turn_inputs

    distribution.check_rules(rs)
    V = distribution._padded(np.asarray(values), rs)
    lanes = V.shape[2]
    rowix = endgame_rows(rs, max_open)
    n_rows = int((rowix >= 0).sum())
    D = np.zeros((n_rows, rs.n_flags, lanes, D_LANES))
    D[rowix[0], :, :, 0] = 1.0
    inputs = turn_inputs(rs)
    n = rs.n_boxes
    n_points = points_axis(rs)
    chunk = distribution.CHUNK
    out = np.zeros((chunk, n, 2, n_points, lanes))
    tlist = np.zeros((chunk, n * 2 * n_points), dtype=np.int64)
    ntouch = np.zeros(chunk, dtype=np.int64)
    rlo = np.zeros((rs.n_flags << n, lanes), dtype=np.int64)
    rhi = np.full((rs.n_flags << n, lanes), -1, dtype=np.int64)
    masks = np.flatnonzero(rowix >= 0)
    pop = np.bitwise_count(masks)
    for k in range(1, max_open + 1):
        flags = range(rs.n_flags)
        sids = np.array([(ps << n) | int(m) for m in masks[pop == k] for ps in flags], dtype=np.int64)
        for sid in sids:
            rhi[sid] = np.where(np.isnan(V[sid >> n, sid & ((1 << n) - 1)]), -1, 0)
        for c0 in range(0, len(sids), chunk):
            part = np.ascontiguousarray(sids[c0 : c0 + chunk])
            fw.chunk_outcomes(rs, V, part, rlo, rhi, out, tlist, ntouch)
            push_back(inputs.p, part, len(part), out, tlist, ntouch, D, rowix)
    return D, rowix


class Opponents:
    """The other players' distributions of the points still to come, for every state with at most
    ``max_open`` boxes open (:func:`points_to_come`): ``C[row, y] = P(R <= y)`` (``y < D_LANES``), ``top[row]``
    the most points it may still score; a finished player's rows are 0 points for sure."""

    def __init__(self, rs: rules.RuleSet, values: np.ndarray, max_open: int) -> None:
        self.rules = rs
        self.values = values
        self.max_open = max_open
        D, self.rowix = points_to_come(rs, values, max_open)
        self.n_flags, self.lanes = D.shape[1], D.shape[2]
        last = D.shape[-1] - 1 - np.argmax(D[..., ::-1] > 0, axis=-1)
        self.top = last.reshape(-1).astype(np.int64)
        np.cumsum(D, axis=-1, out=D)
        np.minimum(D, 1.0, out=D)
        self.C = D.reshape(-1, D_LANES)

    def rows(self, flags: np.ndarray, masks: np.ndarray, subs: np.ndarray) -> np.ndarray:
        """The row of each state (arrays of one shape; at most ``max_open`` boxes open)."""
        flags, masks, subs = (np.asarray(a, dtype=np.int64) for a in (flags, masks, subs))
        r = self.rowix[masks]
        if (r < 0).any():
            raise ValueError(f"a state with more than {self.max_open} boxes open has no distribution row here")
        return (r * self.n_flags + flags) * self.lanes + subs


_opponents: dict[tuple, tuple[Opponents, np.ndarray]] = {}
_lock = threading.Lock()
_key_locks: dict[tuple, threading.Lock] = {}


def opponents(rs: rules.RuleSet, values: np.ndarray, max_open: int) -> Opponents:
    """The process's :class:`Opponents` of a rule set, value table and number of boxes."""
    key = (rs, id(values), max_open)
    hit = _opponents.get(key)
    if hit is not None and hit[1] is values:
        return hit[0]
    with _lock:  # one lock per key: building one rule set's never holds up a game reading another's
        key_lock = _key_locks.setdefault(key, threading.Lock())
    with key_lock:
        hit = _opponents.get(key)
        if hit is None or hit[1] is not values:
            hit = (Opponents(rs, values, max_open), values)
            _opponents[key] = hit
        return hit[0]
