"""Why the best option is best, when a rule of thumb would pick another: computed from the values, never canned.

The rule of thumb is "the most points this turn". For each option the turn is followed to its end under
optimal play (exactly: every roll's chances, the advisor's choice at every later roll), which gives the
expected points this turn, the chance of ending it in each box, and so what the option leaves for later
(its expected final score minus the score so far minus the points this turn). Where the best option is not
the one with the most points this turn, :func:`explain` says what each aims at and what the best gains.
"""

from __future__ import annotations

import gettext
from dataclasses import dataclass

import numpy as np

from pentadice.advisor.advice import ENGLISH, Advice, Advisor, Option
from pentadice.game import rules
from pentadice.game.moves import Score
from pentadice.game.situation import Situation


@dataclass(frozen=True)
class Outlook:
    """What an option leads to this turn under optimal play: expected points (box points and bonuses),
    the chance of ending the turn in each box, and the expected points later in the game."""

    option: Option
    points_now: float
    later: float
    boxes: dict[str, float]  # box id -> chance that this turn ends in it, in sheet order

    @property
    def likely_box(self) -> tuple[str, float]:
        """The box this turn most likely ends in (of equal chances, the first in sheet order), and its chance."""
        box = max(self.boxes, key=self.boxes.__getitem__)  # max keeps the first of equal keys
        return box, self.boxes[box]

    def as_dict(self) -> dict:
        box, chance = self.likely_box
        return {
            "option": self.option.as_dict(),
            "points_this_turn": self.points_now,
            "points_later": self.later,
            "likely_box": box,
            "likely_box_chance": chance,
        }


@dataclass(frozen=True)
class Why:
    """The best option against the rule of thumb's, with the text for people."""

    best: Outlook
    obvious: Outlook
    text: str

    @property
    def gain(self) -> float:
        """Expected final score the best option adds over the rule of thumb's."""
        return self.obvious.option.loss - self.best.option.loss

    def as_dict(self) -> dict:
        return {"text": self.text, "gain": self.gain, "best": self.best.as_dict(), "obvious": self.obvious.as_dict()}


def outlooks(advisor: Advisor, advice: Advice) -> list[Outlook]:
    """The outlook of every option of ``advice``, in its order."""
    situation = advice.situation
    so_far = advice.score_so_far
    points, boxes = _turn_tables(advisor, situation) if situation.rolls_left > 0 else ({}, {})
    t = advisor.inputs.tables
    out = []
    for o in advice.options:
        if isinstance(o.move, Score):
            now = float(o.points + o.penta_bonus + o.upper_bonus)
            dist = {o.move.box: 1.0}
        else:
            k = t.keep_of(o.move.dice)
            now = float(points[situation.rolls_left][k])
            row = boxes[situation.rolls_left][k]
            dist = {advisor.rules.box_ids[b]: float(row[b]) for b in range(advisor.rules.n_boxes) if row[b] > 0}
        out.append(Outlook(o, now, o.value - so_far - now, dist))
    return out


def explain(advisor: Advisor, advice: Advice) -> Why | None:
    """Why the best option beats the one with the most points this turn; None when they are the same."""
    looks = outlooks(advisor, advice)
    best = looks[0]
    obvious = max(looks, key=lambda o: (o.points_now, o.option.value))
    if obvious.option == best.option or obvious.points_now <= best.points_now:
        return None
    return Why(best, obvious, why_text(best, obvious, advisor.rules))


def why_text(best: Outlook, obvious: Outlook, rs: rules.RuleSet, tr: gettext.NullTranslations = ENGLISH) -> str:
    """The explanation for people (:attr:`Why.text` is the English one); ``tr`` translates."""

    def doing(o: Outlook) -> str:
        if isinstance(o.option.move, Score):
            return tr.gettext("scoring {box}").format(box=tr.gettext(rs.box_name(o.option.move.box)))
        kept = o.option.move.dice
        if not kept:
            return tr.gettext("rerolling all the dice")
        return tr.gettext("keeping {dice}").format(dice=" ".join(map(str, kept)))

    def now(o: Outlook) -> str:
        if isinstance(o.option.move, Score):
            n = f"{o.points_now:.0f}"
            return tr.ngettext("{n} point", "{n} points", 1 if o.points_now == 1 else 2).format(n=n)
        box, chance = o.likely_box
        return tr.gettext("{points} points on average (most often in {box}: {chance})").format(
            points=f"{o.points_now:.1f}", box=tr.gettext(rs.box_name(box)), chance=f"{chance:.0%}"
        )

    text = tr.gettext(
        "{doing} scores {now} this turn, against {other_now} for {other}; it leaves {later} more for later, "
        "so it is worth {gain} in expected final score"
    ).format(
        doing=doing(best),
        now=now(best),
        other_now=now(obvious),
        other=doing(obvious),
        later=f"{best.later - obvious.later:.1f}",
        gain=f"{obvious.option.loss - best.option.loss:+.2f}",
    )
    return text[:1].upper() + text[1:]


def _turn_tables(advisor: Advisor, situation: Situation):
    """``points[r][k]`` and ``boxes[r][k]``: for keeping multiset ``k`` with ``r`` rerolls left, the expected
    points this turn and the chance of ending it in each box, the rest of the turn played as the advisor
    would (ties as it breaks them: scoring first, then more dice, then lower faces)."""
    rs, t = advisor.rules, advisor.inputs.tables
    sheet, n_hands = situation.sheet, t.n_hands
    # The last roll: each hand's best box, as the advisor picks it.
    last_box, last_rest, hand_points = last_roll_choices(advisor, sheet)
    so_far = sheet.score(rs)
    score_togo = (so_far + last_rest) - so_far  # as Option.value minus the score so far: the same bits
    hand_boxes = np.zeros((n_hands, rs.n_boxes))
    hand_boxes[np.arange(n_hands), last_box] = 1.0
    points, boxes = {}, {}
    points[1], boxes[1] = _keeps(t, hand_points, hand_boxes)
    if situation.rolls_left < 2:
        return points, boxes
    # With one reroll left, each hand's choice: score (its best box) or its best keep, by the values.
    keep1 = advisor.keep_values(situation, 1)
    # Its best keep: the highest value, ties to the keep numbered first (more dice, then lower faces).
    subs = t.subkeeps[:n_hands]
    values = np.where(subs >= 0, keep1[subs], -np.inf)
    k = subs[np.arange(n_hands), np.argmax(values, axis=1)]
    keeps = keep1[k] > score_togo
    p1, b1 = hand_points.copy(), hand_boxes.copy()
    p1[keeps], b1[keeps] = points[1][k[keeps]], boxes[1][k[keeps]]
    points[2], boxes[2] = _keeps(t, p1, b1)
    return points, boxes


def last_roll_choices(advisor: Advisor, sheet) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For every hand on the last roll, in the state of ``sheet``: the box the advisor fills (ties to the first
    box in sheet order, as :meth:`Option.tie_key` breaks them), the points still to come then, and the points
    it earns this turn (box, Penta bonus and upper bonus). All hands at once, with the arithmetic of
    :func:`pentadice.solver.turn.score_values` (so the same bits as the advisor's own box values)."""
    rs, inputs = advisor.rules, advisor.inputs
    p, t, V = inputs.p, inputs.tables, advisor.values
    n = rs.n_boxes
    open_mask = sheet.open_mask(rs)
    sub = sheet.upper_subtotal(rs)
    penta_scored = int(sheet.penta_scored(rs))
    fixed = inputs.scores[:, n] == 1  # points that hold in every state: all but the dice all alike
    points = inputs.scores[:, :n].copy()
    is_open = ((open_mask >> np.arange(n)) & 1) == 1
    points[np.ix_(fixed, ~is_open)] = -1
    bonus = np.zeros(t.n_hands, dtype=np.int64)
    for h in np.flatnonzero(~fixed):
        bonus[h] = rules.score_options(p, t.counts[h], open_mask, penta_scored, points[h])
    cap, threshold = int(p[rules.P_UPPER_THRESHOLD]), int(p[rules.P_UPPER_THRESHOLD])
    upper_bonus = int(p[rules.P_UPPER_BONUS])
    rest = np.full((t.n_hands, n), -np.inf)
    earned = np.zeros((t.n_hands, n), dtype=np.int64)
    for b in range(n):
        pts = points[:, b]
        legal = pts >= 0
        added = pts if (rs.upper_mask >> b) & 1 else np.zeros_like(pts)
        nxt_scored = np.full(t.n_hands, penta_scored) if b != rs.penta_box else (pts > 0).astype(np.int64)
        nxt = V[nxt_scored, open_mask & ~(1 << b), np.minimum(sub + added, cap)]
        ub = np.where((sub < threshold) & (sub + added >= threshold), upper_bonus, 0)
        value = (nxt + ub) + (pts + bonus).astype(np.float64)
        rest[legal, b] = value[legal]
        earned[:, b] = pts + bonus + ub
    best = np.argmax(rest, axis=1)  # the first of equal values: the box first in sheet order
    rows = np.arange(t.n_hands)
    return best, rest[rows, best], earned[rows, best].astype(np.float64)


def _keeps(t, hand_points: np.ndarray, hand_boxes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Expected points and box chances of each keep rerolled once, from those of the hands it can become."""
    points = np.zeros(t.n_keeps)
    boxes = np.zeros((t.n_keeps, hand_boxes.shape[1]))
    points[: t.n_hands], boxes[: t.n_hands] = hand_points, hand_boxes
    size = t.size
    for n in range(int(size[t.n_hands]), -1, -1):  # a keep one die larger comes first
        ks = np.flatnonzero(size == n)
        ks = ks[ks >= t.n_hands]
        bigger = t.add[ks]
        points[ks] = points[bigger].mean(axis=1)
        boxes[ks] = boxes[bigger].mean(axis=1)
    return points, boxes
