"""Fresh advice at speed: one situation's ``pentadice advise --json`` answer (or ``--batch``'s, without ``why``) as
JSON text, from one compiled call (:func:`pentadice.solver.advice_kernel.advise_states`) and a template.

The object path (:meth:`~pentadice.advisor.advice.Advisor.advise`, :func:`~pentadice.advisor.explain.explain`,
``json.dumps``) is the reference and stays: this path gives the same bytes (``tests/test_quick_advice.py``
compares them), a hundred times faster than it. Python only reads the situation and writes the text:

- a situation is read by the batch's fast reader (:meth:`pentadice.advisor.batch_json.Formatter.read_data`):
  anything it does not read (another spelling of a box, a wrong type, an impossible situation) is answered by
  the object path, which reads it, or words its error, as ever;
- the options' text is one ``%`` formatting of precomputed pieces (each keep's text, each box's with its
  points and bonuses written in) with the values, losses and SDs (``%r`` is ``repr``, as ``json.dumps``
  writes floats); the explanation, when there is one, is made by the explainer's own classes from the kernel's
  numbers (two options), so its text is the explainer's;
- a number that is not finite (``json.dumps`` writes NaN where ``%r`` writes nan) sends the situation to the
  object path.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from pentadice.advisor.advice import NO_SCORE_MESSAGE, Advisor, Option, joker_note
from pentadice.advisor.explain import Outlook, Why, why_text
from pentadice.game.moves import Keep, Score
from pentadice.game.sheet import Sheet
from pentadice.game.situation import Situation

if TYPE_CHECKING:
    from pentadice.advisor.batch_json import Record

MAX_TOP = 1_000_000  # the largest ``top`` a request may give (the web API's bound)


def decode(body: bytes) -> object | None:
    """``body`` as JSON, read plainly (UTF-8, no key twice), or None: the strict reader
    (:func:`pentadice.support.inputs.loads`) then reads it and words what is wrong. What this reads may still hold
    what the strict reader refuses (NaN, numbers too long): the fast reader takes only fields it checks."""
    from pentadice.advisor.batch_json import Unusual, decode_unique  # the batch's strict decoder, one definition

    try:
        return decode_unique(body.decode("utf-8"))
    except (Unusual, ValueError, RecursionError):  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        return None


@dataclass(frozen=True)
class _Box:
    """A legal box, as :func:`~pentadice.advisor.advice.joker_note` reads the scoring options (``.box``)."""

    box: str


class QuickAdvisor:
    """The fast path of one advisor: situations read, evaluated by the kernel, answered as ``--json`` text."""

    def __init__(self, advisor: Advisor) -> None:
        from pentadice.advisor.batch_json import Formatter  # the kernels load with it: not at import
        from pentadice.solver import advice_kernel as ak

        self.kernel = ak
        self.advisor = advisor
        rs = self.rules = advisor.rules
        inputs = advisor.inputs
        t = self.tables = inputs.tables
        self.reader = Formatter(advisor)
        self.values = advisor.values
        self.keep_texts: dict[bool, list[str]] = {}  # by spread: each keep's option text
        self.box_texts: dict[tuple[bool, int, int, int, int], str] = {}
        rank = sorted(range(t.n_keeps), key=lambda k: (-len(t.keep_faces[k]), t.keep_faces[k]))
        self.keep_rank = np.empty(t.n_keeps, dtype=np.int64)
        self.keep_rank[rank] = np.arange(t.n_keeps)
        self.width = rs.n_boxes + t.subkeeps.shape[1]  # options of a situation at most
        self.fixed = (inputs.p, rs.dice, t.counts, inputs.scores, t.add, t.subs, t.subkeeps, self.keep_rank)
        self.head_text = '{"rules": ' + json.dumps(rs.name) + ', "dice": '
        self.message_text = ', "message": ' + json.dumps(NO_SCORE_MESSAGE)
        self.jokers = rs.penta_id is not None  # all dice alike may meet the joker (its note needs the sheet)

    # Reading.

    def read(self, data: object) -> Record | None:
        """The record of a situation given as JSON data (``dice``, ``rolls_left``, ``sheet``), or None when the
        object path must read it (and say what is wrong, if anything)."""
        return self.reader.read_data(data, data)

    # Computing.

    def spread(self, explain: bool) -> bool:
        """Whether the options carry their SD: as the object path gives them, for a single answer
        (``advice_object``: whenever the second moments can be had) or a batch's (``advise_many``: when the
        advisor's ``spread`` is on)."""
        return self.advisor.spread or (explain and self.advisor.has_spread())

    def evaluate(self, records: list[Record], explain: bool, spread: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(head, iopt, fopt)`` of the kernel for ``records`` (see :mod:`pentadice.solver.advice_kernel`)."""
        n = len(records)
        hands = np.fromiter((r.hand for r in records), dtype=np.int64, count=n)
        masks = np.fromiter((r.open_mask for r in records), dtype=np.int64, count=n)
        pentas = np.fromiter((r.penta for r in records), dtype=np.int64, count=n)
        subs = np.fromiter((r.sub for r in records), dtype=np.int64, count=n)
        rolls = np.fromiter((r.rolls for r in records), dtype=np.int64, count=n)
        so_far = np.fromiter((r.so_far for r in records), dtype=np.int64, count=n)
        head = np.empty((n, 5), dtype=np.int64)
        iopt = np.empty((n, self.width, 5), dtype=np.int64)
        fopt = np.empty((n, self.width, 5))
        moments = self.advisor.moments if spread else self.values  # not read without the spread
        self.kernel.advise_states(
            self.values, moments, spread, *self.fixed, hands, masks, pentas, subs, rolls, so_far, explain,
            head, iopt, fopt,
        )  # fmt: skip
        return head, iopt, fopt

    # Writing.

    def texts(self, records: list[Record], top: int | None, explain: bool) -> list[str | None]:
        """Each record's answer as ``--json`` text (with ``why`` when ``explain``, else as ``--batch`` writes it),
        or None where the object path must answer (a number that is not finite)."""
        if not records:
            return []
        spread = self.spread(explain)
        head, iopt, fopt = self.evaluate(records, explain, spread)
        return [self._text(r, head[i], iopt[i], fopt[i], top, explain, spread) for i, r in enumerate(records)]

    def _keep_texts(self, spread: bool) -> list[str]:
        found = self.keep_texts.get(spread)
        if found is None:
            sd = ', "sd": %r' if spread else ""
            faces = self.tables.keep_faces
            found = self.keep_texts[spread] = [
                '{"action": "keep", "keep": ' + json.dumps(list(f)) + ', "value": %r, "loss": %r' + sd + "}"
                for f in faces
            ]
        return found

    def _box_text(self, spread: bool, b: int, points: int, bonus: int, upper: int) -> str:
        key = (spread, b, points, bonus, upper)
        found = self.box_texts.get(key)
        if found is None:
            found = (
                f'{{"action": "score", "box": {json.dumps(self.rules.box_ids[b])}, "points": {points}, '
                f'"penta_bonus": {bonus}, "upper_bonus": {upper}, "value": %r, "loss": %r'
                + (', "sd": %r}' if spread else "}")
            )
            if len(self.box_texts) < 1 << 16:
                self.box_texts[key] = found
        return found

    def _text(self, record: Record, head, iopt, fopt, top: int | None, explain: bool, spread: bool) -> str | None:
        ak = self.kernel
        h = head.tolist()
        if not h[ak.H_FINITE]:
            return None
        n, bonus = h[ak.H_COUNT], h[ak.H_BONUS]
        shown = n if top is None else min(n, top)
        opts = iopt[:n].tolist()
        keep_texts = self._keep_texts(spread)
        pieces = []
        for kind, ident, points, upper, _ in opts[:shown]:
            if kind == ak.KIND_KEEP:
                pieces.append(keep_texts[ident])
            else:
                pieces.append(self._box_text(spread, ident, points, bonus, upper))
        width = 3 if spread else 2  # value, loss (, sd): the floats of an option's text
        numbers = fopt[:shown, :width].ravel().tolist()
        template = pieces[0] + ', "options": [' + ", ".join(pieces) + "]"
        options = template % (*numbers[:width], *numbers)
        tail = ""
        if self.jokers and record.alike:
            legal = [_Box(self.rules.box_ids[o[1]]) for o in opts if o[0] == ak.KIND_BOX]
            note = joker_note(self.rules, self._situation(record), legal)
            if note:
                tail = ', "joker": ' + json.dumps(note)
        if h[ak.H_NO_SCORE] and record.rolls == 0:
            tail += self.message_text
        text = (
            f'{self.head_text}{record.dice_text}, "rolls_left": {record.rolls}, "sheet": {record.sheet_text}, '
            f'"score_so_far": {record.so_far}, "best": {options}{tail}'
        )
        if not explain:
            return text + "}"
        obvious = h[ak.H_OBVIOUS]
        if obvious < 0:
            return text + ', "why": null}'
        why = self._why(record, opts, fopt, bonus, obvious, spread)
        return text + ', "why": ' + json.dumps(why.as_dict()) + "}"

    def _why(self, record: Record, opts: list, fopt, bonus: int, obvious: int, spread: bool) -> Why:
        """The explanation's objects for the best option and the rule of thumb's, from the kernel's numbers."""
        ak = self.kernel
        looks = []
        for j in (0, obvious):
            kind, ident, points, upper, likely = opts[j]
            value, loss, sd, now, chance = fopt[j].tolist()
            shown_sd = sd if spread else None
            if kind == ak.KIND_KEEP:
                option = Option(Keep(self.tables.keep_faces[ident]), value, loss=loss, sd=shown_sd)
            else:
                move = Score(self.rules.box_ids[ident])
                option = Option(move, value, points, bonus, upper, loss, shown_sd)
            later = option.value - record.so_far - now
            looks.append(Outlook(option, now, later, {self.rules.box_ids[likely]: chance}))
        best, rule_of_thumb = looks
        return Why(best, rule_of_thumb, why_text(best, rule_of_thumb, self.rules))

    def _situation(self, record: Record) -> Situation:
        """The situation of a record read from JSON data (for the joker's note: the sheet's Penta box)."""
        sheet = record.line.get("sheet", {}) if isinstance(record.line, dict) else {}
        dice = tuple(json.loads(record.dice_text))
        return Situation(dice, record.rolls, Sheet.from_mapping(sheet, self.rules))

    def warm_up(self) -> None:
        """Run the kernel once (it loads from Numba's cache, or compiles: seconds, once per machine)."""
        record = self.read({"dice": [1, 1, 3, 4, 6, 6][: self.rules.dice], "rolls_left": self.rules.rolls - 1})
        if record is not None:
            self.texts([record], None, True)
