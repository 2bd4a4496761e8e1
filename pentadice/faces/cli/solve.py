"""``pentadice solve``: solve a rule set and write its table (:mod:`pentadice.tables.build`) with every other
table a game of it reads (:mod:`pentadice.players.prepared`: the chances table, the win player's tables; ``--only``
and ``--skip`` choose), or its target table (``--targets``: :func:`pentadice.tables.targets.build`); the summary as
text or JSON."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

import click

from pentadice.faces.cli import loading
from pentadice.faces.cli.options import RULES_OPTION
from pentadice.game import rules
from pentadice.support import exits, interrupts, paths


@click.command()
@RULES_OPTION
@click.option("--data", "--out", "data", type=click.Path(file_okay=False), default=None, help=paths.DEFAULT_HELP)
@click.option("--threads", type=click.IntRange(min=1), default=None, help="Worker threads [default: all cores].")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of the summary.")
@click.option("--targets", is_flag=True, help="Build the target-score table (for advise --target) instead.")
@click.option(
    "--moments/--no-moments",
    "with_moments",
    default=None,
    help="Also compute the second moments (the SDs advise shows) [default: yes, but for maxi-yatzy only when asked].",
)
@click.option(
    "--only",
    "only",
    multiple=True,
    callback=lambda ctx, param, v: _table_names(v),
    metavar="TABLES",
    help="Build only these tables (comma-separated, repeatable): values, moments, chances, win, win-end "
    "[default: every one a game of the rule set reads].",
)
@click.option(
    "--skip",
    "skip",
    multiple=True,
    callback=lambda ctx, param, v: _table_names(v),
    metavar="TABLES",
    help="Build every table but these (comma-separated, repeatable).",
)
def solve(
    rules_name: str,
    data: str | None,
    threads: int | None,
    as_json: bool,
    targets: bool,
    with_moments: bool | None,
    only: tuple[str, ...],
    skip: tuple[str, ...],
) -> None:
    """Solve a rule set exactly and write its table (NumPy .npy, Parquet, JSON metadata), with every table a
    game of it reads, so that no game waits: the second moments (the SDs), the chances table (the live chances)
    and the win player's tables. Tables already there for these values are kept.

    The table directory is given by --data (--out is the same option).
    """
    try:  # from the start: a Ctrl-C while the modules load has written nothing either
        from pentadice import solver
        from pentadice.players import prepared
        from pentadice.tables import build

        prepared.applicable(rules.get_rules(rules_name))  # (its modules loaded here too)
    except KeyboardInterrupt:
        raise exits.Interrupted("no table was written; the old one, if any, is as it was") from None
    rs = rules.get_rules(rules_name)
    if targets:
        _solve_targets(rs, data, threads, as_json)
        return
    if "moments" in skip and with_moments:
        raise click.UsageError("--moments and --skip moments contradict each other")
    if with_moments and only and "moments" not in only:  # asked for by name: --only values --moments
        only = (*only, "moments")
    try:
        names = prepared.chosen(rs, only, skip, False if "moments" in skip else with_moments)
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    directory = paths.data_dir(data)
    with _ending(rs, "table", directory):
        moments_too = "moments" in names
        bar = loading.progress(label=f"Solving {rs.name}", length=solver.stages(rs), enabled=not as_json)
        try:
            summary = build.solve_and_store(
                rs,
                directory,
                threads,
                moments_too,
                progress=lambda done, total: bar.update(1),
                showing=bar,
                compiling=lambda: click.echo(solver.COMPILING_MESSAGE, err=True),
            )
        except build.MomentsInterrupted:
            raise exits.Interrupted(f"the {rs.name} table was written whole; its second moments were not") from None
    others = [n for n in names if n not in ("values", "moments")]
    with _ending(rs, "tables for games", directory):  # (Ctrl-C: build_tables says what was written)
        summary["tables"] = loading.build_tables(rs, directory, others, threads, as_json)
    if as_json:
        click.echo(json.dumps(summary))
    else:
        click.echo("\n".join(_summary_lines(rs, summary)))


def _table_names(values: tuple[str, ...]) -> tuple[str, ...]:
    """``--only`` / ``--skip``: the table names, comma-separated and repeated (checked by the command: nothing
    is imported while the options are parsed, so that a Ctrl-C then is said as any other before the solve)."""
    return tuple(n.strip() for v in values for n in v.split(",") if n.strip())


def _summary_lines(rs: rules.RuleSet, summary: dict) -> list[str]:
    """What ``solve`` prints (:func:`pentadice.tables.build.solve_and_store`'s summary)."""
    files = summary["files"]
    spread = files["m2"] is not None
    lines = [
        f"Rules:           {rs.name} ({rs.title})",
        f"Expected score:  {summary['expected_score']:.10f} at game start, optimal play",
    ]
    if spread:
        lines.append(f"Spread:          SD {summary['sd']:.2f} of the final score at game start, optimal play")
    else:
        from pentadice.solver import moments

        lines.append(f"Spread:          {moments.on_demand_message(rs)}")
    threads = summary["threads"]
    threads_text = f"{threads} thread{'s' if threads != 1 else ''}"
    with_sd = ", values and second moments in one pass" if spread else ""
    lines += [
        f"States solved:   {summary['states']:,}",
        f"Solve:           {summary['seconds']:.3f} s on {threads_text}{with_sd}",
        f"JIT compile:     {summary['compile_seconds']:.3f} s (Numba; loaded from cache after the first run)",
        f"Write:           {summary['write_seconds']:.3f} s",
        f"Files:           {files['npy']}",
        f"                 {files['parquet']}",
        f"                 {files['metadata']}",
    ]
    if spread:
        lines += [f"                 {files['m2']}", f"                 {files['m2_metadata']}"]
    from pentadice.players import prepared

    for name, built in summary.get("tables", {}).items():
        how = f"built in {built['seconds']:.1f} s" if built["built"] else "kept (saved already for these values)"
        lines.append(f"{prepared.WHAT[name].capitalize()}: {how}, {built['bytes'] / 1e6:,.0f} MB")
        lines += [f"                 {f}" for f in built["files"]]
    return lines


def _solve_targets(rs, data: str | None, threads: int | None, as_json: bool) -> None:
    """``solve --targets``: build the target table of ``rs`` and say what it cost."""
    from pentadice.tables import targets

    directory = paths.data_dir(data)
    with _ending(rs, "target table", directory):  # a refused rule set is refused before its states are listed
        bar = loading.progress(label=f"Targets of {rs.name}", length=targets.stages(rs), enabled=not as_json)
        built, files, write_seconds = targets.build(
            rs, directory, threads, progress=lambda done, total: bar.update(1), showing=bar
        )
    if as_json:
        click.echo(json.dumps(targets.summary(rs, built, files, write_seconds)))
    else:
        click.echo("\n".join(targets.summary_lines(rs, built, files, write_seconds)))


@contextlib.contextmanager
def _ending(rs: rules.RuleSet, what: str, directory: Path) -> Iterator[None]:
    """How a solve that fails ends: a table that cannot be written exits 1 with its reason, a rule set refused
    (too large) is a usage error, and Ctrl-C says whether the ``what`` ("table") of ``rs`` was written."""
    from pentadice.tables import table

    try:
        yield
    except table.TableError as e:
        raise exits.Failure(str(e)) from None
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    except interrupts.CommittedInterrupt:
        raise exits.Interrupted(f"the {rs.name} {what} had been written whole to {directory} already") from None
    except KeyboardInterrupt:
        raise exits.Interrupted(f"no {what} was written; the old one, if any, is as it was") from None
