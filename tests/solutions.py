"""Solved tables shared by the whole test session: each rule set is solved once (by one pytest-xdist worker for
all of them, behind a file lock), and what a test builds once for the session lives in one shared folder."""

from __future__ import annotations

import functools
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np

from pentadice import solver
from pentadice.game import rules

# The folder every pytest-xdist worker of the session sees, set by conftest.py (empty without xdist: a rule set
# is then solved in this process).
SHARED: list[Path] = []


def built_once(shared: Path, name: str, build: Callable[[Path], object]) -> Path:
    """``shared / name``, made by ``build(folder)`` once for the session whichever worker asks first: the others
    wait for it behind a file lock, and a build that failed half-way is never taken for a finished one."""
    from filelock import FileLock

    done = shared / name
    with FileLock(str(shared / f"{name}.lock")):
        if not done.is_dir():
            work = shared / f"{name}.building"
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir()
            build(work)
            work.rename(done)
    return done


@functools.cache
def solved(name: str) -> solver.Solution:
    """The solution of a registered rule set, solved once per session (by one worker for all, under xdist)."""
    rs = rules.get_rules(name)
    if not SHARED:
        return solver.solve(rs)

    def build(folder: Path) -> None:
        solution = solver.solve(rs)
        np.save(folder / "values.npy", solution.values)
        times = {k: getattr(solution, k) for k in ("compile_seconds", "solve_seconds", "threads")}
        (folder / "solution.json").write_text(json.dumps(times))

    folder = built_once(SHARED[0], f"solved-{name}", build)
    times = json.loads((folder / "solution.json").read_text())
    return solver.Solution(rs, np.load(folder / "values.npy"), **times)


@functools.cache
def with_second_moments(name: str) -> tuple[rules.RuleSet, np.ndarray, np.ndarray, dict]:
    """``(rules, values, m2, timings)``: the session's solution of a registered rule set and its second moments,
    ``moments.second_moments(rs, values, threads=2, timings=...)``, computed once per session (by one worker for
    all, under xdist) for the files that check them (tests/test_moments.py) and those that use them."""
    from pentadice.solver import moments

    sol = solved(name)

    def compute(timings: dict) -> np.ndarray:
        return moments.second_moments(sol.rules, sol.values, threads=2, timings=timings)

    if not SHARED:
        timings: dict = {}
        return sol.rules, sol.values, compute(timings), timings

    def build(folder: Path) -> None:
        timings: dict = {}
        np.save(folder / "m2.npy", compute(timings))
        (folder / "timings.json").write_text(json.dumps(timings))

    folder = built_once(SHARED[0], f"moments-{name}", build)
    timings = json.loads((folder / "timings.json").read_text())
    return sol.rules, sol.values, np.load(folder / "m2.npy"), timings


def saved(name: str, directory: Path) -> Path:
    """``directory`` holding the saved table of the registered rule set ``name``, as the session solved it: the
    files are saved once for the session (Maxi Yatzy's are 0.9 GB) and linked into ``directory``, the test's own
    (a file written there does not change the session's)."""
    from pentadice.tables import table

    def build(folder: Path) -> None:
        solution = solved(name)
        table.save(solution.rules, solution.values, folder)

    if not SHARED:
        directory.mkdir(parents=True, exist_ok=True)
        build(directory)
        return directory
    return linked_copy(built_once(SHARED[0], f"table-{name}", build), directory)


def linked_copy(source: Path, directory: Path) -> Path:
    """``directory`` holding the files of ``source`` as hard links (copies across file systems): a test's own
    table directory without copying a GB of tables. For tests that read them, never write over them."""
    directory.mkdir(parents=True, exist_ok=True)
    for f in source.iterdir():
        if f.is_file() and not f.name.startswith("."):
            try:
                os.link(f, directory / f.name)
            except OSError:
                shutil.copy(f, directory / f.name)
    return directory
