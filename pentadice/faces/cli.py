"""The ``pentadice`` command: parses arguments and formats results; the work is done by importable code.

Heavy imports (Numba, pyarrow) happen inside the commands that need them, so quick commands start fast.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import time

import click

from pentadice.game import rules
from pentadice.support import exits, interrupts, paths

RULES_OPTION = click.option(
    "--rules",
    "rules_name",
    type=click.Choice(list(rules.REGISTRY), case_sensitive=True),
    default=rules.DEFAULT_RULES,
    show_default=True,
    help="Rule set.",
)


@click.group(cls=exits.Command, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="pentadice")
def main() -> None:
    """Exact optimal strategy for Penta and the Yahtzee family of dice games."""


DATA_OPTION = click.option("--data", default=None, type=click.Path(file_okay=False), help=paths.DEFAULT_HELP)


def _set_language(ctx: click.Context, param: click.Parameter, value: str | None) -> str:
    """The language of the command's text, spoken from here on: --lang, else the environment's."""
    from pentadice.support import i18n

    return i18n.use(i18n.choose(value))


LANG_OPTION = click.option(
    "--lang",
    type=click.Choice(["en", "id"]),
    default=None,
    expose_value=False,
    callback=_set_language,
    help="Language of the text: English or Indonesian [default: from LANGUAGE, LC_ALL, LC_MESSAGES or LANG].",
)


@main.command()
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
def solve(
    rules_name: str, data: str | None, threads: int | None, as_json: bool, targets: bool, with_moments: bool | None
) -> None:
    """Solve a rule set exactly and write its table (NumPy .npy, Parquet, JSON metadata).

    The table directory is given by --data (--out is the same option).
    """
    try:  # from the start: a Ctrl-C while the modules load has written nothing either
        from pentadice import solver
        from pentadice.tables import table
    except KeyboardInterrupt:
        raise exits.Interrupted("no table was written; the old one, if any, is as it was") from None
    rs = rules.get_rules(rules_name)
    if targets:
        _solve_targets(rs, data, threads, as_json)
        return
    directory = paths.data_dir(data)
    try:
        from pentadice.solver import moments

        # The second moments (the SD of every option), in the same pass: not unasked for Maxi Yatzy, whose pass
        # is long (moments.automatic).
        with_m2 = moments.automatic(rs) if with_moments is None else with_moments
        table.prepare_directory(directory, rs.name)
        # A first run: say why nothing moves for seconds (the one pass compiles no value kernel, but Kiriki's).
        first = moments.needs_compiling(rs) if with_m2 else solver.needs_compiling(rs)
        if first or (with_m2 and rs.penta_repeat and solver.needs_compiling(rs)):
            click.echo(solver.COMPILING_MESSAGE, err=True)
        bar = _progress(label=f"Solving {rs.name}", length=solver.stages(rs), enabled=not as_json)
        solved = []

        def solve():
            with bar, interrupts.Held() as interrupt:

                def progress(done: int, total: int) -> None:
                    bar.update(1)
                    interrupt.check()

                solved.append(solver.solve(rs, threads=threads, progress=progress, moments=with_m2))
                interrupt.check()
            solved.append(time.perf_counter())
            return solved[0].values

        files = table.solve_and_save(rs, directory, solve)
        solution, write_seconds = solved[0], time.perf_counter() - solved[1]
        try:  # the second moments, solved with the values: written beside them
            spread = None
            if solution.m2 is not None:
                spread = table.store_moments(rs, directory, solution.values, solution.m2)
                spread["metadata"] = str(table.TableFiles(directory, rs.name).moments_meta)  # written with it
        except KeyboardInterrupt:
            raise exits.Interrupted(f"the {rs.name} table was written whole; its second moments were not") from None
    except table.TableError as e:
        raise exits.Failure(str(e)) from None
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    except interrupts.CommittedInterrupt:
        raise exits.Interrupted(f"the {rs.name} table had been written whole to {directory} already") from None
    except KeyboardInterrupt:
        raise exits.Interrupted("no table was written; the old one, if any, is as it was") from None
    summary = {
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
    if as_json:
        click.echo(json.dumps(summary))
        return
    click.echo(f"Rules:           {rs.name} ({rs.title})")
    click.echo(f"Expected score:  {solution.expected_score:.10f} at game start, optimal play")
    if spread is not None:
        click.echo(f"Spread:          SD {spread['sd']:.2f} of the final score at game start, optimal play")
    else:
        from pentadice.solver import moments

        click.echo(f"Spread:          {moments.on_demand_message(rs)}")
    click.echo(f"States solved:   {solution.states_solved:,}")
    threads_text = f"{solution.threads} thread{'s' if solution.threads != 1 else ''}"
    with_sd = ", values and second moments in one pass" if spread is not None else ""
    click.echo(f"Solve:           {solution.solve_seconds:.3f} s on {threads_text}{with_sd}")
    click.echo(f"JIT compile:     {solution.compile_seconds:.3f} s (Numba; loaded from cache after the first run)")
    click.echo(f"Write:           {write_seconds:.3f} s")
    click.echo(f"Files:           {files.values}")
    click.echo(f"                 {files.parquet}")
    click.echo(f"                 {files.meta}")
    if spread is not None:
        click.echo(f"                 {spread['file']}")
        click.echo(f"                 {spread['metadata']}")


def _joined_sheets(given: tuple[str, ...]) -> str | None:
    """``--sheet`` given more than once: the boxes of all of them, as one sheet (a box given twice is refused
    by the sheet's parser, as within one ``--sheet``); None if not given."""
    return " ".join(given) if given else None


def _sheet_option(example: str):
    """``--sheet``, repeatable (:func:`_joined_sheets`), its help with ``example``."""
    return click.option(
        "--sheet",
        "sheet_text",
        multiple=True,
        callback=lambda ctx, param, value: _joined_sheets(value),
        help=f'Filled boxes, e.g. "{example}" (box names below; repeatable).',
    )


BOX_NAMES_HELP = (
    "\b\nBox names for --sheet, in any case, words joined by '-', '_', a space or nothing:\n  "
    + rules.PENTA_RULES.names_help().replace("), ", "),\n  ")
    + ",\n  penta_bonus (bonus).\nUnder --rules yahtzee the Penta box is also 'yahtzee', under kiriki 'kiriki'."
    + "\n\b\nUnder --rules yatzy and maxi-yatzy, the boxes of their own sheets (no penta, no bonus):\n  "
    + rules.get_rules("maxi-yatzy").names_help().replace("), ", "),\n  ")
    + ".\nYatzy has the first six, one_pair, two_pairs, three_of_a_kind, four_of_a_kind, small_straight,"
    + "\nlarge_straight, full_house, chance and yatzy."
)


@main.command(epilog=BOX_NAMES_HELP)
@click.argument("dice", nargs=-1)
@click.option(
    "--rolls-left", type=click.IntRange(0, 2), default=2, show_default=True, help="Rerolls left (0: last roll)."
)
@_sheet_option("ones=3 full house=25 penta=50 penta_bonus=100")
@click.option(
    "--sheet-file",
    metavar="FILE",
    default=None,
    help="The sheet as box=points text or a JSON object of box: points ('-': standard input).",
)
@RULES_OPTION
@click.option(
    "--top", type=click.IntRange(min=1), default=None, help="Show the best N options [default: 10; JSON: all]."
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--batch", metavar="FILE", default=None, help="JSON lines of situations ('-': standard input).")
@click.option(
    "--target",
    type=click.IntRange(0, 100_000),
    default=None,
    metavar="T",
    help="Rank the options by the chance of finishing with at least T points (needs `solve --targets`).",
)
@DATA_OPTION
@LANG_OPTION
def advise(dice, rolls_left, sheet_text, sheet_file, rules_name, top, as_json, batch, data, target) -> None:
    """Which dice to keep or which box to fill, and what every option is worth.

    DICE are the dice showing, five (six under --rules maxi-yatzy): `pentadice advise 1 1 3 4 6`, `pentadice
    advise 13346`, or on standard input (`echo 1 1 3 4 6 | pentadice advise`). Alone, they are the first roll
    of a new game.
    """
    from pentadice.advisor import Situation
    from pentadice.game.sheet import Sheet
    from pentadice.game.situation import parse_dice

    if batch is not None:
        if target is not None:
            raise click.UsageError("--target answers one situation: it cannot be used with --batch")
        if dice or sheet_text or sheet_file:
            raise click.UsageError("--batch reads its situations from the file: give no dice or sheet")
        _advise_batch(batch, rules_name, top, data)
        return
    if sheet_text is not None and sheet_file is not None:
        raise click.UsageError("give the sheet with --sheet or --sheet-file, not both")
    rs = rules.get_rules(rules_name)
    if not dice:
        if sheet_file == "-":
            raise click.UsageError("give the dice as arguments when the sheet comes from standard input")
        dice = (_read_stdin("the dice", 4096),)
    try:
        sheet = _read_sheet_file(sheet_file, rs) if sheet_file else Sheet()
    except ValueError as e:  # the file is at fault, not the command line
        where = "" if sheet_file == "-" or sheet_file in str(e) else f"{sheet_file}: "
        raise exits.BadInput(f"{where}{e}") from None
    try:
        sheet = Sheet.parse(sheet_text, rs) if sheet_text else sheet
        situation = Situation.make(rs, parse_dice(rs, " ".join(dice)), rolls_left, sheet)
    except ValueError as e:  # a bad situation or sheet
        raise click.UsageError(str(e)) from None
    from pentadice.advisor.explain import explain
    from pentadice.faces.words import advice_text

    target_table = _target_table(rs, data) if target is not None else None  # refused or missing: before any solve
    advisor = _load_advisor(rules_name, data, compiled=False)
    _load_spread(advisor)
    advice = advisor.advise(situation)
    if target_table is not None:
        _advise_target(advice, rs, target_table, target, top, as_json)
        return
    why = explain(advisor, advice)
    if as_json:
        click.echo(json.dumps({**advice.as_dict(rs, top), "why": why.as_dict() if why else None}))
    else:
        click.echo(advice_text(advice, rs, top or 10, why))


SHEET_FILE_LIMIT = 64 * 1024


def _read_sheet_file(path: str, rs):
    from pentadice.game.sheet import Sheet
    from pentadice.support import inputs

    if path == "-":
        return Sheet.read(_read_stdin("the sheet", SHEET_FILE_LIMIT), rs)
    return Sheet.read(inputs.read_text(path, "the sheet file", SHEET_FILE_LIMIT), rs)


def _read_stdin(what: str, limit: int) -> str:
    """Standard input, whole, as text: at most ``limit`` bytes of UTF-8; a usage error at a terminal (nothing
    was given, and waiting for typing would look like a hang)."""
    from pentadice.support import inputs

    if sys.stdin is None or sys.stdin.isatty():
        raise click.UsageError(f"give {what} (as arguments, or on standard input)")
    data = sys.stdin.buffer.read(limit + 1)
    if len(data) > limit:
        raise exits.BadInput(f"{what} on standard input is larger than {limit:,} bytes")
    try:
        return inputs.decode(data, f"{what} on standard input")
    except inputs.InputError as e:
        raise exits.BadInput(str(e)) from None


def _load_advisor(rules_name: str, data: str | None, compiled: bool = True):
    """The advisor of a rule set, solving its missing table once (with a progress bar, waiting for another
    process already solving it) and, if ``compiled``, its kernels compiled or loaded; a damaged table or an
    unwritable directory ends the command with exit 1. Ctrl-C in all this is raised at a safe point."""
    from pentadice.advisor import Advisor
    from pentadice.tables import table

    try:
        with _SolveOnceBar(rules_name) as bar:
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


def _probability_text(p: float) -> str:
    """A probability to 6 significant digits that never shows a certainty (1 or 0) that is not one."""
    text = f"{p:.6g}"
    return ">0.999999" if text == "1" and p < 1.0 else text


def _load_spread(advisor) -> None:
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


def _advise_batch(path: str, rules_name: str, top: int | None, data: str | None) -> None:
    """One JSON situation a line in, one JSON advice a line out, in order, as they come; a bad line is reported
    with its number (on standard error, and as an error object in its place) and the run goes on."""
    from pentadice.advisor.batch_io import BatchInputError, LineReader, answer_texts

    try:
        stream = sys.stdin.buffer if path == "-" else open(path, "rb")  # noqa: SIM115  (closed below)
    except OSError as e:
        raise exits.BadInput(f"cannot read {path}: {e.strerror or e}") from None
    advisor = _load_advisor(rules_name, data)
    out = sys.stdout
    failed = answered = 0
    try:
        for text, count, error in answer_texts(advisor, LineReader(stream), top, flush=out.flush):
            out.write(text)
            answered += count
            if error is not None:
                failed += 1
                out.flush()
                click.echo(f"line {error[0]}: {error[1]}", err=True)
        out.flush()
    except BatchInputError as e:  # not lines at all: what came before is answered, the rest is not read
        out.flush()
        raise exits.BadInput(str(e)) from None
    except KeyboardInterrupt:
        raise exits.Interrupted(f"{answered:,} lines were answered (lines 1 to {answered:,})") from None
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()
    if failed:
        sys.exit(2)


@main.command()
@click.option(
    "--players",
    default="You,cpu",
    show_default=True,
    help='Players: names are people; "cpu", "cpu:win", "cpu:Bob" or "cpu:win:Bob" computers (strategies: optimal, '
    "the default, and win).",
)
@click.option(
    "--seed",
    type=click.IntRange(min=0),
    default=None,
    help="Seed of the dice: the same seed and input give the same game.",
)
@click.option(
    "--hints/--no-hints",
    default=False,
    help="Show the advisor's recommendation and what each choice cost [default: off, or as saved].",
)
@RULES_OPTION
@click.option(
    "--auto-commit",
    default="3",
    show_default=True,
    metavar="SECONDS|off",
    help="Seconds after the last roll before the computer fills the box (0: at once; off: never).",
)
@click.option(
    "--pause",
    type=click.FloatRange(min=0, max=60),
    default=None,
    help="Seconds between the computer's moves [default: 0.6 on a terminal, else 0].",
)
@click.option(
    "--chances/--no-chances",
    "show_chances",
    default=None,
    help="After every box, each player's chance of winning [default: on at a terminal, else off].",
)
@click.option(
    "--save",
    "save_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Save the game to this file after every box, and when it stops (resume it with --resume).",
)
@click.option(
    "--resume",
    metavar="FILE",
    default=None,
    help="Resume a saved game (its players, rules and dice; it goes on saving to that file).",
)
@DATA_OPTION
@LANG_OPTION
@click.pass_context
def play(ctx, players, seed, hints, rules_name, auto_commit, pause, show_chances, save_path, resume, data) -> None:
    """Play Penta in the terminal, against the computer or each other."""
    import contextlib
    import signal

    from click.core import ParameterSource

    from pentadice.faces.terminal import LineInput, TerminalGame, check_save_path, load_game
    from pentadice.players.engine import Game, GameError, parse_auto_commit, parse_players
    from pentadice.support.inputs import clean
    from pentadice.tables import chunks

    chunks.use_private_copies()  # a game lasts: its tables are held in memory, out of reach of changes on disk

    def given(name: str) -> bool:
        return ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP, None)

    with contextlib.suppress(AttributeError, ValueError):  # names the terminal cannot show come out as '?'
        sys.stdout.reconfigure(errors="replace")
    try:
        seconds = parse_auto_commit(auto_commit)
    except GameError as e:
        raise click.BadParameter(str(e), param_hint="--auto-commit") from None
    if pause is not None and not 0 <= pause <= 60:  # NaN passes click's range check
        raise click.BadParameter(f"{pause} is not a number of seconds from 0 to 60", param_hint="--pause")
    try:
        save = paths.expand(save_path) if save_path else None
        resumed = paths.expand(resume) if resume else None
    except paths.PathError as e:
        raise click.UsageError(str(e)) from None
    if resumed is not None:
        fixed = [f"--{n}" for n, p in (("players", "players"), ("rules", "rules_name"), ("seed", "seed")) if given(p)]
        if fixed:
            raise click.UsageError(
                f"{', '.join(fixed)}: a resumed game's players, rules and dice come from the save file; "
                "give none with --resume"
            )
        try:
            game = load_game(resumed)
        except GameError as e:  # one line, no usage banner: the file is at fault, not the command line
            raise exits.BadInput(clean(str(e))) from None
        if game.coach:
            where = clean(str(resumed))
            raise exits.BadInput(f"{where} is a coach game (its dice come from the table): the terminal rolls its own")
        if given("auto_commit"):
            game.auto_commit_seconds = seconds
        if not given("hints"):
            hints = game.hints
        save = save or resumed
    else:
        try:
            game = Game(rules.get_rules(rules_name), parse_players(players), seed, seconds)
        except ValueError as e:  # GameError is one
            raise click.UsageError(str(e)) from None
    if save is not None:
        try:
            check_save_path(save)
        except GameError as e:
            raise click.BadParameter(str(e), param_hint="--save") from None
    advisor = _load_advisor(game.rules.name, data, compiled=False)
    if pause is None:
        pause = 0.6 if sys.stdout.isatty() else 0.0
    at_terminal = sys.stdout.isatty()
    show_chances = at_terminal if show_chances is None else show_chances
    inp = LineInput(sys.stdin, echo=sys.stdout)
    front = TerminalGame(game, advisor, inp, click.echo, hints, pause, save, resumed, show_chances, not at_terminal)

    def hang_up(signum: int, frame: object) -> None:
        raise KeyboardInterrupt  # the terminal was closed: saved as for Ctrl-C

    hup = None
    with contextlib.suppress(ValueError):  # only the main thread may set a handler
        hup = signal.signal(signal.SIGHUP, hang_up)
    try:
        front.run()
    except KeyboardInterrupt:  # Ctrl-C, SIGTERM or SIGHUP: the game as it stood at the last prompt is kept
        raise exits.Interrupted(front.save_interrupted()) from None
    except OSError:  # the terminal or the pipe we write to went away: keep the game all the same
        front.save_interrupted()
        raise
    except GameError as e:  # the final save failed
        raise exits.Failure(str(e)) from None
    finally:
        if hup is not None:
            signal.signal(signal.SIGHUP, hup)


@main.command()
@click.argument("save_file", metavar="SAVE.json")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@DATA_OPTION
@LANG_OPTION
def review(save_file: str, as_json: bool, data: str | None) -> None:
    """How well a saved game was played: each decision against the best option and the expected points it
    lost, and for each player the total, the mean per decision (under 0.2: expert play) and the worst three.

    SAVE.json is a game saved by `pentadice play --save` (or by the web page); its rule set is used. '-':
    standard input.
    """
    from pentadice.faces.review_text import review_lines
    from pentadice.faces.terminal import load_game
    from pentadice.players.engine import MAX_SAVE_BYTES, Game, GameError
    from pentadice.players.review import review as review_game
    from pentadice.support.inputs import clean

    try:
        if save_file == "-":
            game = Game.from_json(_read_stdin("the saved game", MAX_SAVE_BYTES))
        else:
            game = load_game(paths.expand(save_file))
    except paths.PathError as e:
        raise click.UsageError(str(e)) from None
    except GameError as e:  # one line, no usage banner: the file is at fault, not the command line
        raise exits.BadInput(clean(str(e))) from None
    advisor = _load_advisor(game.rules.name, data, compiled=False)
    result = review_game(game, advisor)
    if as_json:
        click.echo(json.dumps(result.as_dict()))
        return
    for line in review_lines(result, game.rules):
        click.echo(line)


@main.command()
@click.option("-n", "--games", type=click.IntRange(min=1), required=True, help="Number of games.")
@click.option("--seed", type=click.IntRange(min=0), default=None, help="Seed: the same seed gives the same games.")
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
@click.option(
    "--players",
    default=None,
    metavar="S1,S2,...",
    help="Play multiplayer games between these strategies (optimal, win; 2 to 6) and report win rates.",
)
@DATA_OPTION
@click.pass_context
def simulate(ctx, games, seed, strategy, rules_name, as_json, out, players, data) -> None:
    """Play N solitaire games with a strategy and summarise the scores; with --players, N games between
    computer players (seats rotated game by game) and each strategy's win rate."""
    from pentadice.simulator import simulate as sim
    from pentadice.tables import atomic

    if players is not None:
        _simulate_players(ctx, games, seed, rules_name, as_json, out, players, data)
        return

    try:  # what can fail before the games is checked before them
        target = atomic.target(out, stream_ok=True, replaces=sim.is_games_file) if out else None
    except atomic.TargetError as e:
        raise click.UsageError(str(e)) from None
    advisor = _load_advisor(rules_name, data, compiled=False)  # the simulator's own kernels play the games
    with interrupts.Held():
        if sim.needs_compiling(advisor.rules):  # a first run: say why nothing moves for a few seconds
            click.echo("Compiling the simulator (first run only)...", err=True)
        sim.compile_seconds(advisor.rules)
    seed = sim.fresh_seed() if seed is None else seed
    tally = sim.Tally(advisor.rules)
    bar = _progress(label=f"Playing {games:,} games", length=games, enabled=not as_json)
    start = time.perf_counter()
    summary = functools.partial(_simulate_summary, tally, advisor, strategy, seed, as_json, target)
    try:
        with bar:
            sim.run(advisor.table, games, seed, strategy, tally, bar.update, target)
    except interrupts.CommittedInterrupt:
        summary(time.perf_counter() - start, out)
        raise exits.Interrupted(f"the games had been written to {out} already") from None
    except KeyboardInterrupt:
        if tally.games:  # what was played is summed up all the same
            summary(time.perf_counter() - start, None)
        kept = (
            f"the summary above is of the {tally.games:,} games played of {games:,}"
            if tally.games
            else f"stopped before any of the {games:,} games was played"
        )
        if target is None:
            raise exits.Interrupted(kept) from None
        if target.streamed:
            raise exits.Interrupted(f"{kept}; the games on {target.given} are cut short") from None
        raise exits.Interrupted(f"{kept}; no games were written, {out} is as it was") from None
    except OSError as e:
        if target is not None and target.path is None:  # the games go to standard output: closed (quiet) or full
            raise exits.stdout_failure(e) from None
        raise exits.Failure(f"cannot write {out}: {e.strerror or e}") from None
    try:
        summary(time.perf_counter() - start, out)
    except KeyboardInterrupt:
        raise exits.Interrupted(f"the games were written to {out}" if out else "stopped") from None


def _simulate_players(ctx, games, seed, rules_name, as_json, out, players, data) -> None:
    """``simulate --players``: the games are played by pentadice.simulator.multiplayer."""
    from click.core import ParameterSource

    from pentadice.simulator import multiplayer as mp
    from pentadice.simulator import simulate as sim

    if ctx.get_parameter_source("strategy") is not ParameterSource.DEFAULT:
        raise click.UsageError("--strategy is for solitaire games; with --players each player names its strategy")
    if out is not None:
        raise click.UsageError("--out writes solitaire games; it cannot be used with --players")
    try:
        names = mp.parse_players(players, rules.get_rules(rules_name))
    except mp.PlayersError as e:
        raise click.UsageError(str(e)) from None
    advisor = _load_advisor(rules_name, data, compiled=False)
    with interrupts.Held():
        if mp.needs_compiling(advisor.rules):
            click.echo("Compiling the multiplayer simulator (first run only)...", err=True)
        mp.compile_seconds(advisor.rules)
    directory = getattr(getattr(advisor.table, "files", None), "directory", None)
    if "win" in names:
        click.echo(_win_tables_message(advisor.rules, directory), err=True)
    seed = sim.fresh_seed() if seed is None else seed
    bar = _progress(label=f"Playing {games:,} games", length=games, enabled=not as_json)
    try:
        with bar:
            result = mp.simulate_players(advisor.table, names, games, seed, bar.update)
    except KeyboardInterrupt:
        kept = _win_tables_kept(advisor.rules, directory) if "win" in names else ""
        raise exits.Interrupted(f"stopped: no games are summed up{kept}") from None
    if as_json:
        click.echo(json.dumps(result))
        return
    for line in mp.summary_lines(result, advisor.rules):
        click.echo(line)


def _win_table_files(rs: rules.RuleSet, directory) -> tuple[list, int]:
    """The win strategy's table files whole in ``directory`` (an array with its metadata beside it: they are
    written atomically, metadata last), and how many it has when all are there (Kiriki has no end-game table)."""
    from pentadice.players import win
    from pentadice.tables import win_tables

    kinds = [(win_tables.THETA_KIND, None)]
    if not rs.penta_repeat:
        kinds.append((win_tables.ENDGAME_KIND, {"max_open": win.ENDGAME_BOXES}))
    if directory is None:
        return [], len(kinds)
    pairs = [win_tables.saved_paths(rs, directory, kind, params) for kind, params in kinds]
    return [npy for npy, meta in pairs if npy.is_file() and meta.is_file()], len(kinds)


def _win_tables_message(rs: rules.RuleSet, directory) -> str:
    """What happens before the games of ``simulate --players ...win...``: the tables read, or built (and
    whether they are saved for later runs). No time is quoted: the summary gives the seconds it took."""
    from pentadice.tables import win_tables

    found, wanted = _win_table_files(rs, directory)
    if directory is not None and len(found) == wanted:
        return f"Reading the win strategy's tables from {directory} (built again if damaged or not this table's)..."
    theta = directory is not None and win_tables.saved_paths(rs, directory, win_tables.THETA_KIND)[0] in found
    what = (
        "the end-game table (the theta tables read from the table directory, unless damaged or not this table's)"
        if theta
        else ("a backward solve per theta" + ("" if wanted == 1 else ", then the end-game table"))
    )
    if directory is not None and os.access(directory, os.W_OK):
        saved = f"saved in {directory} for later runs"
    else:
        saved = "not saved: the table directory cannot be written, so every run builds them"
    return f"Building the win strategy's tables: {what}; {saved}..."


def _win_tables_kept(rs: rules.RuleSet, directory) -> str:
    """What an interrupted ``simulate --players ...win...`` leaves on disk of the win strategy's tables."""
    found, _ = _win_table_files(rs, directory)
    if not found:
        return "; no table of the win strategy was saved"
    sizes = ", ".join(f"{p.name} ({p.stat().st_size / 1e6:,.0f} MB)" for p in found)
    return f"; the win strategy's tables saved in {directory} stay there, whole, for later runs: {sizes}"


def _simulate_summary(tally, advisor, strategy, seed, as_json, target, seconds: float, written: str | None) -> None:
    # With the games on standard output, the summary goes to standard error.
    echo = functools.partial(click.echo, err=target is not None and target.path is None)
    rs = tally.rules
    st = tally.stats(seconds)
    if as_json:
        echo(json.dumps({"rules": rs.name, "strategy": strategy, "seed": seed, **st}))
        return
    echo(f"{rs.title}, {strategy} strategy, {st['games']:,} games (seed {seed})")
    echo(f"Mean score:        {st['mean']:.3f}  (std {st['std']:.2f}, standard error {st['stderr']:.3f})")
    if strategy == "optimal":
        echo(f"Solved mean:       {advisor.table.expected_score:.3f}  (exact, from the table)")
    pct = st["percentiles"]
    echo("Percentiles:       " + "  ".join(f"{q}%: {pct[q]}" for q in ("1", "10", "25", "50", "75", "90", "99")))
    echo(f"Min / max:         {st['min']} / {st['max']}")
    echo(f"Upper bonus rate:  {st['upper_bonus_rate']:.2%}")
    alike = rs.box_name(rs.all_alike_box)
    echo(f"{alike + ' rate:':<19}{st['all_alike_rate']:.2%}  (games with points in the {alike} box)")
    if rs.penta_bonus and rs.penta_box >= 0:
        dist = ", ".join(f"{k}: {v:,}" for k, v in st["penta_bonus_distribution"].items())
        echo(f"{rs.bonus_name + 'es:':<19}{dist}")
    if rs.penta_repeat:
        dist = ", ".join(f"{k}: {v:,}" for k, v in st["extra_turns_distribution"].items())
        echo(f"{'Extra turns:':<19}{dist}")
    echo(f"Speed:             {st['games_per_second']:,.0f} games/s ({st['seconds']:.2f} s)")
    echo("Final scores:")
    hist = tally.histogram()
    peak = max(c for _, _, c in hist)
    for lo, hi, c in hist:
        echo(f"  {lo:>4}-{hi:<4} {'#' * round(40 * c / peak):<40} {c:,}")
    if written:
        echo(f"Games written to {written}")


@main.command(epilog=BOX_NAMES_HELP)
@click.argument("dice", nargs=-1)
@click.option(
    "--rolls-left", type=click.IntRange(0, 2), default=None, help="Rerolls left with DICE showing [default: 2]."
)
@_sheet_option("ones=3 full house=25")
@click.option("--sheet-file", metavar="FILE", default=None, help="The sheet as box=points text or JSON ('-': stdin).")
@RULES_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option(
    "--out", "out_path", metavar="FILE", default=None, help="Write the whole distribution (.parquet or .json)."
)
@click.option(
    "--target",
    "target_score",
    type=click.IntRange(0, 100_000),
    default=None,
    metavar="T",
    help="Also the highest chance of finishing with at least T points (needs `solve --targets`).",
)
@DATA_OPTION
def distribution(dice, rolls_left, sheet_text, sheet_file, rules_name, as_json, out_path, data, target_score) -> None:
    """The exact distribution of the final score under optimal play: mean, SD, percentiles and P(final >= t).

    From the start of a game, a sheet between turns (--sheet), or mid-turn with DICE showing
    (`pentadice distribution 1 1 3 4 6 --rolls-left 1 --sheet "ones=3"`). Exact: forward propagation, no sampling.
    """
    from pentadice.advisor import distribution as dist

    rs = rules.get_rules(rules_name)
    try:
        dist.check_rules(rs)
    except dist.DistributionError as e:
        raise click.UsageError(str(e)) from None
    sheet, dice_list, rolls_left = _distribution_input(rs, dice, rolls_left, sheet_text, sheet_file)
    target, kind = _distribution_target(out_path)
    if target_score is not None:
        _target_table(rs, data)  # missing or damaged: say so before any work
    try:  # too large (Maxi Yatzy from its first turns): refused before its value table is loaded or solved
        dist.check_size(rs, sheet)
    except dist.DistributionTooLarge as e:
        raise click.UsageError(str(e)) from None
    values = _load_advisor(rules_name, data, compiled=False).table.values
    if dist.needs_compiling(rs):  # a first run: say why nothing moves for a few seconds
        click.echo(dist.COMPILING_MESSAGE, err=True)
    try:
        result = dist.final_distribution(rs, values, sheet, dice_list, rolls_left)
    except dist.DistributionTooLarge as e:  # Maxi Yatzy from its first turns: refused as Kiriki is, with the sizes
        raise click.UsageError(str(e)) from None
    report = dist.report(rs, result, sheet, dice_list, rolls_left)
    if target_score is not None:
        report.update(_p_target_max(rs, data, sheet, dice_list, rolls_left, target_score))
    if target is not None:
        _distribution_write(target, rs, result, report, kind)
    if as_json:
        click.echo(json.dumps(report))
    else:
        for line in _distribution_lines(rs, report, out_path if target is not None else None):
            click.echo(line)
        if target_score is not None:
            click.echo(f"Target {target_score}: at most {100 * report['p_target_max']:.4f}% (playing for it)")


def _distribution_input(rs, dice, rolls_left, sheet_text, sheet_file):
    """``(sheet, dice or None, rolls_left or None)`` of ``distribution``, parsed as ``advise`` parses them."""
    from pentadice.game.sheet import Sheet
    from pentadice.game.situation import Situation, parse_dice

    if sheet_text is not None and sheet_file is not None:
        raise click.UsageError("give the sheet with --sheet or --sheet-file, not both")
    if rolls_left is not None and not dice:
        raise click.UsageError("--rolls-left goes with the DICE showing: give them, or leave --rolls-left out")
    try:
        sheet = _read_sheet_file(sheet_file, rs) if sheet_file else Sheet()
    except ValueError as e:  # the file is at fault, not the command line
        where = "" if sheet_file == "-" or sheet_file in str(e) else f"{sheet_file}: "
        raise exits.BadInput(f"{where}{e}") from None
    try:
        sheet = Sheet.parse(sheet_text, rs) if sheet_text else sheet
        if not dice:
            return sheet.validate(rs), None, None
        rolls_left = 2 if rolls_left is None else rolls_left
        situation = Situation.make(rs, parse_dice(rs, " ".join(dice)), rolls_left, sheet)
    except ValueError as e:  # a bad situation or sheet
        raise click.UsageError(str(e)) from None
    return situation.sheet, list(situation.dice), situation.rolls_left


def _distribution_target(out_path):
    """The checked ``--out`` file and its format (``parquet`` or ``json``), before any work; ``(None, None)``."""
    if out_path is None:
        return None, None
    from pentadice.advisor import distribution as dist
    from pentadice.tables import atomic

    try:
        kind = dist.file_kind(out_path)
        return atomic.target(out_path, replaces=dist.is_distribution_file), kind
    except (ValueError, atomic.TargetError) as e:  # TargetError is an OSError
        raise click.UsageError(str(e)) from None


def _distribution_write(target, rs, result, report, kind) -> None:
    from pentadice.advisor import distribution as dist

    meta = {k: v for k, v in report.items() if k != "tail"}
    try:
        dist.write(target, rs, result, meta, kind)
    except interrupts.CommittedInterrupt:
        raise exits.Interrupted(f"the distribution had been written to {target.given} already") from None
    except KeyboardInterrupt:
        raise exits.Interrupted(f"nothing was written; {target.given} is as it was") from None
    except OSError as e:
        raise exits.Failure(f"cannot write {target.given}: {e.strerror or e}") from None


def _distribution_lines(rs, report: dict, written: str | None) -> list[str]:
    """The human summary of ``distribution``."""
    filled = len(report["sheet"])
    where = "start of the game" if filled == 0 else f"{filled} boxes filled, {report['score_so_far']} points so far"
    if "dice" in report:
        where += f"; dice {' '.join(map(str, report['dice']))}, {report['rolls_left']} rerolls left"
    pct = report["percentiles"]
    lines = [
        f"{rs.title}: {where}; optimal (expected-score) play",
        f"Mean:          {report['mean']:.4f}",
        f"SD:            {report['sd']:.4f}",
        f"Range:         {report['min']} to {report['max']}",
        "Percentiles:   " + "  ".join(f"{q}%: {s}" for q, s in pct.items()),
        "P(final >= t):",
    ]
    tail = dict((int(t), p) for t, p in report["tail"])
    shown = [t for t in (100, 150, 200, 250, 300, 350, 400, 500, 600, 800, 1000) if report["min"] < t <= report["max"]]
    lines += [f"  {t:>5}  {_probability_text(tail[t])}" for t in shown]
    lines.append(f"Computed exactly (forward propagation) in {report['seconds']:.2f} s")
    if written:
        lines.append(f"Whole distribution written to {written}")
    return lines


@main.command()
@DATA_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def where(data: str | None, as_json: bool) -> None:
    """Which table directory the commands use, why, and which tables it holds."""
    from pentadice.tables import table

    directory, source = paths.locate(data)
    held = table.inventory(directory)
    if as_json:
        click.echo(json.dumps({"directory": str(directory), "source": source, "tables": held}))
        return
    why = {
        "--data": "given by --data",
        f"${paths.ENV_VAR}": f"from ${paths.ENV_VAR}",
        "checkout": "the data/ folder of this source checkout, where `make table` writes",
        "user": "your user data directory",
    }[source]
    click.echo(f"Table directory: {directory} ({why})")
    for name, state in held.items():
        click.echo(f"  {name:<22}{state}")
    if not directory.exists():
        click.echo("  (the directory does not exist yet: the first command that needs a table creates it)")


@main.command()
@RULES_OPTION
@DATA_OPTION
def verify(rules_name: str, data: str | None) -> None:
    """Check a table's files: the values against their SHA-256, the metadata against the values, and the
    Parquet export (each page's checksum, its SHA-256, and its rows against the values)."""
    from pentadice.tables import table, targets

    rs = rules.get_rules(rules_name)
    try:
        checked = table.verify(rs, paths.data_dir(data))
        spread = table.verify_moments(checked)
        target_files = targets.TargetFiles(checked.files.directory, rs.name)
        target_table = None
        if any(f.exists() for f in (target_files.data, target_files.index, target_files.meta)):
            target_table = targets.load(rs, checked.files.directory, verify=True)
        from pentadice.tables import win_tables

        win_tables = win_tables.verify_saved(rs, checked.files.directory, checked.values)
    except table.TableError as e:
        raise exits.Failure(str(e)) from None
    files, meta = checked.files, checked.meta
    click.echo(f"The {rs.name} table in {files.directory} is whole:")
    click.echo(f"  {files.values.name:<24}{meta['checksum']} (of the values)")
    click.echo(f"  {files.parquet.name:<24}{meta['parquet_checksum']} (of the file: compare with sha256sum)")
    click.echo(f"  {files.meta.name:<24}agrees with the values (expected score {meta['expected_score']:.10f})")
    if spread is None:
        from pentadice.solver import moments

        why = "the second moments (SDs) are computed when first needed"
        why = why if moments.automatic(rs) else moments.on_demand_message(rs)
        click.echo(f"  {files.moments.name:<24}missing: {why}")
    else:
        click.echo(f"  {files.moments.name:<24}{spread['checksum']} (second moments, SD {spread['sd_at_start']:.4f})")
    if target_table is None:
        click.echo(f"  {target_files.data.name:<24}not built (`pentadice solve --targets` builds the target table)")
    else:
        sums = f"{target_table.meta['data_checksum']} (target probabilities)"
        click.echo(f"  {target_files.data.name:<24}{sums}")
        click.echo(f"  {target_files.index.name:<24}{target_table.meta['index_checksum']} (their index)")
    for path, digest, current in win_tables:
        whose = "the win strategy's tables" if current else "win tables of another value table: built again when needed"
        click.echo(f"  {path.name:<24}{digest} ({whose})")


def _host_names(values: tuple[str, ...]) -> tuple[str, ...]:
    """``--allow-host`` values, each a host name or address alone (a usage error otherwise)."""
    from pentadice.faces.web.server import host_name

    try:
        return tuple(host_name(v) for v in values)
    except ValueError as e:
        raise click.BadParameter(str(e)) from None


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (0.0.0.0: every network).")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="Port (0: any free one).")
@click.option(
    "--rules",
    "rules_names",
    multiple=True,
    type=click.Choice([*rules.REGISTRY, "all"], case_sensitive=True),
    help="Rule set to serve, repeatable, or 'all' [default: penta and every rule set already solved].",
)
@DATA_OPTION
@click.option("--open", "open_browser", is_flag=True, help="Open the page in the browser once it is served.")
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    metavar="NAME",
    callback=lambda ctx, param, values: _host_names(values),
    help="Another name the page may be reached by (the Host a browser sends), repeatable; others are refused "
    "[served: localhost, loopback addresses, the --host given and the network address printed]. A host name "
    "or address alone (my.box, 192.168.1.5), any port: a URL is refused.",
)
def serve(
    host: str,
    port: int,
    rules_names: tuple[str, ...],
    data: str | None,
    open_browser: bool,
    allow_hosts: tuple[str, ...],
) -> None:
    """Serve the page (play, coach, review) and the JSON API (/openapi.json) over HTTP, until Ctrl-C."""
    from pentadice.faces.web import server
    from pentadice.tables import chunks

    chunks.use_private_copies()  # the server answers from tables in its own memory: nothing on disk changes them
    names = _served_rules(rules_names, data)
    try:
        sock = server.bind(host, port)  # a port in use is said before any table loads
    except server.BindError as e:
        raise (click.UsageError if e.usage else exits.Failure)(str(e)) from None
    with sock:
        advisors = {name: _load_advisor(name, data) for name in names}
        for advisor in advisors.values():
            _load_spread(advisor)  # the second moments too: checked and held now, never read from disk mid-game
        from pentadice.faces.web.advising import warm_up
        from pentadice.faces.web.api import create_app

        warm_up(advisors.values())
        app = create_app(advisors, allowed_hosts=server.allowed_hosts(host, allow_hosts))
        sock.listen(2048)
        address = sock.getsockname()
        url = server.url_of(host, address[1])
        click.echo(f"Serving {', '.join(names)} at {url} (API: {url}openapi.json). Ctrl-C stops it.")
        if not server.is_local(host):
            there = server.url_of(server.network_address(host), address[1])
            click.echo(
                f"The page is reachable from the network: on a phone on the same Wi-Fi, open {there} "
                "(anyone on the network can use it)."
            )
        sys.stdout.flush()

        def opened() -> None:
            import webbrowser

            webbrowser.open(url)

        try:
            server.run(app, sock, on_started=opened if open_browser else None)
        except KeyboardInterrupt:
            raise exits.Interrupted("the server stopped; the games it held are gone") from None


def _served_rules(given: tuple[str, ...], data: str | None) -> list[str]:
    """The rule sets to serve: those given ('all': every one), else penta and every one already solved."""
    if "all" in given:
        return list(rules.REGISTRY)
    if given:
        return list(dict.fromkeys(given))
    from pentadice.tables import table

    held = table.inventory(paths.data_dir(data))
    for name, state in held.items():  # a table there that cannot be used is left out, and said so
        if name != rules.DEFAULT_RULES and state.startswith("unusable"):
            click.echo(f"Not serving {name}: {state.removeprefix('unusable: ')}", err=True)
    return [n for n in rules.REGISTRY if n == rules.DEFAULT_RULES or held.get(n, "").startswith("solved")]


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

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)
        self.interrupt.__exit__(*exc)


# Target scores (pentadice/tables/targets.py does the work).


def _solve_targets(rs, data: str | None, threads: int | None, as_json: bool) -> None:
    """``solve --targets``: build the target table of ``rs`` and say what it cost."""
    from pentadice.tables import table, targets

    directory = paths.data_dir(data)
    reason = targets.kernel.refusal(rs)  # before the states are listed: Maxi Yatzy's are tens of millions
    if reason:
        raise click.UsageError(reason)
    try:
        table.prepare_directory(directory)
        bar = _progress(label=f"Targets of {rs.name}", length=len(targets.kernel.layers(rs)), enabled=not as_json)
        with bar, interrupts.Held() as interrupt:

            def progress(done: int, total: int) -> None:
                bar.update(1)
                interrupt.check()

            built, files, write_seconds = targets.timed_solve(rs, directory, threads, progress, interrupt.check)
    except table.TableError as e:
        raise exits.Failure(str(e)) from None
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    except interrupts.CommittedInterrupt:
        raise exits.Interrupted(f"the {rs.name} target table had been written whole to {directory} already") from None
    except KeyboardInterrupt:
        raise exits.Interrupted("no target table was written; the old one, if any, is as it was") from None
    if as_json:
        click.echo(json.dumps(targets.summary(rs, built, files, write_seconds)))
    else:
        click.echo("\n".join(targets.summary_lines(rs, built, files, write_seconds)))


def _target_table(rs, data: str | None):
    """The target table of ``rs`` (exit 1 with how to build it when it is missing or damaged, or saying that
    it is being built)."""
    from pentadice.tables import table, targets

    directory = paths.data_dir(data)
    try:
        return targets.load(rs, directory)
    except targets.TargetsMissing as e:
        if targets.build_in_progress(rs, directory):  # `solve --targets` holds its lock: not "run solve" again
            raise exits.Failure(targets.building_message(rs, directory)) from None
        raise exits.Failure(str(e)) from None
    except table.TableError as e:
        raise exits.Failure(str(e)) from None


def _p_target_max(rs, data, sheet, dice, rolls_left, target: int) -> dict:
    """``{"target": T, "p_target_max": P}`` for ``distribution --target T``."""
    from pentadice.tables import table, targets

    try:
        return {"target": target, "p_target_max": targets.p_target_max(rs, data, sheet, dice, rolls_left, target)}
    except table.TableError as e:
        raise exits.Failure(str(e)) from None


def _advise_target(advice, rs, target_table, target: int, top: int | None, as_json: bool) -> None:
    """``advise --target T``: the options ranked by the chance of finishing with at least T points."""
    from pentadice.tables import targets

    probabilities = targets.option_probabilities(target_table, advice, target)
    if as_json:
        click.echo(json.dumps(targets.advice_dict(advice, rs, probabilities, target, top)))
    else:
        click.echo(targets.advice_text(advice, rs, probabilities, target, top or 10))


def entry() -> None:
    """The ``pentadice`` console command (see :func:`pentadice.support.exits.run`)."""
    exits.run(main, prog_name="pentadice")


if __name__ == "__main__":
    entry()
