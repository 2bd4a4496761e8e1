"""The advice a server gives: the very object of ``pentadice advise --json`` for one situation (the
``why`` included), and ``--batch``'s answers for many; bodies parsed by the batch reader itself, so that a
bad situation gets the batch's own error text.

Advice depends on nothing but the situation, so answers are kept in a bounded cache (most recently used
first): a repeated question costs a dictionary look-up, not the turn code and its explanation.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict

from pentadice.advisor.batch_io import answers
from pentadice.advisor.batch_lines import BatchLineError, parse_line
from pentadice.advisor.explain import explain
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
        return found

    def get(self, advisor, situation: Situation, top: int | None = None) -> bytes:
        """The answer as JSON, from the cache or computed."""
        key = self.key(advisor, situation, top)
        return self.lookup(key) or self.compute(key, advisor, situation, top)


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


_BATCH_LOCK = threading.Lock()  # the batch kernel is parallel=True: one launch at a time (see batch_answers)


def batch_answers(advisor, items: list, top: int | None) -> list[dict]:
    """``--batch``'s answer for each item, in order, by the batch's own code: the advice without ``why``, or
    ``{"line": N, "error": ..}`` (N counts the items from 1) for an item that is not a situation. Requests
    arrive on several threads; Numba's parallel kernels may not be launched from several at once (its
    ``workqueue`` layer, where OpenMP and TBB are missing, aborts), so batches take turns."""
    with _BATCH_LOCK:
        return [answer for answer, _ in answers(advisor, [json.dumps(item) for item in items], top)]


def warm_up(advisors) -> None:
    """Run each advisor's single and batch paths once, so that the first request does not load compiled code."""
    for advisor in advisors:
        situation = Situation.make(advisor.rules, [1, 1, 3, 4, 6, 6][: advisor.rules.dice], 2)
        advice_object(advisor, situation)
        advisor.advise_many([situation])
