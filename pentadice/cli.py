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
        bar = _progress(label=f"Solving {rs.name}", length=solver.stages(rs), enabled=not as_json)
        with bar, _DeferredInterrupt() as interrupt:

            def progress(done: int, total: int) -> None:
                bar.update(1)
                interrupt.check()

            solution = solver.solve(rs, threads=threads, progress=progress)
            interrupt.check()
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
        with _SolveOnceBar(rules_name) as bar:
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
        with _SolveOnceBar(rules_name) as solving:
            advisor = Advisor.load(rules_name, data, progress=lambda d, t: solving.update(1))
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


@main.command()
@click.option("--players", default="You,cpu", show_default=True, help='Players: names are people, "cpu" the computer.')
@click.option("--seed", type=int, default=None, help="Seed of the dice: the same seed and input give the same game.")
@click.option("--hints", is_flag=True, help="Show the advisor's recommendation and what each choice cost.")
@RULES_OPTION
@click.option(
    "--auto-commit",
    type=click.FloatRange(min=0),
    default=3.0,
    show_default=True,
    help="Seconds after the last roll before the computer fills the box.",
)
@click.option(
    "--pause",
    type=click.FloatRange(min=0),
    default=None,
    help="Seconds between the computer's moves [default: 0.6 on a terminal, else 0].",
)
@click.option(
    "--save",
    "save_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Save the game to this file after every box (resume it with --resume).",
)
@click.option("--resume", type=click.Path(dir_okay=False, exists=True), default=None, help="Resume a saved game.")
@click.option("--data", default=None, help="Table directory (see solve).")
def play(players, seed, hints, rules_name, auto_commit, pause, save_path, resume, data) -> None:
    """Play Penta in the terminal, against the computer or each other."""
    from pathlib import Path

    from pentadice.advisor import Advisor
    from pentadice.game.engine import Game, GameError, parse_players
    from pentadice.game.terminal import LineInput, TerminalGame

    try:
        if resume:
            game = Game.from_json(Path(resume).read_text())
            save_path = save_path or resume
        else:
            game = Game(rules.get_rules(rules_name), parse_players(players), seed, auto_commit)
        with _SolveOnceBar(game.rules.name) as bar:
            advisor = Advisor.load(game.rules.name, data, progress=lambda d, t: bar.update(1), compiled=False)
    except (GameError, ValueError, OSError) as e:
        raise click.UsageError(str(e)) from None
    if pause is None:
        pause = 0.6 if sys.stdout.isatty() else 0.0
    front = TerminalGame(
        game, advisor, LineInput(sys.stdin), click.echo, hints, pause, Path(save_path) if save_path else None
    )
    try:
        front.run()
    except GameError as e:  # saving failed
        raise click.ClickException(str(e)) from None


@main.command()
@click.option("-n", "--games", type=click.IntRange(min=1), required=True, help="Number of games.")
@click.option("--seed", type=int, default=None, help="Seed: the same seed gives the same games.")
@click.option(
    "--strategy",
    type=click.Choice(["optimal", "greedy"]),
    default="optimal",
    show_default=True,
    help="optimal: by the solved table; greedy: the most points this turn.",
)
@RULES_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option(
    "--out", type=click.Path(dir_okay=False), default=None, help="Write one row per game to this Parquet file."
)
@click.option("--data", default=None, help="Table directory (see solve).")
def simulate(games, seed, strategy, rules_name, as_json, out, data) -> None:
    """Play N solitaire games with a strategy and summarise the scores."""
    from pentadice.advisor import Advisor
    from pentadice.game import simulate as sim

    try:
        with _SolveOnceBar(rules_name) as solving:
            advisor = Advisor.load(rules_name, data, progress=lambda d, t: solving.update(1))
        bar = _progress(label=f"Playing {games:,} games", length=games, enabled=not as_json)
        with bar:
            result = sim.simulate(advisor.table, games, seed, strategy, progress=bar.update)
        if out:
            sim.write_parquet(result, out)
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    except OSError as e:
        raise click.ClickException(f"cannot write {out}: {e.strerror or e}") from None
    st = result.stats
    if as_json:
        click.echo(json.dumps({"rules": rules_name, "strategy": strategy, "seed": seed, **st}))
        return
    click.echo(f"{result.rules.title}, {strategy} strategy, {st['games']:,} games (seed {seed})")
    click.echo(f"Mean score:        {st['mean']:.3f}  (std {st['std']:.2f}, standard error {st['stderr']:.3f})")
    if strategy == "optimal":
        click.echo(f"Solved expectation:{advisor.table.expected_score:>10.3f}")
    pct = st["percentiles"]
    click.echo(
        "Percentiles:       " + "  ".join(f"{q}%: {pct[q]:g}" for q in ("1", "10", "25", "50", "75", "90", "99"))
    )
    click.echo(f"Min / max:         {st['min']} / {st['max']}")
    click.echo(f"Upper bonus rate:  {st['upper_bonus_rate']:.2%}")
    penta = result.rules.box_name("penta")
    click.echo(f"{penta + ' rate:':<19}{st['penta_rate']:.2%}  (games with points in the {penta} box)")
    if result.rules.penta_bonus:
        dist = ", ".join(f"{k}: {v:,}" for k, v in st["penta_bonus_distribution"].items())
        click.echo(f"{penta + ' bonuses:':<19}{dist}")
    if result.rules.penta_repeat:
        dist = ", ".join(f"{k}: {v:,}" for k, v in st["extra_turns_distribution"].items())
        click.echo(f"{'Extra turns:':<19}{dist}")
    click.echo(f"Speed:             {st['games_per_second']:,.0f} games/s ({st['seconds']:.2f} s)")
    click.echo("Final scores:")
    hist = sim.histogram(result.totals)
    peak = max(c for _, _, c in hist)
    for lo, hi, c in hist:
        click.echo(f"  {lo:>4}-{hi:<4} {'#' * round(40 * c / peak):<40} {c:,}")
    if out:
        click.echo(f"Games written to {out}")


class _DeferredInterrupt:
    """Ctrl-C noted by a signal handler and raised at the next :meth:`check`, i.e. between stages of a solve.

    Raised at once it could land inside Numba's compiler callbacks, which can only print it as an ignored
    exception with a traceback and go on.
    """

    def __init__(self) -> None:
        self.pending = False

    def __enter__(self) -> _DeferredInterrupt:
        import signal

        self.previous = signal.signal(signal.SIGINT, self._note)
        return self

    def __exit__(self, *exc: object) -> None:
        import signal

        signal.signal(signal.SIGINT, self.previous)

    def _note(self, signum: int, frame: object) -> None:
        self.pending = True

    def check(self) -> None:
        if self.pending:
            raise KeyboardInterrupt


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


class _SolveOnceBar(_NoBar):
    """The progress of solving a missing table: drawn only if a solve actually starts. Ctrl-C while it is
    open is raised between stages (see :class:`_DeferredInterrupt`)."""

    def __init__(self, rules_name: str) -> None:
        self.rules_name = rules_name
        self.bar = None
        self.interrupt = _DeferredInterrupt()

    def __enter__(self) -> _SolveOnceBar:
        self.interrupt.__enter__()
        return self

    def update(self, n: int) -> None:
        self.interrupt.check()
        if self.bar is None:
            from pentadice import solver  # no Numba at import: the kernels load when a solve starts

            rs = rules.get_rules(self.rules_name)
            self.bar = _progress(f"Solving {rs.name} (once)", solver.stages(rs), True).__enter__()
        self.bar.update(n)

    def __exit__(self, *exc: object) -> None:
        self.interrupt.__exit__(*exc)
        if self.bar is not None:
            self.bar.__exit__(*exc)
        self.interrupt.check()


if __name__ == "__main__":
    main()
