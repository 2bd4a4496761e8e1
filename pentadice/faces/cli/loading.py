"""What the commands show while tables load or solve: progress bars on standard error, the notes on the second
moments, and how a missing or damaged table ends a command (exit 1) or a Ctrl-C in it (exit 130)."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import click

from pentadice.game import rules
from pentadice.support import exits, interrupts, paths


class NoBar:
    """Stands in for a progress bar where none is drawn."""

    def __enter__(self) -> NoBar:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def update(self, n: int) -> None:
        return None


class RateBar:
    """Click's progress bar, its time left measured from the first step on and shown from the second: the seconds
    before the first step (a compile, a table loading) say nothing of the rate of the rest, and counted in they made
    the first estimates many times too long."""

    def __init__(self, bar) -> None:
        self.bar = bar
        self.first: tuple[float, int] | None = None  # (when, position) of the first step
        self.rated = False
        bar.show_eta = False

    def __enter__(self) -> RateBar:
        self.bar.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.__exit__(*exc)

    def update(self, n: int) -> None:
        bar, now = self.bar, time.time()
        if self.first is None:
            if n > 0:
                self.first = (now, bar.pos + n)
        elif bar.pos + n > self.first[1]:
            when, at = self.first
            rate = (now - when) / (bar.pos + n - at)  # seconds a step, since the first one
            bar.start = now - rate * (bar.pos + n)  # click's clock: its time per step is then this rate
            if not self.rated:  # click's rolling samples, taken on the old clock, are dropped once
                self.rated, bar.avg, bar.last_eta, bar.show_eta = True, [], 0.0, True
        bar.update(n)


def progress(label: str, length: int, enabled: bool):
    """A progress bar on standard error when it is a terminal, else nothing."""
    if enabled and sys.stderr.isatty():
        return RateBar(click.progressbar(length=length, label=label, file=sys.stderr))
    return NoBar()


class SolveOnceBar(NoBar):
    """The progress of solving a missing table: drawn only if a solve actually starts. Ctrl-C while it is
    open is raised between stages, or while waiting for another process (see :class:`interrupts.Held`)."""

    def __init__(self, rules_name: str) -> None:
        self.rules_name = rules_name
        self.bar = None
        self.interrupt = interrupts.Held()
        self.waiting = False

    def wait(self, directory) -> None:
        """Called while another process solves the table: say so once, and stop on Ctrl-C."""
        if not self.waiting:
            self.waiting = True
            click.echo(f"Waiting for another pentadice process that is solving the table in {directory}...", err=True)
        self.interrupt.check()

    def __enter__(self) -> SolveOnceBar:
        self.interrupt.__enter__()
        return self

    def update(self, n: int) -> None:
        self.interrupt.check()
        if self.bar is None:
            from pentadice import solver  # no Numba at import: the kernels load when a solve starts

            rs = rules.get_rules(self.rules_name)
            self.bar = progress(f"Solving {rs.name} (once)", solver.stages(rs), True).__enter__()
        self.bar.update(n)

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)
        self.interrupt.__exit__(*exc)


def load_advisor(rules_name: str, data: str | None, compiled: bool = True):
    """The advisor of a rule set, solving its missing table once (with a progress bar, waiting for another
    process already solving it) and, if ``compiled``, its kernels compiled or loaded; a damaged table or an
    unwritable directory ends the command with exit 1. Ctrl-C in all this is raised at a safe point."""
    from pentadice.advisor import Advisor
    from pentadice.tables import table

    try:
        with SolveOnceBar(rules_name) as bar:
            advisor = Advisor.load(
                rules_name, data, progress=lambda d, t: bar.update(1), compiled=compiled, on_wait=bar.wait
            )
            if compiled:
                advisor.compile()
            return advisor
    except table.TableError as e:
        raise exits.Failure(str(e)) from None
    except KeyboardInterrupt:
        raise exits.Interrupted("stopped; a table being solved was written whole or not at all") from None


def load_spread(advisor) -> None:
    """Every option's SD from the second moments solved with the table; a table without them (solved on demand,
    or by an earlier version) has them computed now, once, and saved beside it. Damaged ones end the command."""
    from pentadice.solver import moments
    from pentadice.tables import table

    files = advisor.table.files
    missing = not files.moments.exists()
    unsaved = missing and moments.automatic(advisor.rules) and not os.access(files.directory, os.W_OK)
    if unsaved:  # said whether or not at a terminal: a slowness of every run, and how to end it
        click.echo(f"Note: {moments.unsaved_message(advisor.rules, files.directory)}.", err=True)
    elif missing and sys.stderr is not None and sys.stderr.isatty():
        if moments.automatic(advisor.rules):
            click.echo(f"Computing the {advisor.rules.name} table's second moments (the SDs; once)...", err=True)
        else:  # too long to compute unasked (Maxi Yatzy): no SD column, and how to have one
            click.echo(f"No SD column: {moments.on_demand_message(advisor.rules)}", err=True)
    try:
        advisor.load_spread()
    except table.TableError as e:
        raise exits.Failure(str(e)) from None
    except KeyboardInterrupt:
        raise exits.Interrupted("stopped; no second moments were written") from None
    if missing and not unsaved and advisor.spread and not files.moments.exists():  # the save failed after all
        click.echo(f"Note: {moments.unsaved_message(advisor.rules, files.directory)}.", err=True)


def target_table(rs, data: str | None):
    """The target table of ``rs`` (exit 1 with how to build it when it is missing or damaged, or saying that
    it is being built)."""
    from pentadice.tables import table, targets

    directory = paths.data_dir(data)
    try:
        return targets.load_for_advice(rs, directory)
    except table.TableError as e:
        raise exits.Failure(str(e)) from None


def build_tables(rs: rules.RuleSet, directory: Path, names: list[str], threads: int | None, quiet: bool) -> dict:
    """Build the tables ``names`` (chances, win, win-end) that ``directory`` lacks, each with its progress bar;
    what each cost (:meth:`pentadice.players.prepared.Built.as_dict`)."""
    from pentadice.players import prepared

    out = {}
    for name in names:
        bar, step = _table_bar(rs, name, not quiet, lambda: interrupt.check())  # Ctrl-C: between two stages
        try:
            with bar, interrupts.Held() as interrupt:
                built = prepared.prepare(rs, directory, [name], threads, progress=step)[name]
        except interrupts.CommittedInterrupt:
            out[name] = None
            raise exits.Interrupted(_stopped(rs, [*out], None)) from None
        except KeyboardInterrupt:
            raise exits.Interrupted(_stopped(rs, [*out], name)) from None
        out[name] = built.as_dict()
    return out


def _table_bar(rs: rules.RuleSet, name: str, enabled: bool, then: Callable[[], None] | None = None):
    """``(bar, step)``: a progress bar of table ``name`` of ``rs`` in percent, and the ``progress(table, done,
    total)`` callback that draws it (then calls ``then``)."""
    from pentadice.players import prepared

    bar = progress(label=f"{prepared.WHAT[name].capitalize()} of {rs.name}", length=100, enabled=enabled)
    shown = [0]

    def step(table: str, done: int, total: int) -> None:
        now = round(100 * done / max(total, 1))
        bar.update(now - shown[0])
        shown[0] = now
        if then is not None:
            then()

    return bar, step


def _stopped(rs: rules.RuleSet, written: list[str], stopped: str | None) -> str:
    """What a Ctrl-C in :func:`build_tables` leaves: the tables written whole, and the one not written."""
    from pentadice.players import prepared

    whole = ", ".join(["the value table", *(prepared.WHAT[t] for t in written)])
    left = f"; {prepared.WHAT[stopped]} was not written" if stopped else ""
    return f"{whole} of {rs.name} were written whole{left}"


def ready_for_game(advisor, game, chances: bool) -> None:
    """Hold the tables ``game`` reads (the chances table if ``chances``, the win player's tables if a computer
    plays to win): those saved are loaded, the win player's missing ones built first, each with its progress bar,
    saved where the table directory can be written and held in memory either way. No move of the game waits for a
    table. A missing chances table is not built before the game (a first game starts at once): the chances are
    then computed state by state as the game goes, shown when ready, and `pentadice solve` builds the table."""
    from pentadice.players import prepared

    rs = advisor.rules
    directory = advisor.table.files.directory
    wanted = ["chances"] if chances else []
    if any(p.computer and p.strategy == "win" for p in game.players):
        wanted += ["win", "win-end"]
    fits = prepared.applicable(rs, directory=directory)
    wanted = [t for t in wanted if fits[t] is None]
    if not wanted:
        return
    saved = prepared.present(rs, directory, advisor.values)
    wanted = [t for t in wanted if t != "chances" or saved[t]]
    missing = [t for t in wanted if not saved[t]]
    if missing:
        what = ", ".join(prepared.WHAT[t] for t in missing)
        click.echo(f"Building what this game reads, once ({what})...", err=True)
    try:
        for name in wanted:
            if name not in missing:
                prepared.hold(rs, directory, advisor.values, [name], warm=False)
                continue
            bar, step = _table_bar(rs, name, True)
            with bar:
                prepared.hold(rs, directory, advisor.values, [name], warm=False, build=True, progress=step)
    except KeyboardInterrupt:
        raise exits.Interrupted("stopped before the game began; a table being built was not written") from None
