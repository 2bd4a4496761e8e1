"""``pentadice play``: a game in the terminal (:mod:`pentadice.faces.terminal` draws it), new or resumed from
a save file."""

from __future__ import annotations

import contextlib
import sys
from datetime import UTC, datetime

import click

from pentadice.faces.cli import loading
from pentadice.faces.cli.options import DATA_OPTION, DB_OPTION, LANG_OPTION, RULES_OPTION
from pentadice.game import rules
from pentadice.support import exits, paths


@click.command()
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
@DB_OPTION
@LANG_OPTION
@click.pass_context
def play(ctx, players, seed, hints, rules_name, auto_commit, pause, show_chances, save_path, resume, data, db) -> None:
    """Play Penta in the terminal, against the computer or each other. A finished game is kept in the history
    (`pentadice history`)."""
    from click.core import ParameterSource

    from pentadice.faces.terminal import LineInput, TerminalGame, check_save_path
    from pentadice.players.engine import Game, GameError, parse_auto_commit, parse_players
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
        game, hints = _resumed_game(resumed, given, seconds, hints)
        save = save or resumed
    else:
        try:
            game = Game(rules.get_rules(rules_name), parse_players(players), seed, seconds, tables=paths.data_dir(data))
        except ValueError as e:  # GameError is one
            raise click.UsageError(str(e)) from None
    if save is not None:
        try:
            check_save_path(save)
        except GameError as e:
            raise click.BadParameter(str(e), param_hint="--save") from None
    advisor = loading.load_advisor(game.rules.name, data, compiled=False)
    if pause is None:
        pause = 0.6 if sys.stdout.isatty() else 0.0
    at_terminal = sys.stdout.isatty()
    show_chances = at_terminal if show_chances is None else show_chances
    loading.ready_for_game(advisor, game, show_chances and len(game.players) > 1)
    inp = LineInput(sys.stdin, echo=sys.stdout)
    front = TerminalGame(game, advisor, inp, click.echo, hints, pause, save, resumed, show_chances, not at_terminal)
    started = datetime.now(UTC)
    over_already = game.over  # a finished save resumed: recorded when it finished, not again
    _run(front)
    if game.over and not over_already:
        _record(game, advisor, db, started)


def _record(game, advisor, where: str | None, started: datetime) -> None:
    """Keep a finished game in the history, with each player's review; a database that fails is said (the game
    itself is over, and saved where --save said), and the command still succeeds."""
    from pentadice.players.review import review
    from pentadice.storage.database import StorageError, open_database
    from pentadice.storage.games import GameRecords, results_of

    try:
        database = open_database(where)
        try:
            records = GameRecords(database, type(game), expire=False)  # the server removes idle games, not play
            records.add(game, "terminal", results_of(game, review(game, advisor)), started)
        finally:
            database.close()
    except StorageError as e:
        click.echo(f"Warning: the game was not kept in the history: {e.message}", err=True)


def _resumed_game(resumed, given, seconds: float | None, hints: bool):
    """``(game, hints)`` of ``play --resume``: the saved game (its players, rules and dice, so none of them may be
    given), with the --auto-commit and --hints given now."""
    from pentadice.faces.save_files import load_game
    from pentadice.players.engine import GameError
    from pentadice.support.inputs import clean

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
    return game, hints


def _run(front) -> None:
    """Play the game to its end; Ctrl-C, SIGTERM, SIGHUP or a terminal gone keep it as it stood."""
    import signal

    from pentadice.players.engine import GameError

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
