"""The batch's fast path: lines read and answers written as text, straight from the kernel's arrays.

The answers are byte for byte those of the object path (``Advisor.advise_many``, ``Advice.as_dict``,
``json.dumps``; ``tests/test_batch_fast.py`` compares them), built without an object per option:

- a well-formed line (the fields with their JSON types, dice 1 to 6, box ids as written in the answers, points a
  box can hold, a bonus that can be) is read by :mod:`json` without the strict hooks (a key given twice is
  still caught), then checked; anything unusual (another spelling of a box, points as text, Kiriki's Penta box
  grown past 50, floats, deep nesting, bad UTF-8, an error of any kind) goes to the strict reader,
  :func:`pentadice.advisor.batch_lines.parse_line`, which reads it, or words its error, as before;
- a chunk's options are ranked, valued and laid out with numpy (the same float operations, in the same order,
  as ``Advisor._advice``), and the text of up to :data:`SLICE` lines is made by one ``%`` formatting of a
  template of precomputed pieces (each keep's text, each box's with its points and bonuses) with the values and
  losses (``%r`` is ``repr``, which ``json.dumps`` writes floats with);
- the rare situations whose text depends on more than the arrays (a joker, all the dice alike in any rule set, a
  value that is not a finite number, more points than the templates hold) are answered by the object path.

Sheets seen before are not checked again: their state and text are kept (a bounded number of them).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator

import numpy as np

from pentadice.advisor.batch_lines import parse_line
from pentadice.game import rules
from pentadice.game.sheet import Sheet, possible_points
from pentadice.solver import batch

SHEET_CACHE = 4096  # sheets whose state and text are kept; the cache starts over when full
SLICE = 1024  # lines formatted together
POINTS = 64  # box points written into the templates at least (the rule set's highest box points, if more;
# more points than that: the object path answers, e.g. Kiriki's grown Penta box)
_EMPTY: dict = {}
BONUS = rules.BONUS_ID


class Unusual(Exception):
    """A line for the strict reader (here: a key given twice)."""


def _unique(pairs: list) -> dict:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise Unusual
    return out


_DECODER = json.JSONDecoder(object_pairs_hook=_unique)
decode_unique = _DECODER.decode  # JSON with no key twice (Unusual otherwise); the web's fast path too


class Record:
    """One good line: the kernel's inputs and the answer's fixed parts."""

    __slots__ = ("alike", "dice_text", "hand", "line", "open_mask", "penta", "rolls", "sheet_text", "so_far", "sub")

    def __init__(self, line, situation, hand, alike, dice_text, rolls, sheet_info) -> None:
        self.line = line if situation is None else situation  # what the object path needs, if it is asked
        self.hand = hand
        self.alike = alike
        self.dice_text = dice_text
        self.rolls = rolls
        self.open_mask, self.sub, self.penta, self.so_far, self.sheet_text = sheet_info


class Formatter:
    """Reads batch lines and writes their answers for one advisor and ``top``."""

    def __init__(self, advisor, top: int | None = None) -> None:
        from pentadice.advisor.advice import NO_SCORE_MESSAGE

        rs = advisor.rules
        t = advisor.inputs.tables
        self.advisor = advisor
        self.rules = rs
        self.top = top
        self.tables = t
        self.int_types = (int,) * rs.dice
        self.rolls = rs.rolls
        self.possible = {b: frozenset(v) for b, v in possible_points(rs).items() if rs.parse_box(b, bonus=True) == b}
        self.possible.pop(rules.BONUS_ID, None)
        self.penta_id = rs.penta_id  # the Penta box, whose points the state remembers (None: the sheet has none)
        self.n_boxes = len(rs.boxes)
        self.threshold = rs.upper_threshold
        self.upper_bonus = rs.upper_bonus
        self.box_mask = rs.box_mask
        # (box id, points) of a box that may hold them: (order, bit, upper points, lower points, text).
        index, upper_mask = rs.box_index, rs.upper_mask
        self.entries = {
            (b, p): (
                index[b],
                1 << index[b],
                p if (upper_mask >> index[b]) & 1 else 0,
                0 if (upper_mask >> index[b]) & 1 else p,
                f"{json.dumps(b)}: {p}",
            )
            for b, allowed in self.possible.items()
            for p in allowed
        }
        self.sheets: dict = {}
        self.bonus_step = rs.penta_bonus
        self.bonus_key = json.dumps(BONUS) + ": "
        # Every roll of the dice, as given: its hand, whether all alike, and its text in the answers.
        self.dice_info = {}
        for roll in itertools.product(range(1, 7), repeat=rs.dice):
            faces = tuple(sorted(roll))
            self.dice_info[roll] = (t.keep_of(faces), len(set(faces)) == 1, json.dumps(list(faces)))
        self.head = '{"rules": ' + json.dumps(rs.name).replace("%", "%%") + ', "dice": '
        # Option templates by option id: keep k at k, then the empty one, then each box of the sheet with its
        # three whole numbers (points, Penta bonus, upper bonus) written in: box b with p points, Penta bonus j
        # (of ``bonuses``) and upper bonus u (0 or 1: earned) at ``box_base + ((b * points + p) * 2 + j) * 2 + u``,
        # ``points`` (:attr:`points`) past the highest points any box of the sheet takes from a roll.
        n_boxes = rs.n_boxes
        highest = max((max(v) for v in possible_points(rs).values() if v), default=0)
        self.points = max(POINTS, highest + 1)
        n_keeps = t.n_keeps
        templates = [
            '{"action": "keep", "keep": ' + json.dumps(list(f)) + ', "value": %r, "loss": %r}' for f in t.keep_faces
        ]
        self.empty_id = n_keeps
        templates.append("")
        self.box_base = len(templates)
        self.bonuses = (0, rs.penta_bonus) if rs.penta_bonus else (0, 0)
        for b in range(n_boxes):
            for points in range(self.points):
                for bonus in self.bonuses:
                    for upper in (0, rs.upper_bonus):
                        templates.append(
                            f'{{"action": "score", "box": {json.dumps(rs.box_ids[b])}, "points": {points}, '
                            f'"penta_bonus": {bonus}, "upper_bonus": {upper}, "value": %r, "loss": %r}}'
                        )
        self.first_tpl = np.array(templates, dtype=object)
        self.next_tpl = np.array([", " + x if x else x for x in templates], dtype=object)
        # Ties of equal value go in the options' tie order: boxes in sheet order, then keeps with more dice
        # first, then by faces; a hand's columns (its boxes, then its keeps in keep number order) are in that
        # order already when keep numbers run so, and a stable sort keeps it.
        rank = sorted(range(n_keeps), key=lambda k: (-len(t.keep_faces[k]), t.keep_faces[k]))
        self.columns_in_order = rank == list(range(n_keeps))
        keep_rank = np.empty(n_keeps + 1, dtype=np.int64)
        keep_rank[rank] = np.arange(n_keeps)
        keep_rank[n_keeps] = n_keeps  # the -1 padding
        self.keep_rank = n_boxes + keep_rank
        self.subkeeps = t.subkeeps
        self.box_ids = np.arange(n_boxes)
        self.upper_cols = ((upper_mask >> self.box_ids) & 1) == 1
        self.tail_plain = "]}\n"
        self.tail_message = '], "message": ' + json.dumps(NO_SCORE_MESSAGE).replace("%", "%%") + "}\n"

    # Reading.

    def read(self, line) -> Record | None:
        """A good line's record by the fast path, or None for the strict reader to judge."""
        try:
            text = line.decode("utf-8") if isinstance(line, bytes) else line
            data = decode_unique(text)
        except (Unusual, ValueError, TypeError, KeyError, RecursionError):
            return None
        return self.read_data(data, line)

    def read_data(self, data, line=None) -> Record | None:
        """The record of a situation given as JSON data (a line decoded, or an item of a web request), or None
        for the strict reader to judge; ``data`` is left as it is."""
        try:
            if type(data) is not dict:
                return None
            dice = data["dice"]
            rolls = data.get("rolls_left", self.rolls - 1)  # the first roll's by default
            sheet = data.get("sheet", _EMPTY)
            if len(data) != 1 + ("rolls_left" in data) + ("sheet" in data):
                return None
            if type(dice) is not list or type(rolls) is not int or type(sheet) is not dict:
                return None
            if tuple(map(type, dice)) != self.int_types or not 0 <= rolls < self.rolls:
                return None
            info = self.dice_info.get(tuple(dice))
            if info is None:
                return None
            for v in sheet.values():
                if type(v) is not int:
                    return None
            key = tuple(sheet.items())
            sheet_info = self.sheets.get(key)
            if sheet_info is None:
                sheet_info = self._sheet_info(sheet)
                if sheet_info is None:
                    return None
                if len(self.sheets) >= SHEET_CACHE:
                    self.sheets.clear()
                self.sheets[key] = sheet_info
        except (Unusual, ValueError, TypeError, KeyError, RecursionError):
            return None
        return Record(line, None, info[0], info[1], info[2], rolls, sheet_info)

    def record(self, situation) -> Record:
        """The record of a situation read by the strict reader."""
        hand = self.tables.keep_of(situation.dice)
        alike = len(set(situation.dice)) == 1
        return Record(
            None,
            situation,
            hand,
            alike,
            json.dumps(list(situation.dice)),
            situation.rolls_left,
            self._of_sheet(situation.sheet),
        )

    def _sheet_info(self, sheet: dict):
        """``(open_mask, upper_subtotal, penta_scored, score_so_far, text)`` of a sheet given as ``{id: int}``,
        or None when it is not a sheet of the game."""
        extra = 0
        if BONUS in sheet:
            sheet = dict(sheet)
            extra = sheet.pop(BONUS)
            step = self.bonus_step
            if not (step and extra > 0 and extra % step == 0 and extra // step <= len(sheet) - 1):
                return self._slow_sheet({**sheet, BONUS: extra})  # no bonus, or not a possible one
            if self.penta_id is None or sheet.get(self.penta_id, 0) <= 0:
                return self._slow_sheet({**sheet, BONUS: extra})
        entries = self.entries
        found = []
        mask = upper = lower = 0
        for item in sheet.items():
            entry = entries.get(item)
            if entry is None:
                return self._slow_sheet({**sheet, BONUS: extra} if extra else sheet)  # another spelling, etc.
            found.append(entry)
            mask |= entry[1]
            upper += entry[2]
            lower += entry[3]
        if len(sheet) >= self.n_boxes:
            return None  # the game is over: the strict reader says so
        found.sort()
        bonus = self.upper_bonus if upper >= self.threshold else 0
        text = ", ".join([entry[4] for entry in found])
        if extra:
            text = f"{text}, {self.bonus_key}{extra}"
        penta = int(self.penta_id is not None and sheet.get(self.penta_id, 0) > 0)
        return self.box_mask & ~mask, min(upper, self.threshold), penta, upper + bonus + lower + extra, "{" + text + "}"

    def _slow_sheet(self, sheet: dict):
        try:
            s = Sheet.from_mapping(sheet, self.rules)
            s.validate(self.rules)
        except ValueError:
            return None
        return self._of_sheet(s)

    def _of_sheet(self, s: Sheet):
        rs = self.rules
        return (
            s.open_mask(rs),
            s.upper_subtotal(rs),
            int(s.penta_scored(rs)),
            s.score(rs),
            json.dumps(s.as_dict(rs)).replace("%", "%%"),
        )

    # Writing.

    def texts(self, records: list[Record]) -> Iterator[tuple[str, int, None]]:
        """``(text, count, None)``: the answers' lines (each ending in a newline) of good lines' records, in
        order, a slice of ``count`` lines at a time."""
        for template, numbers, count in self.prepare(records):
            yield template % numbers, count, None

    def prepare(self, records: list[Record]) -> Iterator[tuple[str, tuple, int]]:
        """The answers of good lines' records as ``(template, numbers, count)``: ``template % numbers`` is the
        text of ``count`` lines, in order (at most :data:`SLICE` lines a piece, so that memory stays small)."""
        n = len(records)
        if n == 0:
            return
        hands = np.fromiter((r.hand for r in records), dtype=np.int64, count=n)
        rerolls = np.fromiter((r.rolls for r in records), dtype=np.int64, count=n)
        open_masks = np.fromiter((r.open_mask for r in records), dtype=np.int64, count=n)
        pentas = np.fromiter((r.penta for r in records), dtype=np.int64, count=n)
        subs = np.fromiter((r.sub for r in records), dtype=np.int64, count=n)
        out = batch.evaluate_states(self.advisor, hands, open_masks, pentas, subs, rerolls)
        for start in range(0, n, SLICE):
            part = slice(start, start + SLICE)
            yield self._template(records[part], hands[part], rerolls[part], subs[part], *(a[part] for a in out))

    def _template(self, records, hands, rerolls, subs, keep_out, box_out, points_out, bonus_out):
        n = len(records)
        so_far = np.fromiter((r.so_far for r in records), dtype=np.int64, count=n)
        nb = self.box_ids.shape[0]
        sub_ids = self.subkeeps[hands]  # (n, S): the keep of each keep column, -1 past the hand's keeps
        legal = points_out >= 0
        keep_valid = (sub_ids >= 0) & (rerolls > 0)[:, None]
        valid = np.concatenate([legal, keep_valid], axis=1)
        rest = np.concatenate([box_out, keep_out], axis=1)
        slow = np.fromiter((r.alike for r in records), dtype=bool, count=n)
        slow |= (valid & ~np.isfinite(rest)).any(axis=1)  # json.dumps writes NaN, repr nan
        slow |= ~valid.any(axis=1)
        # Best first (on the points still to come), ties in the options' tie order.
        key = np.where(valid, -rest, np.inf)
        if self.columns_in_order:
            order = np.argsort(key, axis=1, kind="stable")
        else:
            tie = np.concatenate([np.broadcast_to(self.box_ids, (n, nb)), self.keep_rank[sub_ids]], axis=1)
            order = np.lexsort((tie, key), axis=1)
        count = valid.sum(axis=1)
        # The best value as Python's max over [legal boxes..., keeps...] finds it: the first of the largest.
        best_col = np.argmax(np.where(valid, rest, -np.inf), axis=1)
        best = rest[np.arange(n), best_col]
        with np.errstate(invalid="ignore"):
            values = so_far.astype(np.float64)[:, None] + rest
            losses = best[:, None] - rest
        # Each option's template: a box's with its points and bonuses written in.
        bonus = bonus_out[:, None]
        sub = subs[:, None]
        earned = self.upper_cols & (sub < self.threshold) & (sub + points_out >= self.threshold)
        j = (bonus == self.bonuses[1]) & (bonus != 0)
        top_points = self.points
        slow |= ((bonus != 0) & ~j)[:, 0] | (legal & (points_out >= top_points)).any(axis=1)
        box_tpl = self.box_base + ((self.box_ids * top_points + np.clip(points_out, 0, top_points - 1)) * 2 + j) * 2
        box_tpl += earned
        ids = np.concatenate(
            [np.where(legal, box_tpl, self.empty_id), np.where(keep_valid, sub_ids, self.empty_id)], axis=1
        )
        sorted_ids = np.take_along_axis(ids, order, axis=1)
        shown = count if self.top is None else np.minimum(count, self.top)
        m = rest.shape[1]
        sorted_ids[np.arange(m) >= shown[:, None]] = self.empty_id
        sorted_ids[slow] = self.empty_id
        best_ids = sorted_ids[:, 0].copy() if self.top is None else np.take_along_axis(ids, order[:, :1], axis=1)[:, 0]
        best_ids[slow] = self.empty_id
        # The numbers each line shows, in its text's order: the best's value and loss, then the options'.
        numbers = np.empty((n, m + 1, 2))
        numbers[:, 1:, 0] = np.take_along_axis(values, order, axis=1)
        numbers[:, 1:, 1] = np.take_along_axis(losses, order, axis=1)
        numbers[:, 0] = numbers[:, 1]
        shows = np.concatenate([best_ids[:, None], sorted_ids], axis=1) != self.empty_id
        args = numbers[shows].ravel().tolist()
        # The template: per line its head, the best, the options and its tail.
        pieces = np.empty((n, m + 4), dtype=object)
        no_score = ~(legal & (points_out != 0)).any(axis=1) & (rerolls == 0)
        pieces[:, 1] = self.first_tpl[best_ids]
        pieces[:, 2] = ', "options": ['
        pieces[:, 3] = self.first_tpl[sorted_ids[:, 0]]
        pieces[:, 4:-1] = self.next_tpl[sorted_ids[:, 1:]]
        pieces[:, -1] = np.where(no_score, self.tail_message, self.tail_plain)
        head = self.head
        pieces[:, 0] = [
            f'{head}{r.dice_text}, "rolls_left": {r.rolls}, "sheet": {r.sheet_text}, '
            f'"score_so_far": {r.so_far}, "best": '
            for r in records
        ]
        slow_rows = np.flatnonzero(slow).tolist()
        for i in slow_rows:
            pieces[i, :] = ""
            pieces[i, 0] = self._object_path(records[i], keep_out[i], box_out[i], points_out[i], int(bonus_out[i]))
        return "".join(pieces.ravel().tolist()), tuple(args), n

    def _object_path(self, record: Record, keep_values, box_values, points, bonus: int) -> str:
        situation = record.line if not isinstance(record.line, str | bytes) else parse_line(self.rules, record.line)
        advice = self.advisor._advice(situation, keep_values, box_values, points, bonus)
        return (json.dumps(advice.as_dict(self.rules, self.top)) + "\n").replace("%", "%%")
