"""The advisor: every legal option of a situation with its expected final score, best first.

Option values are the expected final score of the game (points already on the sheet included) when the
option is taken now and the rest of the game is played optimally. Ties (exactly equal values) are ordered:
scoring before keeping, boxes in sheet order, keeps with more dice first, then by their faces.
"""

from __future__ import annotations

import dataclasses
import functools
import gettext
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pentadice.game import rules
from pentadice.game.moves import Keep, Move, Score
from pentadice.game.sheet import Sheet
from pentadice.game.situation import Situation
from pentadice.solver import turn
from pentadice.solver.turn_inputs import turn_inputs
from pentadice.support import paths
from pentadice.tables import moment_files, shipped, table

NO_SCORE_MESSAGE = rules.NO_SCORE_MESSAGE
_ANY_SHEET_ORDER = {b: i for i, b in enumerate(rules.BOX_IDS)}  # boxes of any sheet, Penta's in its sheet order
ENGLISH = gettext.NullTranslations()  # the messages as written (the JSON answers' language)
# What the second-moment code raises for a rule set it does not serve (the advice then goes without SDs).
SPREAD_UNAVAILABLE: tuple[type[Exception], ...] = (NotImplementedError,)


@dataclass(frozen=True)
class Option:
    """One thing a player may do now, a :class:`~pentadice.game.moves.Keep` or a :class:`~pentadice.game.moves.Score`,
    and what it is worth: the expected final score of the game with this move and optimal play after it."""

    move: Move
    value: float
    points: int = 0  # the box's points (scoring)
    penta_bonus: int = 0  # the bonus earned by a further Penta (scoring; 0 in a game without one)
    upper_bonus: int = 0  # the upper bonus earned by reaching the threshold (scoring)
    loss: float = 0.0  # expected points lost against the best option
    sd: float | None = None  # SD of the final score with this move and optimal play after it (Advisor.spread)

    @property
    def action(self) -> str:
        """``"keep"`` or ``"score"``: the move's kind, as in the JSON output."""
        return "keep" if isinstance(self.move, Keep) else "score"

    @property
    def keep(self) -> tuple[int, ...] | None:
        """The dice kept, for a keep; None for a score."""
        return self.move.dice if isinstance(self.move, Keep) else None

    @property
    def box(self) -> str | None:
        """The box filled, for a score; None for a keep."""
        return self.move.box if isinstance(self.move, Score) else None

    def as_dict(self) -> dict:
        """The option as JSON data (``sd`` when the advice has the spread)."""
        if isinstance(self.move, Keep):
            out = {"action": "keep", "keep": list(self.move.dice), "value": self.value, "loss": self.loss}
        else:
            out = {
                "action": "score",
                "box": self.move.box,
                "points": self.points,
                "penta_bonus": self.penta_bonus,
                "upper_bonus": self.upper_bonus,
                "value": self.value,
                "loss": self.loss,
            }
        if self.sd is not None:
            out["sd"] = self.sd
        return out

    def tie_key(self, rs: rules.RuleSet | None = None) -> tuple:
        """The order of options of exactly equal value: scoring before keeping, boxes in the sheet order of
        ``rs`` (without it, the order of :data:`rules.BOX_IDS`, Penta's sheet first), keeps with more dice
        first, then by their faces."""
        if isinstance(self.move, Score):
            order = rs.box_index if rs is not None else _ANY_SHEET_ORDER
            return (0, order[self.move.box], ())
        return (1, -len(self.move.dice), self.move.dice)

    def sort_key(self, rs: rules.RuleSet | None = None) -> tuple:
        """Best first, ties in :meth:`tie_key` order. (The advisor ranks on the points still to come, with the
        same tie order.)"""
        return (-self.value, *self.tie_key(rs))


@dataclass(frozen=True)
class Advice:
    """All options of a situation, best first, and what the rules say about it."""

    situation: Situation
    options: list[Option]
    score_so_far: int
    joker: str | None  # why the joker restricts or changes the boxes, when it applies
    no_box_scores: bool  # every box that may take the roll would score 0

    @property
    def best(self) -> Option:
        return self.options[0]

    @property
    def warning(self) -> str | None:
        """The rules' sacrifice message: on the last roll only, when every box that may take it scores 0."""
        return NO_SCORE_MESSAGE if self.no_box_scores and self.situation.rolls_left == 0 else None

    @property
    def best_keep(self) -> Option | None:
        """The best keep, or None on the last roll."""
        return next((o for o in self.options if isinstance(o.move, Keep)), None)

    @property
    def best_box(self) -> Option:
        """The legal box with the highest expected final score: the computer's choice, and the auto-commit's."""
        return next(o for o in self.options if isinstance(o.move, Score))

    def option_of(self, move: Move) -> Option:
        """The option that makes ``move``; ValueError if it is not legal now."""
        for o in self.options:
            if o.move == move:
                return o
        raise ValueError(f"{move} is not a legal option here")

    def option_for(self, keep: Sequence[int] | None = None, box: str | None = None) -> Option:
        """The option that keeps these dice, or scores in this box; ValueError if it is not legal now."""
        return self.option_of(Score(box) if box is not None else Keep(tuple(keep or ())))

    def as_dict(self, rs: rules.RuleSet, top: int | None = None) -> dict:
        """The advice as JSON data: rules, dice, rolls_left, sheet, score_so_far, best, options."""
        shown = self.options if top is None else self.options[:top]
        out = {
            "rules": rs.name,
            "dice": list(self.situation.dice),
            "rolls_left": self.situation.rolls_left,
            "sheet": self.situation.sheet.as_dict(rs),
            "score_so_far": self.score_so_far,
            "best": self.best.as_dict(),
            "options": [o.as_dict() for o in shown],
        }
        if self.joker:
            out["joker"] = self.joker
        if self.warning:
            out["message"] = self.warning
        return out


class Advisor:
    """Advice from a solved table. ``compiled=False`` runs the turn functions as plain Python: slower per
    situation (milliseconds) but without Numba's start-up, which suits a single question from the command line.
    With ``spread`` (off by default: it costs one more pass over the turn), :meth:`advise` gives every option
    its ``sd``, from the table's second moments (:attr:`moments`).
    """

    def __init__(self, tbl: table.Table, compiled: bool = True, spread: bool = False) -> None:
        self.table = tbl
        self.rules = tbl.rules
        self.compiled = compiled
        self.spread = spread
        self.inputs = turn_inputs(self.rules)  # what the turn kernels read, shared with batches and explanations
        self.values = np.asarray(tbl.values)
        self._moments: np.ndarray | None = None
        self.no_spread: str | None = None  # why the SDs cannot be had for this rule set (then none are shown)

    @property
    def moments(self) -> np.ndarray:
        """The table's second moments E[R^2] (:mod:`pentadice.solver.moments`): from their file beside the
        table, else computed once (seconds) and saved there if it can be written."""
        if self._moments is None:
            self._moments = np.asarray(moment_files.moments_for(self.table))
        return self._moments

    def load_spread(self) -> bool:
        """Give every option its SD from now on: the second moments from their file, else computed now (seconds)
        and saved beside the table where it can be written. TableError if their file is damaged. Where the
        second moments cannot be had for this rule set (:attr:`no_spread` says why), options go without an SD
        and this returns False rather than failing: the advice itself does not need them."""
        self.spread = self.has_spread()
        return self.spread

    def has_spread(self) -> bool:
        """Whether the second moments can be had (read, or computed once now); False, with :attr:`no_spread`
        saying why, where the rule set has none. TableError if their file is damaged."""
        if self._moments is None and self.no_spread is None:
            try:
                self._moments = np.asarray(moment_files.moments_for(self.table))
            except SPREAD_UNAVAILABLE as e:
                self.no_spread = str(e) or f"the {self.rules.name} table has no second moments"
        return self._moments is not None

    def has_moments_file(self) -> bool:
        """Whether the second moments can be read from their file (else :attr:`moments` computes them)."""
        if self._moments is not None:
            return True
        try:
            self._moments = np.asarray(moment_files.load_moments(self.rules, self.table.files.directory, self.values))
        except table.TableError:
            return False
        return True

    def option_sds(self, situation: Situation, options: Sequence[Option]) -> list[float]:
        """The SD of the final score for each option (the move, then optimal play): for a box, the SD of the
        points still to come from the next state; for a keep, from the keep's first and second moments."""
        from pentadice.solver import moments

        rs = self.rules
        upper = rs.upper_mask
        open_mask, sub, penta_scored, _ = self.state_of(situation)
        V, M = self.values, self.moments
        kv = km = None
        if situation.rolls_left > 0 and any(isinstance(o.move, Keep) for o in options):
            kv, km = moments.keep_moments(
                rs, V, M, open_mask, penta_scored, sub, situation.rolls_left, compiled_code=self.compiled
            )
        out = []
        for o in options:
            if isinstance(o.move, Keep):
                assert kv is not None and km is not None  # computed above when a keep is among the options
                k = self.inputs.tables.keep_of(o.move.dice)
                out.append(moments.sd(float(kv[k]), float(km[k])))
                continue
            b = rs.box_index[o.move.box]
            added = o.points if (upper >> b) & 1 else 0
            nxt_scored = penta_scored if b != rs.penta_box else int(o.points > 0)
            nxt = (nxt_scored, open_mask & ~(1 << b), min(sub + added, rs.upper_threshold))
            out.append(moments.sd(float(V[nxt]), float(M[nxt])))
        return out

    def with_spread(self, advice: Advice) -> Advice:
        """``advice`` with every option's ``sd`` (as it is, without them, where the rule set has no second
        moments: see :meth:`load_spread`)."""
        if not self.has_spread():
            return advice
        sds = self.option_sds(advice.situation, advice.options)
        options = [dataclasses.replace(o, sd=s) for o, s in zip(advice.options, sds, strict=True)]
        return dataclasses.replace(advice, options=options)

    @classmethod
    def load(
        cls,
        rules_name: str = rules.DEFAULT_RULES,
        directory: str | None = None,
        solve_missing: bool = True,
        progress: Callable[[int, int], None] | None = None,
        compiled: bool = True,
        on_wait: Callable[[Path], None] | None = None,
        spread: bool = False,
    ) -> Advisor:
        """The advisor of a rule set, its table loaded (checked) from the table directory; a missing table
        is solved once (with ``progress``) and saved there for next time. Processes asking at once for a
        missing table wait (``on_wait`` says so) for the one solving it."""
        rs = rules.get_rules(rules_name)
        where = paths.data_dir(directory)
        if not solve_missing:
            return cls(table.load(rs, where), compiled=compiled, spread=spread)

        def solve():
            from pentadice import solver

            return solver.solve(rs, progress=progress).values

        loaded = table.load_or_solve(rs, where, solve, on_wait, shipped=functools.partial(shipped.install, rs))
        return cls(loaded, compiled=compiled, spread=spread)

    def compile(self) -> None:
        """Compile (or load from Numba's cache) the kernels this advisor runs, now rather than at first use."""
        if self.compiled:
            from pentadice.solver import batch

            batch.evaluate(self, [])

    def situation(self, dice: Sequence[int], rolls_left: int | None = None, sheet: Sheet | None = None) -> Situation:
        """A checked situation of this advisor's rule set (``rolls_left`` None: the first roll's)."""
        return Situation.make(self.rules, dice, rolls_left, sheet)

    def advise(self, situation: Situation) -> Advice:
        """Every legal option of ``situation`` with its expected final score, best first."""
        keep_values, box_values, points, bonus = self._raw(situation)
        advice = self._advice(situation, keep_values, box_values, points, bonus)
        return self.with_spread(advice) if self.spread else advice

    def options(self, situation: Situation) -> list[Option]:
        """Every legal option, best first."""
        return self.advise(situation).options

    def best_box(self, situation: Situation) -> Option:
        """The auto-commit's choice: the legal box with the highest expected final score."""
        return self.advise(situation).best_box

    def best_keep(self, situation: Situation) -> Option | None:
        """The best keep (None on the last roll)."""
        return self.advise(situation).best_keep

    def loss(self, situation: Situation, keep: Sequence[int] | None = None, box: str | None = None) -> float:
        """Expected points lost by keeping ``keep`` (or scoring in ``box``) against the best option."""
        return self.advise(situation).option_for(keep=keep, box=box).loss

    def advise_many(self, situations: Sequence[Situation]) -> list[Advice]:
        """Advice for many situations at once, evaluated in parallel by compiled code."""
        from pentadice.solver import batch

        keep_values, box_values, points, bonus = batch.evaluate(self, situations)
        advices = [
            self._advice(s, keep_values[i], box_values[i], points[i], int(bonus[i])) for i, s in enumerate(situations)
        ]
        return [self.with_spread(a) for a in advices] if self.spread else advices

    # Internals shared by the single and the batch path.

    def state_of(self, situation: Situation) -> tuple[int, int, int, int]:
        """``(open_mask, upper_subtotal, penta_scored, hand)`` of a situation."""
        sheet, rs = situation.sheet, self.rules
        hand = self.inputs.tables.keep_of(situation.dice)
        return sheet.open_mask(rs), sheet.upper_subtotal(rs), int(sheet.penta_scored(rs)), hand

    def keep_values(self, situation: Situation, rerolls: int) -> np.ndarray:
        """The value still to come of keeping each multiset of the dice tables (``K[k]``) with ``rerolls``
        rerolls left, in the state of ``situation``'s sheet."""
        K, _, _, _ = self._turn(situation, rerolls)
        return K[:, 0].copy()

    def _raw(self, situation: Situation):
        K, box_values, points, bonus = self._turn(situation, situation.rolls_left)
        hand = self.inputs.tables.keep_of(situation.dice)
        keep_values = K[self.inputs.tables.subkeeps[hand], 0] if situation.rolls_left > 0 else np.empty(0)
        return keep_values, box_values, points, bonus

    def _turn(self, situation: Situation, rerolls: int):
        """One run of the turn code for the situation's state: ``(K, box_values, points, bonus)``."""
        open_mask, sub, penta_scored, hand = self.state_of(situation)
        t = self.inputs.tables
        K = np.empty((t.n_keeps, 1))
        B = np.empty((t.n_keeps, 1))
        rows = np.empty((self.rules.n_rows, 1))
        points = np.empty(self.rules.n_boxes, dtype=np.int64)
        box_values = np.empty(self.rules.n_boxes)
        if self.compiled:
            from pentadice.solver.kernels import narrow

            fn = narrow.situation_values
        else:
            fn = turn.situation_values
        args = (self.values, *self.inputs.turn(), hand)
        bonus = fn(*args, open_mask, penta_scored, sub, rerolls, K, B, rows, points, box_values)
        return K, box_values, points, int(bonus)

    def _advice(self, situation: Situation, keep_values, box_values, points, bonus: int) -> Advice:
        rs, t = self.rules, self.inputs.tables
        so_far = situation.sheet.score(rs)
        sub = situation.sheet.upper_subtotal(rs)
        legal = [b for b in range(rs.n_boxes) if points[b] >= 0]
        upper = rs.upper_mask
        keeps = []
        if situation.rolls_left > 0:
            keeps = [int(k) for k in t.subkeeps[t.keep_of(situation.dice)] if k >= 0]
        # Options are ranked, and losses taken, on the points still to come: adding the score so far first
        # could round two different values to one and break a tie otherwise than the simulator does.
        to_go = [float(box_values[b]) for b in legal] + [float(v) for v in keep_values[: len(keeps)]]
        best = max(to_go)
        ranked = []
        for b, rest in zip(legal, to_go, strict=False):
            pts = int(points[b])
            ub = rules.upper_bonus_earned(rs, sub, pts) if (upper >> b) & 1 else 0
            option = Option(
                Score(rs.box_ids[b]), so_far + rest, points=pts, penta_bonus=bonus, upper_bonus=ub, loss=best - rest
            )
            ranked.append((-rest, *option.tie_key(rs), option))
        for k, rest in zip(keeps, to_go[len(legal) :], strict=True):
            option = Option(Keep(t.keep_faces[k]), so_far + rest, loss=best - rest)
            ranked.append((-rest, *option.tie_key(rs), option))
        ranked.sort(key=lambda entry: entry[:-1])
        options = [entry[-1] for entry in ranked]
        scoring = [o for o in options if isinstance(o.move, Score)]
        no_box_scores = all(o.points == 0 for o in scoring)
        return Advice(situation, options, so_far, joker_note(rs, situation, scoring), no_box_scores)


def joker_note(
    rs: rules.RuleSet, situation: Situation, scoring: list[Option], tr: gettext.NullTranslations = ENGLISH
) -> str | None:
    """Why the joker shapes the boxes, in words, when it applies (``scoring``: the situation's scoring
    options). ``tr`` translates: the advice holds the English note; a front end asks again in its language."""
    if rs.penta_id is None:  # only a game with a Penta (Yahtzee) box has a joker
        return None
    sheet = situation.sheet
    counts = rules.dice_counts(situation.dice)
    penta_scored = int(sheet.penta_scored(rs))
    if not rules.joker_applies(rs.params(), counts, sheet.open_mask(rs), penta_scored):
        return None
    face = situation.dice[0]
    face_box = rs.face_box(face)
    name = tr.gettext(rs.box_name(face_box)) if face_box else str(face)
    penta = tr.gettext(rs.box_name(rs.penta_id))
    why = tr.gettext("a new {penta} with the {penta} box at {points}").format(
        penta=penta, points=sheet.boxes[rs.penta_id]
    )
    # The boxes a joker fills at their points, named from the sheet (a house rule's points are its own).
    fixed = [(tr.gettext(rs.box_name(box)), points) for box, points in rs.joker_boxes]
    names = ", ".join(box for box, _ in fixed)
    listed = ", ".join(tr.gettext("{box} {points}").format(box=box, points=points) for box, points in fixed)
    if rs.joker is rules.Joker.FREE:
        text = (
            tr.gettext("Joker: {why} and {name} filled: {boxes} score in full; any open box")
            if fixed
            else tr.gettext("Joker: {why} and {name} filled: any open box")
        )
    elif (allowed := {o.box for o in scoring}) == {face_box}:
        text = tr.gettext("Joker: {why}; the {name} box is open, so it must take the roll")
    elif allowed <= set(rs.boxes_of(rs.upper_mask)):
        text = tr.gettext(
            "Joker: {why}; {name} and the whole lower section are filled, so an open upper box takes it at 0"
        )
    elif fixed:
        text = tr.gettext("Joker: {why}; {name} is filled, so any open lower box takes it ({fixed})")
    else:
        text = tr.gettext("Joker: {why}; {name} is filled, so any open lower box takes it")
    return text.format(why=why, name=name, boxes=names, fixed=listed)
