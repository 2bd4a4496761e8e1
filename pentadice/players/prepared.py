"""Every table a game of a rule set reads, built ahead and held, so that no move of a game ever waits for one.

A game reads, besides the value table: the second moments (the SDs of the advice, the variances the ``win``
player's risk is set from), the chances table (:mod:`pentadice.solver.remaining`: the live chances), and the
``win`` player's theta tables and end-game table (:mod:`pentadice.players.win`). :func:`prepare` builds those
missing from a table directory and saves them there (``pentadice solve``, ``make table``); :func:`hold` loads
them into the process's caches, checked, where the game's code finds them, and with ``build`` builds those
missing first (``play`` before its first move; ``serve`` in the background from start-up, refusing a game with
a ``win`` computer until its tables are held).

The tables are named by :data:`TABLES` (``solve --only`` / ``--skip`` take these names); a rule set has those
that apply to it (:func:`applicable`): Kiriki has no chances table and no end game, Maxi Yatzy no chances
table and no ``win`` player (their sizes), and its second moments only when asked.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pentadice.game import rules

TABLES = ("values", "moments", "chances", "win", "win-end")
WHAT = {
    "values": "the value table",
    "moments": "the second moments",
    "chances": "the chances table",
    "win": "the win player's theta tables",
    "win-end": "the win player's end-game table",
}

Progress = Callable[[str, int, int], None]  # (table, done, total) within the table being built


def applicable(
    rs: rules.RuleSet, moments_asked: bool | None = None, directory: Path | str | None = None
) -> dict[str, str | None]:
    """Each of :data:`TABLES` with None where ``rs`` has it, else why not (in words). ``moments_asked``: as
    ``solve --moments/--no-moments`` (None: unless too long to run unasked, Maxi Yatzy's). ``directory``: the
    table directory, where the win tables too large to build in memory (Maxi Yatzy's) apply once they are built
    out of core (``pentadice build``); they are then read, never built, by :func:`prepare` and :func:`hold`."""
    from pentadice.players import win
    from pentadice.solver import moments, remaining

    out: dict[str, str | None] = {"values": None, "moments": None}
    if moments_asked is False or (moments_asked is None and not moments.automatic(rs)):
        out["moments"] = moments.on_demand_message(rs) if moments_asked is None else "not asked (--no-moments)"
    out["chances"] = remaining.refusal(rs)
    if out["chances"] and not rs.unbounded:  # too large for memory: built out of core, or how to
        from pentadice.tables import chance_tables

        built = directory is not None and chance_tables.saved_paths(rs, directory)[2].is_file()
        out["chances"] = None if built else f"{out['chances']}; `pentadice build --table chances` builds it out of core"
    large = win.too_large(rs)
    out["win"] = large and f"{large}: `pentadice build` builds them out of core"
    if large and directory is not None:
        out["win"] = win.refusal(rs, directory)
    out["win-end"] = out["win"] or (f"{rs.title} has no end game: {rs.unbounded}" if rs.unbounded else None)
    if out["win-end"] is None and win.endgame_boxes(rs) == 0:
        out["win-end"] = f"{rs.title}'s end-game table is too large to build in memory: its win player has none"
    return out


def chosen(
    rs: rules.RuleSet, only: Iterable[str] = (), skip: Iterable[str] = (), moments_asked=None, directory=None
) -> list[str]:
    """The tables to build for ``rs``: ``only`` those (default: every one that applies), less ``skip``; the
    values always (every other table is of them). ValueError naming a table that is not one of :data:`TABLES`."""
    only, skip = list(only), list(skip)
    for name in [*only, *skip]:
        if name not in TABLES:
            raise ValueError(f"no table {name!r}: the tables are {', '.join(TABLES)}")
    if "values" in skip:
        raise ValueError("the values cannot be skipped: every other table is of them")
    if "moments" in only and moments_asked is None:
        moments_asked = True
    fits = applicable(rs, moments_asked, directory)
    wanted = [t for t in TABLES if (not only or t in only) and t not in skip and fits[t] is None]
    return ["values", *(t for t in wanted if t != "values")]


def present(rs: rules.RuleSet, directory: Path | str, values: np.ndarray) -> dict[str, bool]:
    """Which tables are saved in ``directory`` for the value table ``values`` (their metadata, written last,
    names these values; nothing is read whole)."""
    from pentadice.players import win
    from pentadice.solver.utility import TARGET_LANES
    from pentadice.tables import chance_tables, table, win_tables

    d = Path(directory)
    # The win and chances tables name the values as float64, the second moments as saved (float32: Maxi Yatzy).
    checksums = {table.checksum(win_tables.saved_shape(rs, values)), table.checksum(np.asarray(values))}

    def of_values(meta_path: Path) -> bool:
        try:
            meta = table.read_json(meta_path, "metadata")
        except (OSError, ValueError):
            return False
        return isinstance(meta, dict) and meta.get("values_checksum") in checksums

    files = table.TableFiles(d, rs.name)
    thetas = {"thetas": [float(x) for x in win.grid_thetas(rs)[1:]]}
    end = {"max_open": win.ENDGAME_BOXES, "lanes": TARGET_LANES}
    return {
        "values": files.meta.is_file() and files.values.is_file(),
        "moments": of_values(files.moments_meta) and files.moments.is_file(),
        "chances": chance_tables.is_saved(rs, d, values),
        "win": (
            _stored(rs, d, values)
            if win.too_large(rs)
            else _params_match(win_tables.saved_paths(rs, d, win_tables.THETA_KIND), thetas, of_values)
        ),
        "win-end": _params_match(win_tables.saved_paths(rs, d, win_tables.ENDGAME_KIND, end), end, of_values),
    }


def _stored(rs: rules.RuleSet, directory: Path, values: np.ndarray) -> bool:
    """Whether the win tables built out of core for ``values`` are finished in ``directory``."""
    from pentadice.tables import win_store

    meta = win_store.finished_meta(rs, directory)
    return meta is not None and meta.get("values_checksum") == win_store.values_checksum(rs, values)


def _params_match(paths: tuple[Path, Path], params: dict, of_values: Callable[[Path], bool]) -> bool:
    import json

    from pentadice.tables import table

    npy, meta_path = paths
    if not npy.is_file() or not of_values(meta_path):
        return False
    try:
        meta = table.read_json(meta_path, "metadata")
    except (OSError, ValueError):
        return False
    return json.dumps(meta.get("params"), sort_keys=True) == json.dumps(params, sort_keys=True)


@dataclass
class Built:
    """What :func:`prepare` did for one table: built (with its seconds) or found saved, and its files' bytes."""

    table: str
    built: bool
    seconds: float
    bytes: int
    files: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"built": self.built, "seconds": self.seconds, "bytes": self.bytes, "files": self.files}


def files_of(rs: rules.RuleSet, directory: Path | str, name: str) -> list[Path]:
    """The files of table ``name`` of ``rs`` in ``directory`` (those that exist)."""
    from pentadice.players import win
    from pentadice.tables import chance_tables, table, win_store, win_tables

    d = Path(directory)
    f = table.TableFiles(d, rs.name)
    paths = {
        "values": [f.values, f.meta, f.parquet],
        "moments": [f.moments, f.moments_meta],
        "chances": list(chance_tables.saved_paths(rs, d)),
        "win": (
            [win_store.Store(d, rs.name).array, win_store.Store(d, rs.name).meta]
            if win.too_large(rs)
            else list(win_tables.saved_paths(rs, d, win_tables.THETA_KIND))
        ),
        "win-end": list(win_tables.saved_paths(rs, d, win_tables.ENDGAME_KIND, {"max_open": win.ENDGAME_BOXES})),
    }[name]
    return [p for p in paths if p.is_file()]


GAME_TABLES = ("chances", "win", "win-end")  # the tables built beside a value table for its games


def prepare(
    rs: rules.RuleSet,
    directory: Path | str,
    names: Sequence[str],
    threads: int | None = None,
    values: np.ndarray | None = None,
    progress: Progress | None = None,
) -> dict[str, Built]:
    """Build the tables ``names`` (of :data:`GAME_TABLES`) of ``rs`` that ``directory`` lacks beside its value
    table (``values``: held already, else loaded from there), save each there as it is done (``progress(name,
    done, total)`` within it), and say what each cost. TableError if the directory cannot be written or holds
    no value table."""
    import numba

    from pentadice.tables import table

    threads = threads or numba.get_num_threads()
    d = Path(directory)
    if values is None:
        values = table.load(rs, d).values
    have = present(rs, d, values)
    out: dict[str, Built] = {}
    for name in names:
        if name not in GAME_TABLES:
            raise ValueError(f"{name!r} is not one of the tables built for games ({', '.join(GAME_TABLES)})")
        start = time.perf_counter()
        if not have[name]:
            step = (lambda done, total, name=name: progress(name, done, total)) if progress else None
            _build(rs, d, name, values, threads, step)
        seconds = time.perf_counter() - start if not have[name] else 0.0
        files = files_of(rs, d, name)
        out[name] = Built(
            name, not have[name], seconds, sum(os.path.getsize(p) for p in files), [str(p) for p in files]
        )
    return out


def _build(rs: rules.RuleSet, directory: Path, name: str, values: np.ndarray, threads: int, step, must_save=True):
    """Build table ``name`` (of :data:`GAME_TABLES`) of ``values`` and save it in ``directory``; the chances
    table built. The win tables are held by :mod:`pentadice.players.win` whether or not they could be saved;
    the chances table not saved raises TableError if ``must_save``, else is said on the log."""
    from pentadice.players import win

    if name == "chances":
        import logging

        from pentadice.solver import remaining
        from pentadice.tables import chance_tables, table

        built = remaining.solve(rs, values, threads, progress=step)
        try:
            chance_tables.save(rs, directory, built, values)
        except table.TableError as e:
            if must_save:
                raise
            logging.getLogger("pentadice").warning("the chances table is not saved (%s): it is held in memory", e)
        return built
    if name == "win":
        win.build(rs, values, threads=threads, directory=directory, progress=step)
    elif name == "win-end":
        win.endgame(rs, win.ENDGAME_BOXES, threads, directory, values, progress=step)
    else:
        raise ValueError(f"no table {name!r}")
    return None


def hold(
    rs: rules.RuleSet,
    directory: Path | str,
    values: np.ndarray,
    names: Sequence[str] | None = None,
    warm: bool = True,
    build: bool = False,
    threads: int | None = None,
    progress: Progress | None = None,
) -> list[str]:
    """Load the tables ``names`` (default: every one) of ``rs`` from ``directory`` into the process's caches,
    checked, where the game's code finds them: the win player's tables (:func:`pentadice.players.win.build`,
    :func:`~pentadice.players.win.endgame`, the other players' distributions of its last turns) and the chances
    table (:func:`pentadice.advisor.chances.use_table`; with ``warm``, its chances during a turn run once, so
    that their kernels are loaded before a game asks). ``values``: the value table the game's code holds (the
    caches are keyed on it).

    Without ``build``, only the tables saved are held (and damaged win tables are built again, as a game would);
    with it, those missing or damaged are built (``progress(name, done, total)``), saved where the directory
    can be written and held in memory either way. The names held. A damaged chances table is said on the log."""
    import logging

    import numba

    from pentadice.advisor import chances
    from pentadice.players import lastturns, win
    from pentadice.tables import chance_tables, table

    saved = present(rs, directory, values)
    fits = applicable(rs, directory=directory)
    asked = TABLES if names is None else names
    names = [n for n in asked if n in GAME_TABLES and fits[n] is None and (build or saved[n])]
    threads = threads or numba.get_num_threads()
    log = logging.getLogger("pentadice")

    def step(name: str):
        return (lambda done, total: progress(name, done, total)) if progress is not None else None

    if "chances" in names:
        built = None
        try:
            built = chance_tables.load(rs, directory, values) if saved["chances"] else None
        except table.TableError as e:  # damaged, or a file of it missing: built again below, if asked
            log.warning("%s; %s", e, "building it again" if build else "the chances are computed state by state")
        if built is None and build:  # held in memory all the same where it cannot be saved
            built = _build(rs, Path(directory), "chances", values, threads, step("chances"), must_save=False)
        if built is None:
            names.remove("chances")
        else:
            chances.use_table(rs, values, built)
            if warm:
                from pentadice.game.sheet import Sheet

                # The first chances during a turn compile (or load) the turn's kernels and check the rows: now.
                chances.chances_of(rs, values).during_turn([Sheet(), Sheet()], 0, [1] * rs.dice, rs.rolls - 1)
    if "win" in names:
        win.build(rs, values, threads=threads, directory=directory, progress=step("win"))
    if "win-end" in names:
        win.endgame(rs, win.ENDGAME_BOXES, threads, directory, values, progress=step("win-end"))
        lastturns.opponents(rs, values, win.ENDGAME_BOXES)
    return names
