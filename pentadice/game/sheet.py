"""The score sheet: which boxes hold what, the Penta bonus so far, and the state between turns it implies.

Text notation: ``"ones=3 threes=9 penta=50 penta_bonus=100"`` (box ids of the rule set's sheet,
``RuleSet.box_ids``, plus ``penta_bonus`` where the sheet has a Penta box); JSON: an object of the same pairs.
An empty sheet is the start of a game.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from pentadice.game import dice, rules
from pentadice.support import inputs

BONUS_KEY = rules.BONUS_ID
PAIR = re.compile(r"([^=,]+?)\s*=\s*([^\s,]*)")
POINTS = re.compile(r"-?[0-9]{1,9}", re.ASCII)  # plain ASCII digits: no "0_9", no other scripts' digits
MAX_REPEATS = 100  # Kiriki: five of a kind added to its box at most this many times (20 has odds below 1e-25)


class SheetError(ValueError):
    """A score sheet that cannot occur in a game, or that cannot be read."""


@functools.cache
def possible_points(rs: rules.RuleSet) -> dict[str, frozenset[int]]:
    """Every score each box can hold under rule set ``rs``, from the rules' own scoring of every hand (0 where
    a roll can miss the box: Chance never holds 0)."""
    p = rs.params()
    tables = dice.tables(rs.dice)
    # Every box open and the Penta box empty: the rules' score table (shared with the turn code) holds these.
    scores = rules.score_table(rs)
    out: dict[str, set[int]] = {b: {int(x) for x in np.unique(scores[:, rs.box_index[b]]) if x >= 0} for b in rs.boxes}
    points = np.empty(rs.n_boxes, dtype=np.int64)
    no_penta = rs.box_mask & ~(1 << rs.penta_box if rs.penta_box >= 0 else 0)
    # Only dice all alike score otherwise in other states (a sheet with a Penta box): the joker's scores with
    # the face's upper box filled and with it open, and five of a kind with the Penta box sacrificed.
    contexts = [(no_penta, 1), (no_penta & ~rs.upper_mask, 1), (no_penta, 0)]
    for h in np.flatnonzero(scores[:, rs.n_boxes] == 0):
        for open_mask, penta_scored in contexts:
            rules.score_options(p, tables.counts[h], open_mask, penta_scored, points)
            for b in rs.boxes:
                pts = int(points[rs.box_index[b]])
                if pts >= 0:
                    out[b].add(pts)
    return {b: frozenset(v) for b, v in out.items()}


@dataclass(frozen=True)
class Sheet:
    """A score sheet: ``boxes`` maps each filled box to its points; ``penta_bonus`` is the bonus so far."""

    boxes: Mapping[str, int] = field(default_factory=dict)
    penta_bonus: int = 0

    @classmethod
    def parse(cls, text: str, rs: rules.RuleSet | None = None) -> Sheet:
        """A sheet from ``"box=points ..."``, pairs apart by spaces or commas; box names as people type them
        (``full house=25``, ``FH=25``, ``3k=17``: see :meth:`rules.RuleSet.parse_box`, under ``rs``)."""
        pairs = []
        end = 0
        for m in PAIR.finditer(text):
            if _separators_only(text[end : m.start()]):
                pairs.append((m.group(1).strip(), m.group(2)))
                end = m.end()
            else:
                break
        rest = text[end:]
        if not _separators_only(rest):
            raise SheetError(f"sheet entry {rest.replace(',', ' ').split()[0][:40]!r} is not BOX=POINTS")
        return cls.from_pairs(pairs, rs)

    @classmethod
    def read(cls, text: str, rs: rules.RuleSet | None = None) -> Sheet:
        """A sheet file: a JSON object, or the ``box=points`` text of :meth:`parse`. A leading byte-order mark
        (some editors, Windows Notepad among them, begin a UTF-8 file with one) is dropped."""
        text = text.removeprefix("\ufeff")
        return cls.from_json(text, rs) if text.lstrip().startswith(("{", "[")) else cls.parse(text, rs)

    @classmethod
    def from_json(cls, text: str | bytes, rs: rules.RuleSet | None = None) -> Sheet:
        """A sheet from a JSON object of ``box: points`` pairs (strict JSON: see :mod:`pentadice.support.inputs`)."""
        try:
            data = inputs.loads(text, "the sheet")
        except inputs.InputError as e:
            raise SheetError(str(e)) from None
        if not isinstance(data, dict):
            raise SheetError(f"the sheet must be a JSON object of box: points pairs, not {inputs.json_kind(data)}")
        return cls.from_pairs(list(data.items()), rs)

    @classmethod
    def from_mapping(cls, data: object, rs: rules.RuleSet | None = None) -> Sheet:
        """A sheet from a mapping of box names (and ``penta_bonus``) to points."""
        if not isinstance(data, Mapping):
            raise SheetError("the sheet must be an object of box: points pairs")
        return cls.from_pairs(list(data.items()), rs)

    @classmethod
    def from_pairs(cls, pairs: list, rs: rules.RuleSet | None = None) -> Sheet:
        """A sheet from ``(name, points)`` pairs, names read by ``rs`` (Penta's names when None); refuses unknown
        names, a box given twice (under any of its names) and points that are not whole numbers."""
        names = rs or rules.PENTA_RULES
        boxes: dict[str, int] = {}
        bonus = None
        for name, value in pairs:
            if not isinstance(name, str):
                raise SheetError(f"unknown box {name!r}")
            try:
                key = names.parse_box(name, bonus=True)
            except rules.UnknownBox as e:
                raise SheetError(str(e)) from None
            if key in boxes or (key == BONUS_KEY and bonus is not None):
                raise SheetError(f"box {key!r} is given twice")
            if isinstance(value, bool) or not isinstance(value, int | str):
                raise SheetError(f"{key}={value!r}: points must be a whole number")
            if isinstance(value, str) and not POINTS.fullmatch(value):
                raise SheetError(f"{key}={value!r}: points must be a whole number (digits 0-9, at most 9 of them)")
            points = int(value)
            if key == BONUS_KEY:
                bonus = points
            else:
                boxes[key] = points
        return cls(boxes, bonus or 0)

    def validate(self, rs: rules.RuleSet, finished_ok: bool = False) -> Sheet:
        """Check that this sheet can occur in a game of ``rs`` and, unless ``finished_ok`` (a saved game's
        sheets), that it is not finished; returns it."""
        possible = possible_points(rs)
        for box, points in self.boxes.items():
            if box not in possible:
                raise SheetError(f"{rs.title} has no {box!r} box")
            if box == rs.penta_id and rs.penta_repeat and points > 0 and points % rs.penta_points == 0:
                most = rs.penta_points * (1 + MAX_REPEATS)
                if points > most:
                    raise SheetError(
                        f"{box}={points} is beyond belief: {rs.box_name(box)} holds at most {most} here "
                        f"({MAX_REPEATS} more five of a kinds added to it)"
                    )
                continue  # Kiriki: the box grows by 50 with each five of a kind added to it
            if points not in possible[box]:
                raise SheetError(f"{box}={points} is impossible: {rs.box_name(box)} scores {_spans(possible[box])}")
        bonus = self.penta_bonus
        if bonus:
            step = rs.penta_bonus
            if step == 0:
                raise SheetError(
                    f"{rs.title} pays no bonus for further {rs.box_name(rs.all_alike_box)}s, yet {BONUS_KEY}={bonus}"
                )
            if bonus < 0:
                raise SheetError(f"{BONUS_KEY}={bonus} is impossible: a bonus is never negative")
            if bonus % step:
                raise SheetError(f"{BONUS_KEY}={bonus} is impossible: the bonus comes in steps of {step}")
            if not self.penta_scored(rs):
                raise SheetError(f"{BONUS_KEY}={bonus} is impossible without penta={rs.penta_points}")
            if bonus // step > len(self.boxes) - 1:
                raise SheetError(
                    f"{BONUS_KEY}={bonus} is impossible: each bonus comes with another filled box, "
                    f"and only {len(self.boxes) - 1} are filled besides {rs.box_name(rs.all_alike_box)}"
                )
        if len(self.boxes) == len(rs.boxes) and not finished_ok:
            raise SheetError("every box is filled: the game is over")
        return self

    # The state between turns that the sheet implies.

    def open_mask(self, rs: rules.RuleSet) -> int:
        """Bit mask of the boxes still open."""
        return rs.box_mask & ~rs.mask_of(self.boxes)

    @property
    def upper_total(self) -> int:
        """Points in the upper boxes (Ones to Sixes: on every sheet, :data:`rules.UPPER_IDS`)."""
        return sum(v for b, v in self.boxes.items() if b in rules.UPPER_IDS)

    def upper_subtotal(self, rs: rules.RuleSet) -> int:
        """The upper total capped at the bonus threshold: the state's subtotal."""
        return min(self.upper_total, rs.upper_threshold)

    def penta_scored(self, rs: rules.RuleSet) -> bool:
        """Whether the Penta box holds points: 50 (the bonus and, in Penta, the joker apply), or in Kiriki any
        positive score (five of a kind may be added to it)."""
        return rs.penta_id is not None and self.boxes.get(rs.penta_id, 0) > 0

    def totals(self, rs: rules.RuleSet) -> dict[str, int]:
        """The sheet's sums: upper section, its bonus, lower section, Penta bonuses and TOTAL. The one place
        scores are added up: the game, the advisor and (checked by the tests) the simulator agree with it."""
        upper = self.upper_total
        upper_bonus = rs.upper_bonus if upper >= rs.upper_threshold else 0
        lower = sum(v for b, v in self.boxes.items() if b not in rules.UPPER_IDS)
        total = upper + upper_bonus + lower + self.penta_bonus
        return {
            "upper": upper,
            "upper_bonus": upper_bonus,
            "lower": lower,
            "penta_bonus": self.penta_bonus,
            "total": total,
        }

    def score(self, rs: rules.RuleSet) -> int:
        """The score so far: boxes, upper bonus and Penta bonuses."""
        return self.totals(rs)["total"]

    def with_score(self, box: str, points: int, penta_bonus: int = 0) -> Sheet:
        """A new sheet with ``points`` in ``box`` and ``penta_bonus`` more (Kiriki adds to a Penta box that
        holds points); this sheet is left as it is."""
        return Sheet({**self.boxes, box: self.boxes.get(box, 0) + points}, self.penta_bonus + penta_bonus)

    def as_dict(self, rs: rules.RuleSet | None = None) -> dict[str, int]:
        """The sheet as box: points pairs in the order of ``rs``'s sheet (without ``rs``: of the first known
        sheet that has every box filled here), with the bonus last when there is one."""
        if rs is not None:
            order: tuple[str, ...] = rs.box_ids
        else:
            fits = (ids for ids in ([b.id for b in s] for s in rules.SHEETS) if set(self.boxes) <= set(ids))
            order = tuple(next(fits, rules.BOX_IDS))
        out = {b: self.boxes[b] for b in order if b in self.boxes}
        if self.penta_bonus:
            out[BONUS_KEY] = self.penta_bonus
        return out


def _separators_only(text: str) -> bool:
    return not text.replace(",", " ").strip()


def _spans(values: frozenset[int]) -> str:
    """Allowed scores in words: ``0, 5 to 30`` for runs of consecutive numbers, ``0 or 25`` for a few."""
    ordered = sorted(values)
    runs: list[list[int]] = []
    for v in ordered:
        if runs and v == runs[-1][-1] + 1:
            runs[-1].append(v)
        else:
            runs.append([v])
    words = [str(r[0]) if len(r) == 1 else f"{r[0]} to {r[-1]}" for r in runs]
    return ", ".join(words[:-1]) + " or " + words[-1] if len(words) > 1 else words[0]
