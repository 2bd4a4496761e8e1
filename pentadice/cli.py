"""The ``pentadice`` command: parses arguments and formats results; the work is done by importable code.

Heavy imports (Numba, pyarrow) happen inside the commands that need them, so quick commands start fast.
"""

from __future__ import annotations

import json
import sys
import time

import click

from pentadice import paths, rules

RULES_OPTION = click.option(
    "--rules",
    "rules_name",
    type=click.Choice(list(rules.REGISTRY), case_sensitive=True),
    default=rules.DEFAULT_RULES,
    show_default=True,
    help="Rule set.",
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="pentadice")
def main() -> None:
    """Exact optimal strategy for Penta and the Yahtzee family of dice games."""


@main.command()
@RULES_OPTION
@click.option(
    "--out",
    type=click.Path(file_okay=False),
    default=None,
    help=f"Table directory [default: ${paths.ENV_VAR}, else ~/.local/share/pentadice].",
)
@click.option("--threads", type=click.IntRange(min=1), default=None, help="Worker threads [default: all cores].")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of the summary.")
def solve(rules_name: str, out: str | None, threads: int | None, as_json: bool) -> None:
    """Solve a rule set exactly and write its table (NumPy .npy, Parquet, JSON metadata)."""
    rs = rules.get_rules(rules_name)
    directory = paths.data_dir(out)
    try:
        from pentadice import solver, table

        table.prepare_directory(directory)
        bar = _progress(label=f"Solving {rs.name}", length=bin(rs.box_mask).count("1"), enabled=not as_json)
        with bar:
            solution = solver.solve(rs, threads=threads, progress=lambda done, total: bar.update(1))
        start = time.perf_counter()
        files = table.save(rs, solution.values, directory)
        write_seconds = time.perf_counter() - start
    except ValueError as e:  # TableError is one too
        raise click.ClickException(str(e)) from None
    except KeyboardInterrupt:
        click.echo("Interrupted: no table was written.", err=True)
        sys.exit(130)
    summary = {
        "rules": rs.name,
        "expected_score": solution.expected_score,
        "states": solution.states_solved,
        "seconds": solution.solve_seconds,
        "compile_seconds": solution.compile_seconds,
        "write_seconds": write_seconds,
        "threads": solution.threads,
        "files": files.as_dict(),
    }
    if as_json:
        click.echo(json.dumps(summary))
        return
    click.echo(f"Rules:           {rs.name} ({rs.title})")
    click.echo(f"Expected score:  {solution.expected_score:.10f} at game start, optimal play")
    click.echo(f"States solved:   {solution.states_solved:,}")
    click.echo(f"Solve:           {solution.solve_seconds:.3f} s on {solution.threads} threads")
    click.echo(f"JIT compile:     {solution.compile_seconds:.3f} s (Numba; loaded from cache after the first run)")
    click.echo(f"Write:           {write_seconds:.3f} s")
    click.echo(f"Files:           {files.values}")
    click.echo(f"                 {files.parquet}")
    click.echo(f"                 {files.meta}")


class _NoBar:
    """Stands in for a progress bar where none is drawn."""

    def __enter__(self) -> _NoBar:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def update(self, n: int) -> None:
        return None


def _progress(label: str, length: int, enabled: bool):
    """A progress bar on standard error when it is a terminal, else nothing."""
    if enabled and sys.stderr.isatty():
        return click.progressbar(length=length, label=label, file=sys.stderr)
    return _NoBar()


if __name__ == "__main__":
    main()
