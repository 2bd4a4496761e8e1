"""Solving a rule set and storing its tables (``pentadice solve``): the values, and the second moments solved
with them in the same pass, written beside them; the summary of what was solved, what it cost and the files
written. Progress bars and messages are the caller's (it passes a ``progress`` callback and a context to hold
open while the solve runs)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from pathlib import Path

from pentadice.game import rules
from pentadice.support import interrupts
from pentadice.tables import moment_files, table


class MomentsInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) while the second moments were written: the value table had been written whole
    already, the second moments were not."""


def with_moments(rs: rules.RuleSet, asked: bool | None) -> bool:
    """Whether :func:`solve_and_store` solves the second moments too: as asked, else unless their pass is too
    long to run unasked (Maxi Yatzy's: :func:`pentadice.solver.moments.automatic`)."""
    from pentadice.solver import moments

    return moments.automatic(rs) if asked is None else asked


def needs_compiling(rs: rules.RuleSet, moments_too: bool) -> bool:
    """Whether the solve compiles kernels first (a first run: nothing moves for seconds). The one pass of
    values and moments compiles no value kernel, but Kiriki's."""
    from pentadice import solver
    from pentadice.solver import moments

    first = moments.needs_compiling(rs) if moments_too else solver.needs_compiling(rs)
    return first or (moments_too and rs.penta_repeat and solver.needs_compiling(rs))


def solve_and_store(
    rs: rules.RuleSet,
    directory: Path,
    threads: int | None = None,
    moments_too: bool = True,
    progress: Callable[[int, int], None] | None = None,
    showing: contextlib.AbstractContextManager | None = None,
    compiling: Callable[[], None] | None = None,
) -> dict:
    """Solve ``rs`` (its second moments too if ``moments_too``) and write its table into ``directory``, under
    the table's lock from before the solve; the summary: rules, expected score, states, seconds, compile and
    write seconds, threads, the files written, the SD at the start of a game (None without moments).

    The directory is checked for writing first; then ``compiling()`` is called if the kernels compile first
    (:func:`needs_compiling`); ``showing`` (a progress bar) is held open while the solve runs, ``progress``
    called at each stage. Ctrl-C and SIGTERM are held to the stages: KeyboardInterrupt (nothing written),
    CommittedInterrupt (the table was renamed into place whole), :class:`MomentsInterrupted` (the table is
    whole, its moments not written). TableError for a directory or files that cannot be written, ValueError
    for a bad ``threads``."""
    from pentadice import solver

    table.prepare_directory(directory, rs.name)
    if compiling is not None and needs_compiling(rs, moments_too):
        compiling()
    solved = []

    def solve():
        with showing or contextlib.nullcontext(), interrupts.Held() as interrupt:
            solved.append(solver.solve(rs, threads=threads, progress=interrupt.steps(progress), moments=moments_too))
            interrupt.check()
        solved.append(time.perf_counter())
        return solved[0].values

    files = table.solve_and_save(rs, directory, solve)
    solution, write_seconds = solved[0], time.perf_counter() - solved[1]
    try:  # the second moments, solved with the values: written beside them
        spread = None
        if solution.m2 is not None:
            spread = moment_files.store_moments(rs, directory, solution.values, solution.m2)
            spread["metadata"] = str(table.TableFiles(directory, rs.name).moments_meta)  # written with it
    except KeyboardInterrupt:
        raise MomentsInterrupted from None
    return {
        "rules": rs.name,
        "expected_score": solution.expected_score,
        "states": solution.states_solved,
        "seconds": solution.solve_seconds,
        "compile_seconds": solution.compile_seconds,
        "write_seconds": write_seconds,
        "threads": solution.threads,
        "files": {**files.as_dict(), "m2": spread and spread["file"], "m2_metadata": spread and spread["metadata"]},
        "sd": spread and spread["sd"],
        "moments_seconds": spread and 0.0,  # no pass of their own: solved with the values ("seconds")
        "moments_compile_seconds": spread and 0.0,
    }
