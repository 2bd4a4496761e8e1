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


@main.command()
@click.argument("dice", nargs=-1, type=int)
@click.option(
    "--rolls-left", type=click.IntRange(0, 2), default=2, show_default=True, help="Rerolls left (0: last roll)."
)
@click.option(
    "--sheet", "sheet_text", default=None, help='Filled boxes, e.g. "ones=3 threes=9 penta=50 penta_bonus=100".'
)
@click.option("--sheet-file", type=click.File("r"), default=None, help="The sheet as a JSON object of box: points.")
@RULES_OPTION
@click.option(
    "--top", type=click.IntRange(min=1), default=None, help="Show the best N options [default: 10; JSON: all]."
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--batch", type=click.File("r"), default=None, help="JSON lines of situations ('-': standard input).")
@click.option(
    "--data", default=None, help=f"Table directory [default: ${paths.ENV_VAR}, else ~/.local/share/pentadice]."
)
def advise(dice, rolls_left, sheet_text, sheet_file, rules_name, top, as_json, batch, data) -> None:
    """Which dice to keep or which box to fill, and what every option is worth.

    DICE are the five dice showing, e.g. `pentadice advise 1 1 3 4 6` (the start of a game, first roll).
    """
    from pentadice.advisor import Advisor, Situation
    from pentadice.sheet import Sheet

    if batch is not None:
        if dice or sheet_text or sheet_file:
            raise click.UsageError("--batch reads its situations from the file: give no dice or sheet")
        _advise_batch(batch, rules_name, top, data)
        return
    if sheet_text is not None and sheet_file is not None:
        raise click.UsageError("give the sheet with --sheet or --sheet-file, not both")
    try:
        sheet = Sheet.parse(sheet_text) if sheet_text else Sheet.from_json(sheet_file.read()) if sheet_file else Sheet()
        rs = rules.get_rules(rules_name)
        situation = Situation.make(rs, list(dice), rolls_left, sheet)
        bar = _progress(label=f"Solving {rs.name} (once)", length=bin(rs.box_mask).count("1"), enabled=True)
        with bar:
            advisor = Advisor.load(rules_name, data, progress=lambda d, t: bar.update(1), compiled=False)
    except ValueError as e:  # a bad situation or sheet, or a wrong table (TableError)
        raise click.UsageError(str(e)) from None
    advice = advisor.advise(situation)
    if as_json:
        click.echo(json.dumps(advice.as_dict(rs, top)))
    else:
        click.echo(_advice_text(advice, rs, top or 10))


def _advice_text(advice, rs, top: int) -> str:
    """The advice for people: the recommendation, the rules' notes, then the ranked options."""
    from pentadice.advisor import NO_SCORE_MESSAGE
    from pentadice.advisor.words import describe, short

    best = advice.best
    lines = [advice.situation.describe(rs), ""]
    lines.append(f"Best: {describe(best, rs)} (expected final score {best.value:.3f})")
    if advice.joker:
        lines.append(advice.joker + ".")
    if advice.no_box_scores:
        sacrifice = advice.best_box
        lines.append(f"{NO_SCORE_MESSAGE}. Best sacrifice: {describe(sacrifice, rs)} (expected {sacrifice.value:.3f})")
    elif best.action == "keep":
        box = advice.best_box
        lines.append(f"Best box if you score now: {describe(box, rs)} (expected {box.value:.3f})")
    lines += ["", f"{'rank':>4}  {'option':<34}{'expected':>10}{'loss':>9}"]
    for i, o in enumerate(advice.options[:top], 1):
        lines.append(f"{i:>4}  {short(o, rs):<34}{o.value:>10.3f}{o.loss:>9.3f}")
    if len(advice.options) > top:
        lines.append(f"      ({len(advice.options) - top} more options: --top {len(advice.options)} shows them all)")
    return "\n".join(lines)


def _advise_batch(stream, rules_name: str, top: int | None, data: str | None) -> None:
    """One JSON situation a line in, one JSON advice a line out, in order; a bad line is reported with its
    number (on standard error, and as an error object in its place) and the run goes on."""
    from pentadice.advisor import Advisor
    from pentadice.advisor.batch_io import parse_lines

    rs = rules.get_rules(rules_name)
    situations, errors = parse_lines(rs, stream)
    try:
        advisor = Advisor.load(rules_name, data)
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    good = [s for s in situations if s is not None]
    advices = iter(advisor.advise_many(good)) if good else iter(())
    out = sys.stdout
    for number, s in enumerate(situations, 1):
        if s is None:
            out.write(json.dumps({"line": number, "error": errors[number]}) + "\n")
        else:
            out.write(json.dumps(next(advices).as_dict(rs, top)) + "\n")
    out.flush()
    for number, message in errors.items():
        click.echo(f"line {number}: {message}", err=True)
    if errors:
        sys.exit(2)


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
