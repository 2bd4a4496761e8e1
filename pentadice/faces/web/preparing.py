"""The server's tables, prepared in the background from start-up: what ``GET /api/health`` reports and what a
game waits on before it starts, never during a move.

One thread goes through the served rule sets (the default one first): for each it loads the tables a game reads
that are saved already (:func:`pentadice.players.prepared.hold`), then builds those missing one at a time (the
same, with ``build``: saved beside the value table where it can be written, held in memory either way). A rule
set is ready once every table that applies to it is held; until then a game with a ``win`` computer is refused
with 503 and the progress (:meth:`Preparation.win_waiting`), and the chances say they are being prepared
(:meth:`Preparation.chances_waiting`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from pathlib import Path

from pentadice.game import rules
from pentadice.players.prepared import GAME_TABLES  # (the values and moments: the advisor holds them from start-up)

log = logging.getLogger("pentadice.web")


def _background_threads() -> int:
    """Threads for the builds in the background: all cores but one, so that a request always finds one."""
    import numba

    return max(1, numba.get_num_threads() - 1)


class Preparation:
    """The preparation of the served rule sets' tables: ``advisors`` (name -> advisor, its value table held),
    ``directory_of(name)`` their table directory, ``build``: build the missing ones there (else only those saved
    are held: ``serve --no-prepare``)."""

    def __init__(
        self,
        advisors: Mapping[str, object],
        directory_of: Callable[[str], Path],
        build: bool = True,
        threads: int | None = None,
    ) -> None:
        from pentadice.players import prepared

        self.advisors = dict(advisors)
        self.directory_of = directory_of
        self.build = build
        self.threads = threads or _background_threads()
        self._lock = threading.Lock()
        self._held: dict[str, set[str]] = {name: set() for name in self.advisors}
        self._building: dict[str, dict | None] = dict.fromkeys(self.advisors)
        self._failed: dict[str, str | None] = dict.fromkeys(self.advisors)
        self._done: dict[str, bool] = dict.fromkeys(self.advisors, False)
        self._wanted = {
            name: [t for t in prepared.chosen(a.rules) if t in GAME_TABLES] for name, a in self.advisors.items()
        }
        self._fits = {name: prepared.applicable(a.rules) for name, a in self.advisors.items()}
        self._thread: threading.Thread | None = None

    def start(self) -> Preparation:
        """Start the background thread (a daemon: a server that stops does not wait for it)."""
        self._thread = threading.Thread(target=self._run, name="pentadice-prepare", daemon=True)
        self._thread.start()
        return self

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the preparation to end; whether it has."""
        if self._thread is not None:
            self._thread.join(timeout)
            return not self._thread.is_alive()
        return True

    def _run(self) -> None:
        for name in sorted(self.advisors, key=lambda n: n != rules.DEFAULT_RULES):
            try:
                self._prepare(name)
            except Exception as e:  # said on /api/health and in the log; the server goes on without them
                log.exception("preparing the %s tables failed", name)
                with self._lock:
                    self._failed[name] = f"{type(e).__name__}: {e}"
            finally:
                with self._lock:
                    self._building[name] = None
                    self._done[name] = True

    def _prepare(self, name: str) -> None:
        from pentadice.players import prepared

        advisor = self.advisors[name]
        rs, values = advisor.rules, advisor.values
        directory = self.directory_of(name)
        wanted = self._wanted[name]
        with self._lock:
            self._building[name] = {"table": None, "what": "the saved tables, loading", "done": 0, "total": 0,
                                    "progress": 0.0}  # fmt: skip
        held = prepared.hold(rs, directory, values, wanted, threads=self.threads)
        with self._lock:
            self._held[name].update(held)
        missing = [t for t in wanted if t not in self._held[name]]
        if not missing or not self.build:
            return
        failures = []
        for i, table in enumerate(missing):  # each built, saved where it can be, and held; one failing, the next
            with self._lock:
                self._building[name] = {
                    "table": table, "what": prepared.WHAT[table], "done": i, "total": len(missing), "progress": 0.0,
                    "table_progress": 0.0,
                }  # fmt: skip

            def progress(t: str, done: int, total: int, i: int = i) -> None:
                with self._lock:
                    building = self._building[name]
                    if building is not None and total:
                        building["progress"] = round((i + min(done / total, 1.0)) / len(missing), 4)
                        building["table_progress"] = round(min(done / total, 1.0), 4)

            try:
                held = prepared.hold(rs, directory, values, [table], build=True, threads=self.threads,
                                     progress=progress)  # fmt: skip
            except Exception as e:  # said on /api/health and in the log; the other tables are still built
                log.exception("building %s of %s failed", prepared.WHAT[table], name)
                failures.append(f"{prepared.WHAT[table]}: {type(e).__name__}: {e}")
                continue
            with self._lock:
                self._held[name].update(held)
        if failures:
            with self._lock:
                self._failed[name] = "; ".join(failures)

    def _ready(self, name: str, tables: tuple[str, ...]) -> bool:
        return all(t in self._held[name] for t in tables if t in self._wanted[name])

    def status(self, name: str) -> dict:
        """The preparation of rule set ``name``, as ``GET /api/health`` reports it."""
        rs = self.advisors[name].rules
        fits = self._fits[name]
        with self._lock:
            building = dict(self._building[name]) if self._building[name] else None
            ready_all = self._ready(name, GAME_TABLES)
            win_ready = self._ready(name, ("win", "win-end"))
            chances_ready = "chances" in self._held[name]
            failed = self._failed[name]
            done = self._done[name]
        win = "ready" if win_ready else ("unavailable" if done else "preparing")
        if fits["win"] is not None:
            win = "refused"
        if fits["chances"] is not None:
            chances = "unavailable" if rs.penta_repeat else "forward"
        else:
            chances = "ready" if chances_ready else ("forward" if done else "preparing")
        return {
            "ready": ready_all,
            "win": win,
            "chances": chances,
            "building": building,
            "failed": failed,
            "win_refusal": fits["win"],
        }

    def preparing(self) -> bool:
        """Whether a rule set is still being prepared."""
        with self._lock:
            return not all(self._done.values())

    def _waiting(self, name: str, tables: tuple[str, ...]) -> dict | None:
        with self._lock:
            if self._ready(name, tables) or self._done[name]:
                return None
            building = self._building[name]
            return dict(building) if building else {"table": None, "what": "the tables", "progress": 0.0}

    def win_waiting(self, name: str) -> dict | None:
        """Where a ``win`` computer of rule set ``name`` waits (its tables' progress), or None: ready, refused
        for this rule set, or not to be had (:meth:`win_missing`)."""
        return self._waiting(name, ("win", "win-end"))

    def win_missing(self, name: str) -> str | None:
        """Why a ``win`` computer of rule set ``name`` cannot play here although its rule set allows it (its
        tables were neither saved nor built: ``--no-prepare``, or a failed build), or None."""
        with self._lock:
            if not self._done[name] or self._ready(name, ("win", "win-end")):
                return None
            failed = self._failed[name]
        if self._fits[name]["win"] is not None:
            return None
        why = f"building them failed ({failed})" if failed else "they are not built"
        return (
            f"the win player's tables of {name} are not held by this server: {why}; build them with "
            f"`pentadice solve --rules {name}` and start the server again"
        )

    def chances_waiting(self, name: str) -> dict | None:
        """Where the chances of rule set ``name`` wait (the chances table's own progress, 0 while an earlier
        table is built), or None."""
        waiting = self._waiting(name, ("chances",))
        if waiting is not None:
            own = waiting.get("table") == "chances"
            waiting["progress"] = waiting.get("table_progress", 0.0) if own else 0.0
        return waiting
