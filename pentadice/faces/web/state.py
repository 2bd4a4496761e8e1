"""What the routes share: :class:`WebState`, made once by :func:`pentadice.faces.web.api.create_app` and kept
on the application (``app.state.web``); a route asks for it as a parameter (``state: State``), so that no
route captures it and no state is held at module level (each ``routes_*`` module's ``router`` holds routes
only, and is included in every application made)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated

from fastapi import Depends, Request

from pentadice.faces.web import bodies
from pentadice.faces.web.advising import AdviceCache
from pentadice.faces.web.bodies import ApiError
from pentadice.faces.web.live import Live
from pentadice.faces.web.preparing import Preparation
from pentadice.faces.web.store import GameStore, Held
from pentadice.game import rules


@dataclass
class WebState:
    """The rule sets served (name -> :class:`~pentadice.advisor.Advisor`, at least one), the games (in the
    database), the
    advice given so far, the clock the games' idle time and the computer's moves are measured by, and the answer
    of ``GET /api/rules`` (made once: the rule sets do not change), and the preparation of the tables its games
    read (:mod:`pentadice.faces.web.preparing`), the live updates of the games watched
    (:mod:`pentadice.faces.web.live`) and the base of a shared game's seat links (``share_base``: the network
    URL the server is reached at, None when it listens on loopback only)."""

    advisors: dict[str, object]
    store: GameStore
    cache: AdviceCache
    clock: Callable[[], float]
    rules_answer: bytes = b""
    preparation: Preparation | None = None  # the tables prepared in the background (None: games build their own)
    live: Live | None = None  # the live updates (create_app makes them)
    share_base: str | None = None  # e.g. http://192.168.1.5:8000; None: loopback only (the page's own origin)
    default_rules: str = field(init=False)  # a request naming no rule set: Penta where served, else the first

    def __post_init__(self) -> None:
        if not self.advisors:
            raise ValueError("serve at least one rule set")
        self.default_rules = rules.DEFAULT_RULES if rules.DEFAULT_RULES in self.advisors else next(iter(self.advisors))

    def advisor_of(self, name: object):
        """The advisor of the rule set ``name`` (None: the default); 422 if it is not served."""
        served = self.advisors
        if name is None:
            return served[self.default_rules]
        if isinstance(name, str) and name in served:
            return served[name]
        if isinstance(name, str) and name in rules.REGISTRY:
            raise ApiError(422, f"the {name} rule set is not served here; served: {', '.join(served)}")
        raise ApiError(422, f"unknown rule set {bodies.short(name)}; served: {', '.join(served)}")

    def held_of(self, game_id: str) -> Held:
        """The game under ``game_id``, read from the database (blocking: call it in a worker thread); 404 if
        there is none (unknown, or removed), 503 if the database fails."""
        held = self.store.get(game_id)
        if held is None:
            raise ApiError(404, f"no such game {bodies.short(game_id)} ({self.store.policy})")
        if held.advisor is None:
            name = held.game.rules.name
            raise ApiError(422, f"this is a {name} game: the {name} rule set is not served here (`pentadice serve "
                           f"--rules {name}` serves it); served: {', '.join(self.advisors)}")  # fmt: skip
        return held


async def web_state(request: Request) -> WebState:
    """The application's :class:`WebState` (a dependency: awaited in the event loop, no worker thread)."""
    return request.app.state.web


State = Annotated[WebState, Depends(web_state)]
