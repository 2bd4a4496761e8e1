"""The server's tables, prepared in the background from start-up: what ``GET /api/health`` reports and what a
game waits on before it starts, never during a move.

One thread goes through the served rule sets (the default one first): for each it loads the tables a game reads
that are saved already (:func:`pentadice.players.prepared.hold`), then builds those missing one at a time (the
same, with ``build``: saved beside the value table where it can be written, held in memory either way). A rule
set is ready once every table that applies to it is held; until then a game with a ``win`` computer is refused
with 503 and the progress (:meth:`Preparation.win_waiting`), and the chances say they are being prepared
(:meth:`Preparation.chances_waiting`).

With several server processes (``serve --workers N``) each holds its tables itself; the first builds what is
missing and the others load each table once it is saved. Each publishes its state in a block of memory the
processes share (:class:`SharedStatus`), and every process answers from all of them together: a table is ready
once every process holds it, so that ``/api/health`` and a game's start say the same whichever process answers.
"""

from __future__ import annotations

import json
import logging
import mmap
import struct
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from pentadice.game import rules
from pentadice.players.prepared import GAME_TABLES  # (the values and moments: the advisor holds them from start-up)

log = logging.getLogger("pentadice.web")


def _background_threads() -> int:
    """Threads for the builds in the background: all cores but one, so that a request always finds one."""
    import numba

    return max(1, numba.get_num_threads() - 1)


SLOT_BYTES = 64 * 1024  # a process's published state: a few hundred bytes a rule set
HEADER = struct.Struct("<QI")  # a slot's sequence number (odd while it is written) and the length of its JSON
FOLLOW_SECONDS = 0.5  # how often a process that does not build looks for tables the builder has saved
PUBLISH_SECONDS = 0.25  # the builder's progress is published at most this often


class SharedStatus:
    """The preparation state of ``workers`` server processes, in anonymous shared memory made before they are
    started (fork): a slot each, written by its process alone and read by all (a sequence number tells a read
    from the middle of a write, which is read again)."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.memory = mmap.mmap(-1, workers * SLOT_BYTES)

    def write(self, worker: int, state: dict) -> None:
        body = json.dumps(state, separators=(",", ":")).encode()[: SLOT_BYTES - HEADER.size]
        base = worker * SLOT_BYTES
        seq = HEADER.unpack_from(self.memory, base)[0]
        seq += seq & 1  # a write its process did not finish (killed, then started again) is over
        HEADER.pack_into(self.memory, base, seq + 1, 0)  # odd: being written
        self.memory[base + HEADER.size : base + HEADER.size + len(body)] = body
        HEADER.pack_into(self.memory, base, seq + 2, len(body))

    def read(self, worker: int) -> dict | None:
        """A process's last state (None: nothing published yet)."""
        base = worker * SLOT_BYTES
        for _ in range(1000):  # a write takes microseconds: read again, never sleep (this runs in the event loop)
            seq, length = HEADER.unpack_from(self.memory, base)
            if seq % 2:
                continue
            body = bytes(self.memory[base + HEADER.size : base + HEADER.size + length])
            if HEADER.unpack_from(self.memory, base)[0] == seq:
                try:
                    return json.loads(body) if length else None
                except ValueError:  # cut at the slot's size: nothing to read
                    return None
        return None


@dataclass(frozen=True)
class _State:
    """A rule set's preparation as answered: the tables held (by every process), the one being built, what
    failed, and whether it is over."""

    held: frozenset[str]
    building: dict | None
    failed: str | None
    done: bool


def _published(state: dict | None, name: str) -> _State:
    """A rule set's state as another process published it (nothing yet: nothing held, not done)."""
    mine = (state or {}).get(name)
    if mine is None:
        return _State(frozenset(), None, None, False)
    return _State(frozenset(mine["held"]), mine["building"], mine["failed"], mine["done"])


class Preparation:
    """The preparation of the served rule sets' tables: ``advisors`` (name -> advisor, its value table held),
    ``directory_of(name)`` their table directory, ``build``: build the missing ones there (else only those saved
    are held: ``serve --no-prepare``). ``shared``: the state of several server processes, this one ``worker``
    (the first builds, the others load what it saved)."""

    def __init__(
        self,
        advisors: Mapping[str, object],
        directory_of: Callable[[str], Path],
        build: bool = True,
        threads: int | None = None,
        shared: SharedStatus | None = None,
        worker: int = 0,
    ) -> None:
        from pentadice.players import prepared

        self.advisors = dict(advisors)
        self.directory_of = directory_of
        self.shared = shared
        self.worker = worker
        self.build = build and worker == 0  # builds at once: the first worker; the others load what it saves
        self._may_build = build  # and build what it could not save (a directory it cannot write)
        self.threads = threads or _background_threads()
        self._lock = threading.Lock()
        self._held: dict[str, set[str]] = {name: set() for name in self.advisors}
        self._building: dict[str, dict | None] = dict.fromkeys(self.advisors)
        self._failed: dict[str, str | None] = dict.fromkeys(self.advisors)
        self._done: dict[str, bool] = dict.fromkeys(self.advisors, False)
        self._wanted = {
            name: [t for t in prepared.chosen(a.rules, directory=directory_of(name)) if t in GAME_TABLES]
            for name, a in self.advisors.items()
        }
        self._fits = {
            name: prepared.applicable(a.rules, directory=directory_of(name)) for name, a in self.advisors.items()
        }
        self._thread: threading.Thread | None = None
        self._published_at = 0.0

    def start(self) -> Preparation:
        """Start the background thread (a daemon: a server that stops does not wait for it)."""
        self._publish()  # a worker started again says at once that it holds nothing yet
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
                self._publish()

    def _publish(self, every: float = 0.0) -> None:
        """This process's state, to the shared block (at most once in ``every`` seconds)."""
        if self.shared is None:
            return
        now = time.monotonic()
        if every and now - self._published_at < every:
            return
        self._published_at = now
        with self._lock:
            state = {
                name: {
                    "held": sorted(self._held[name]),
                    "building": self._building[name],
                    "failed": self._failed[name],
                    "done": self._done[name],
                }
                for name in self.advisors
            }
        self.shared.write(self.worker, state)

    def _follow(self, name: str) -> None:
        """Not the builder: load each table of rule set ``name`` once the builder has it, until it is done."""
        from pentadice.players import prepared

        advisor = self.advisors[name]
        directory = self.directory_of(name)
        tried: set[str] = set()  # each table is loaded once: one the builder could not save is built afterwards
        while True:
            theirs = (self.shared.read(0) or {}).get(name) or {}
            with self._lock:
                new = [
                    t for t in theirs.get("held", ())
                    if t not in self._held[name] and t in self._wanted[name] and t not in tried
                ]  # fmt: skip
            for table in new:
                tried.add(table)
                held = prepared.hold(advisor.rules, directory, advisor.values, [table], threads=self.threads)
                with self._lock:
                    self._held[name].update(held)
                self._publish()
            if theirs.get("done") and not new:
                return
            time.sleep(FOLLOW_SECONDS)

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
        self._publish()
        missing = [t for t in wanted if t not in self._held[name]]
        if missing and self.shared is not None and self.worker != 0:
            self._follow(name)  # until the builder is done; what it could not save is built here after all
            missing = [t for t in wanted if t not in self._held[name]]
            if not missing or not self._may_build:
                return
        elif not missing or not self.build:
            return
        failures = []
        for i, table in enumerate(missing):  # each built, saved where it can be, and held; one failing, the next
            with self._lock:
                self._building[name] = {
                    "table": table, "what": prepared.WHAT[table], "done": i, "total": len(missing), "progress": 0.0,
                    "table_progress": 0.0,
                }  # fmt: skip
            self._publish()

            def progress(t: str, done: int, total: int, i: int = i) -> None:
                with self._lock:
                    building = self._building[name]
                    if building is not None and total:
                        building["progress"] = round((i + min(done / total, 1.0)) / len(missing), 4)
                        building["table_progress"] = round(min(done / total, 1.0), 4)
                self._publish(PUBLISH_SECONDS)

            try:
                held = prepared.hold(rs, directory, values, [table], build=True, threads=self.threads,
                                     progress=progress)  # fmt: skip
            except Exception as e:  # said on /api/health and in the log; the other tables are still built
                log.exception("building %s of %s failed", prepared.WHAT[table], name)
                failures.append(f"{prepared.WHAT[table]}: {type(e).__name__}: {e}")
                continue
            with self._lock:
                self._held[name].update(held)
            self._publish()
        if failures:
            with self._lock:
                self._failed[name] = "; ".join(failures)

    def _state(self, name: str) -> _State:
        """Rule set ``name``'s preparation: this process's, or with several, all of theirs together (a table is
        held once every process holds it; the builder's progress; over once every process is done)."""
        with self._lock:
            own = _State(
                frozenset(self._held[name]),
                dict(self._building[name]) if self._building[name] else None,
                self._failed[name],
                self._done[name],
            )
        if self.shared is None:
            return own
        shared = self.shared
        states = [own if w == self.worker else _published(shared.read(w), name) for w in range(shared.workers)]
        held = frozenset.intersection(*(s.held for s in states))
        done = all(s.done for s in states)
        building = states[0].building
        if building is None and not done:
            building = {"table": None, "what": "the saved tables, loading", "done": 0, "total": 0, "progress": 0.0}
        failed = "; ".join(dict.fromkeys(s.failed for s in states if s.failed)) or None
        return _State(held, building, failed, done)

    def _ready(self, state: _State, name: str, tables: tuple[str, ...]) -> bool:
        return all(t in state.held for t in tables if t in self._wanted[name])

    def status(self, name: str) -> dict:
        """The preparation of rule set ``name``, as ``GET /api/health`` reports it."""
        rs = self.advisors[name].rules
        fits = self._fits[name]
        state = self._state(name)
        done = state.done
        win = "ready" if self._ready(state, name, ("win", "win-end")) else ("unavailable" if done else "preparing")
        if fits["win"] is not None:
            win = "refused"
        if fits["chances"] is not None:
            chances = "unavailable" if rs.unbounded else "forward"
        else:
            chances = "ready" if "chances" in state.held else ("forward" if done else "preparing")
        return {
            "ready": self._ready(state, name, GAME_TABLES),
            "win": win,
            "chances": chances,
            "building": state.building,
            "failed": state.failed,
            "win_refusal": fits["win"],
        }

    def preparing(self) -> bool:
        """Whether a rule set is still being prepared."""
        return not all(self._state(name).done for name in self.advisors)

    def _waiting(self, name: str, tables: tuple[str, ...]) -> dict | None:
        state = self._state(name)
        if self._ready(state, name, tables) or state.done:
            return None
        return dict(state.building) if state.building else {"table": None, "what": "the tables", "progress": 0.0}

    def win_waiting(self, name: str) -> dict | None:
        """Where a ``win`` computer of rule set ``name`` waits (its tables' progress), or None: ready, refused
        for this rule set, or not to be had (:meth:`win_missing`)."""
        return self._waiting(name, ("win", "win-end"))

    def win_missing(self, name: str) -> str | None:
        """Why a ``win`` computer of rule set ``name`` cannot play here although its rule set allows it (its
        tables were neither saved nor built: ``--no-prepare``, or a failed build), or None."""
        state = self._state(name)
        if not state.done or self._ready(state, name, ("win", "win-end")):
            return None
        failed = state.failed
        if self._fits[name]["win"] is not None:
            return None
        why = f"building them failed ({failed})" if failed else "they are not built"
        return (
            f"the win player's tables of {name} are not held by this server: {why}; build them with "
            f"`pentadice solve --rules {self.advisors[name].rules.rules_option}` and start the server again"
        )

    def chances_waiting(self, name: str) -> dict | None:
        """Where the chances of rule set ``name`` wait (the chances table's own progress, 0 while an earlier
        table is built), or None."""
        waiting = self._waiting(name, ("chances",))
        if waiting is not None:
            own = waiting.get("table") == "chances"
            waiting["progress"] = waiting.get("table_progress", 0.0) if own else 0.0
        return waiting
