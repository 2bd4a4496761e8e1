"""What several commands parse alike: the shared options (--rules, --data, --lang, --sheet), a positive number
(:class:`PositiveNumber`), the box names of the help, and a sheet or dice read from a file or standard input."""

from __future__ import annotations

import math
import sys

import click

from pentadice.game import rule_files, rules
from pentadice.support import exits, paths


class RuleSetParam(click.ParamType):
    """``--rules``: a rule set's name, or a house-rules file (TOML or JSON: docs/house-rules.md), read, checked and
    registered under its own name (:func:`pentadice.game.rule_files.resolve`); the value is the rule set's name. A
    file that cannot be read or defines no rule set is a usage error naming the file and the problem."""

    name = "NAME|FILE"

    def __init__(self, also: tuple[str, ...] = ()) -> None:
        self.also = also  # further words taken as they are (serve's "all")

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = str(value)
        if text in self.also:
            return text
        try:
            return rule_files.resolve(text).name
        except ValueError as e:
            self.fail(str(e), param, ctx)

    def shell_complete(self, ctx: click.Context, param: click.Parameter, incomplete: str) -> list:
        from click.shell_completion import CompletionItem

        names = [CompletionItem(n) for n in (*rules.REGISTRY, *self.also) if n.startswith(incomplete)]
        return names or [CompletionItem(incomplete, type="file")]  # not a name: the shell completes a file


RULES_HELP = f"Rule set: {', '.join(rules.BUILT_IN)}, or a house-rules file (.toml or .json; see `pentadice rules`)."
RULES_OPTION = click.option(
    "--rules",
    "rules_name",
    type=RuleSetParam(),
    default=rules.DEFAULT_RULES,
    show_default=True,
    help=RULES_HELP,
)


def _folder(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``--data`` given but blank names no folder: a usage error, not the default table directory."""
    if value is not None and not value.strip():
        raise click.BadParameter(f"{value!r} names no folder: give a table directory, or leave --data out")
    return value


DATA_OPTION = click.option(
    "--data", default=None, type=click.Path(file_okay=False), callback=_folder, help=paths.DEFAULT_HELP
)


def _database(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``--db`` checked as the storage layer checks it (:func:`pentadice.storage.check_where`): a usage error
    for an empty value or an in-memory database."""
    from pentadice.storage import check_where

    if value is not None:
        try:
            check_where(value)
        except ValueError as e:
            raise click.BadParameter(f"the games database {value!r} {e}") from None
    return value


DB_OPTION = click.option(
    "--db",
    "db",
    default=None,
    metavar="PATH|URL",
    callback=_database,
    help="The games database: a SQLite file's path, or a postgresql://USER@HOST/NAME URL [default: $PENTADICE_DB, "
    "else games.sqlite3 in the user's data directory, ~/.local/share/pentadice].",
)


def open_games_database(where: str | None, create: bool = True):
    """The games database of ``--db`` (see :func:`pentadice.storage.database.open_database`; ``create``: made
    if missing); a Failure naming the problem when it cannot be opened, reached or used."""
    from pentadice.storage.database import StorageError, open_database

    try:
        return open_database(where, create=create)
    except StorageError as e:
        raise exits.Failure(e.message) from None


class PositiveNumber(click.ParamType):
    """A finite number greater than 0 and at most ``maximum`` (days, seconds): ``nan``, ``inf``, 0 and negative
    numbers are refused, the problem named (click's FloatRange lets ``nan`` through: no comparison is true of it);
    with ``minimum`` (``(number, what it is)``), one below it too (``1e-300`` days: 0 in all but name)."""

    name = "NUMBER"

    def __init__(self, maximum: float, unit: str = "", minimum: tuple[float, str] | None = None) -> None:
        self.maximum = maximum
        self.unit = unit
        self.minimum = minimum

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> float:
        least = self.minimum[0] if self.minimum else 0.0
        if isinstance(value, float) and math.isfinite(value) and 0 < value <= self.maximum and value >= least:
            return value
        try:
            number = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number", param, ctx)
        unit = f" {self.unit}" if self.unit else ""
        if math.isnan(number):
            self.fail(f"{value!r} is not a number: give one greater than 0, at most {self.maximum:g}{unit}", param, ctx)
        if math.isinf(number):
            self.fail(f"{value!r} is not a finite number: give one at most {self.maximum:g}{unit}", param, ctx)
        if number <= 0:
            self.fail(f"{value!r} is not greater than 0", param, ctx)
        if number > self.maximum:
            self.fail(f"{value!r} is more than {self.maximum:g}{unit}", param, ctx)
        if self.minimum and number < self.minimum[0]:
            self.fail(f"{value!r} is less than {self.minimum[1]} ({self.minimum[0]:.4g}{unit})", param, ctx)
        return number

    def __repr__(self) -> str:
        return f"PositiveNumber({self.maximum:g})"


MAX_TARGET = 100_000  # --target above this is refused as a typo (pentadice.advisor.reach.MAX_TARGET, unimported)


def target_option(*names: str, help: str):
    """``--target T``, a final score from 0 to :data:`MAX_TARGET` (``names``: its parameter's name, if not
    ``target``)."""
    return click.option("--target", *names, type=click.IntRange(0, MAX_TARGET), default=None, metavar="T", help=help)


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


def rolls_left_option(what: str):
    """``--rolls-left N`` (0 to 2), None when not given: the first roll's of the rule set, which only the command
    knows once it has read ``--rules`` (``what``: the help's first words)."""
    return click.option(
        "--rolls-left",
        type=click.IntRange(0, 2),
        default=None,
        help=f"{what} [default: the first roll's: 2 in a game of 3 rolls].",
    )


def joined_sheets(given: tuple[str, ...]) -> str | None:
    """``--sheet`` given more than once: the boxes of all of them, as one sheet (a box given twice is refused
    by the sheet's parser, as within one ``--sheet``); None if not given."""
    return " ".join(given) if given else None


def sheet_option(example: str):
    """``--sheet``, repeatable (:func:`joined_sheets`), its help with ``example``."""
    return click.option(
        "--sheet",
        "sheet_text",
        multiple=True,
        callback=lambda ctx, param, value: joined_sheets(value),
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

SHEET_FILE_LIMIT = 64 * 1024


def read_sheet_file(path: str, rs):
    """The sheet of ``--sheet-file`` (``-``: standard input); ValueError if it is not a sheet of ``rs``."""
    from pentadice.game.sheet import Sheet
    from pentadice.support import inputs

    if path == "-":
        return Sheet.read(read_stdin("the sheet", SHEET_FILE_LIMIT), rs)
    return Sheet.read(inputs.read_text(path, "the sheet file", SHEET_FILE_LIMIT), rs)


def given_sheet(rs, sheet_text: str | None, sheet_file: str | None):
    """The sheet of ``--sheet`` or ``--sheet-file`` (an empty one if neither), as ``advise`` and
    ``distribution`` read it: a bad file is a bad input (exit 2, naming the file), a bad ``--sheet`` a usage
    error."""
    from pentadice.game.sheet import Sheet

    try:
        sheet = read_sheet_file(sheet_file, rs) if sheet_file else Sheet()
    except ValueError as e:  # the file is at fault, not the command line
        where = "" if sheet_file == "-" or sheet_file in str(e) else f"{sheet_file}: "
        raise exits.BadInput(f"{where}{e}") from None
    try:
        return Sheet.parse(sheet_text, rs) if sheet_text else sheet
    except ValueError as e:  # a bad sheet
        raise click.UsageError(str(e)) from None


def read_stdin(what: str, limit: int) -> str:
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
