"""The advice a server gives: the very object of ``pentadice advise --json`` for one situation (the
``why`` included), and ``--batch``'s answers for many; bodies parsed by the batch reader itself, so that a
bad situation gets the batch's own error text.

Advice depends on nothing but the situation, so answers are kept in a bounded cache (most recently used
first): a repeated question costs a dictionary look-up, not the turn code and its explanation. A new question is
answered by the compiled path (:mod:`pentadice.advisor.quick`: one kernel call and a template, the same bytes) where
its body reads plainly, else by the object path, which also words every error.
"""

from __future__ import annotations

import json
import threading
import weakref
from collections import OrderedDict

from pentadice.advisor.batch_io import answers
from pentadice.advisor.batch_lines import BatchLineError, parse_line
from pentadice.advisor.explain import explain
from pentadice.advisor.quick import MAX_TOP, QuickAdvisor, decode
from pentadice.faces.web.bodies import ApiError
from pentadice.game.situation import Situation

ADVICE_FIELDS = ("dice", "rolls_left", "sheet")
CACHE_SIZE = 4096  # answers held (a few kilobytes each)
BODY_KEY_LIMIT = 1024  # bodies up to this size are remembered as they came (a repeated body is not parsed again)
MAX_BATCH = 1000  # situations in one batch request


class AdviceCache:
    """``advise --json`` answers by situation, as JSON bytes, the least recently used dropped beyond ``size``;
    safe to use from the event loop and the worker threads at once. Bytes, not dictionaries: thousands of
    answers held as objects would be millions of objects for the garbage collector to walk (pauses of
    hundreds of milliseconds); bytes are not walked at all."""

    def __init__(self, size: int = CACHE_SIZE) -> None:
        self.size = size
        self.answers: OrderedDict[tuple, bytes] = OrderedDict()
        self.bodies: OrderedDict[bytes, bytes] = OrderedDict()  # a request body, as it came -> its answer
        self.lock = threading.Lock()

    def _find(self, held: OrderedDict, key) -> bytes | None:
        """The answer held under ``key``, now the most recently used."""
        with self.lock:
            found = held.get(key)
            if found is not None:
                held.move_to_end(key)
            return found

    def _hold(self, held: OrderedDict, key, answer: bytes) -> None:
        """Hold ``answer`` under ``key``, the least recently used dropped beyond :attr:`size`."""
        with self.lock:
            held[key] = answer
            if len(held) > self.size:
                held.popitem(last=False)

    def by_body(self, body: bytes) -> bytes | None:
        """The answer to a request body seen before, byte for byte (the same bytes, the same situation)."""
        return self._find(self.bodies, body)

    def remember_body(self, body: bytes, answer: bytes) -> None:
        if len(body) <= BODY_KEY_LIMIT:
            self._hold(self.bodies, body, answer)

    @staticmethod
    def key(advisor, situation: Situation, top: int | None = None) -> tuple:
        sheet = situation.sheet
        boxes = tuple(sorted(sheet.boxes.items()))
        return (advisor.rules.name, top, situation.dice, situation.rolls_left, boxes, sheet.penta_bonus)

    def lookup(self, key: tuple) -> bytes | None:
        """The answer as JSON, if held."""
        return self._find(self.answers, key)

    def compute(self, key: tuple, advisor, situation: Situation, top: int | None = None) -> bytes:
        """The answer, computed (milliseconds: the turn code and its explanation) and held."""
        found = json.dumps(advice_object(advisor, situation, top)).encode()
        self._hold(self.answers, key, found)
        quick_of(advisor)  # the compiled path ready for the next new question (made once)
        return found

    def get(self, advisor, situation: Situation, top: int | None = None) -> bytes:
        """The answer as JSON (a game's view: a person to move), from the cache, else by the compiled path where
        it is ready, else computed by the object path."""
        key = self.key(advisor, situation, top)
        found = self.lookup(key)
        if found is not None:
            return found
        fast = _QUICK.get(advisor)
        if fast is not None:
            sheet = situation.sheet.as_dict(advisor.rules)
            record = fast.read({"dice": list(situation.dice), "rolls_left": situation.rolls_left, "sheet": sheet})
            text = fast.texts([record], top, explain=True)[0] if record is not None else None
            if text is not None:
                found = text.encode()
                self._hold(self.answers, key, found)
                return found
        return self.compute(key, advisor, situation, top)

    def quick(self, state, body: bytes) -> bytes | None:
        """The answer to an ``/api/advise`` body by the compiled path (from the cache when held), or None when
        the body does not read plainly (then the object path reads it, and words its error if it has one):
        JSON without a key twice, ``rules`` a rule set ``state`` serves (a :class:`~pentadice.faces.web.state.WebState`)
        or absent,
        ``top`` 1 to :data:`MAX_TOP` or absent, and a situation the batch's fast reader takes."""
        data = decode(body)
        if type(data) is not dict:
            return None
        name = data.get("rules")
        top = data.get("top")
        if name is not None and (type(name) is not str or name not in state.advisors):
            return None
        if top is not None and (type(top) is not int or not 1 <= top <= MAX_TOP):
            return None
        advisor = state.advisor_of(name)
        if "rules" in data or "top" in data:
            data = {k: v for k, v in data.items() if k != "rules" and k != "top"}
        fast = _QUICK.get(advisor)
        if fast is None:  # made (seconds at most: its tables, its kernel) in a worker thread, by the object path
            return None
        record = fast.read(data)
        if record is None:
            return None
        key = (advisor.rules.name, top, record.dice_text, record.rolls, record.sheet_text)  # not a slow key's shape
        found = self.lookup(key)
        if found is None:
            text = fast.texts([record], top, explain=True)[0]
            if text is None:  # a number that is not finite: the object path writes it as json.dumps does
                return None
            found = text.encode()
            self._hold(self.answers, key, found)
        return found


def advice_object(advisor, situation: Situation, top: int | None = None) -> dict:
    """What ``pentadice advise --json`` prints for ``situation``: the options, best first, and ``why``."""
    advice = advisor.advise(situation)
    if not advisor.spread:  # every option's sd, as the command gives them (the games' moves do without)
        advice = advisor.with_spread(advice)
    why = explain(advisor, advice)
    return {**advice.as_dict(advisor.rules, top), "why": why.as_dict() if why else None}


def situation_of(advisor, data: dict) -> Situation:
    """The situation of an ``/api/advise`` body (``dice``, ``rolls_left``, ``sheet``, without ``rules`` and
    ``top``), read as a ``--batch`` line is; 422 with the batch's error text."""
    try:
        return parse_line(advisor.rules, json.dumps(data))
    except BatchLineError as e:
        raise ApiError(422, str(e)) from None


_QUICK: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # advisor -> its QuickAdvisor
_QUICK_LOCK = threading.Lock()


def quick_of(advisor) -> QuickAdvisor:
    """The compiled path of ``advisor``, made once and run once (its reader's tables, its kernel loaded or
    compiled, the second moments read: :func:`warm_up` makes it at start-up; otherwise the first question the
    object path answers, in a worker thread). Until then new questions take the object path: the event loop
    never waits for it."""
    found = _QUICK.get(advisor)
    if found is None:
        with _QUICK_LOCK:
            found = _QUICK.get(advisor)
            if found is None:
                found = QuickAdvisor(advisor)
                found.warm_up()
                _QUICK[advisor] = found
    return found


_BATCH_LOCK = threading.Lock()  # the batch kernel is parallel=True: one launch at a time (see batch_answers)


def batch_answers(advisor, items: list, top: int | None) -> list[dict]:
    """``--batch``'s answer for each item, in order, by the batch's own code: the advice without ``why``, or
    ``{"line": N, "error": ..}`` (N counts the items from 1) for an item that is not a situation. Requests
    arrive on several threads; Numba's parallel kernels may not be launched from several at once (its
    ``workqueue`` layer, where OpenMP and TBB are missing, aborts), so batches take turns."""
    with _BATCH_LOCK:
        return [answer for answer, _ in answers(advisor, [json.dumps(item) for item in items], top)]


def batch_text(advisor, items: list, top: int | None) -> str:
    """The JSON text of :func:`batch_answers`' ``{"results": [..]}``, as ``json.dumps`` writes it: the items the
    compiled path reads answered by it, the others (and their errors) by the batch's own code."""
    fast = quick_of(advisor)
    records = [fast.read(item) for item in items]
    good = [r for r in records if r is not None]
    texts = iter(fast.texts(good, top, explain=False))
    out: list[str | None] = [None if r is None else next(texts) for r in records]
    slow = [i for i, text in enumerate(out) if text is None]
    if slow:
        for i, result in zip(slow, batch_answers(advisor, [items[i] for i in slow], top), strict=True):
            if "error" in result:  # numbered among all the items, not among those the batch's code read
                result = {"line": i + 1, "error": result["error"]}
            out[i] = json.dumps(result)
    return '{"results": [' + ", ".join(out) + "]}"


def needs_compiling() -> bool:
    """Whether the advice kernels are not in Numba's cache yet (a first start): :func:`warm_up` then compiles them,
    which takes tens of seconds, and the server should say so."""
    from pentadice.solver import advice_kernel
    from pentadice.solver.compiled import cached

    return not cached(advice_kernel.advise_states)


def warm_up(advisors) -> None:
    """Run each advisor's single, compiled and batch paths once, so that the first request does not load
    compiled code (nor wait for the compiled path's tables)."""
    for advisor in advisors:
        rs = advisor.rules  # the first roll of a turn, of any game (house rules may have fewer rolls or dice)
        situation = Situation.make(rs, [1, 1, 3, 4, 6, 6][: rs.dice], rs.rolls - 1)
        advice_object(advisor, situation)
        advisor.advise_many([situation])
        quick_of(advisor)
