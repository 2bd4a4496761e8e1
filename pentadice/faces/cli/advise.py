"""``pentadice advise``: the options of one situation (the advisor's, or ranked for a target score), or of a
file of situations, one JSON line each (``--batch``)."""

from __future__ import annotations

import json
import sys

import click

from pentadice.faces.cli import loading
from pentadice.faces.cli.options import (
    BOX_NAMES_HELP,
    DATA_OPTION,
    LANG_OPTION,
    RULES_OPTION,
    given_sheet,
    read_stdin,
    rolls_left_option,
    sheet_option,
    target_option,
)
from pentadice.game import rules
from pentadice.support import exits


@click.command(epilog=BOX_NAMES_HELP)
@click.argument("dice", nargs=-1)
@rolls_left_option("Rerolls left (0: last roll)")
@sheet_option("ones=3 full house=25 penta=50 penta_bonus=100")
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
@target_option(help="Rank the options by the chance of finishing with at least T points (needs `solve --targets`).")
@DATA_OPTION
@LANG_OPTION
def advise(dice, rolls_left, sheet_text, sheet_file, rules_name, top, as_json, batch, data, target) -> None:
    """Which dice to keep or which box to fill, and what every option is worth.

    DICE are the dice showing, five (six under --rules maxi-yatzy): `pentadice advise 1 1 3 4 6`, `pentadice
    advise 13346`, or on standard input (`echo 1 1 3 4 6 | pentadice advise`). Alone, they are the first roll
    of a new game.
    """
    from pentadice.advisor import Situation
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
        dice = (read_stdin("the dice", 4096),)
    sheet = given_sheet(rs, sheet_text, sheet_file)
    try:
        rolls_left = rs.rolls - 1 if rolls_left is None else rolls_left
        situation = Situation.make(rs, parse_dice(rs, " ".join(dice)), rolls_left, sheet)
    except ValueError as e:  # a bad situation
        raise click.UsageError(str(e)) from None
    from pentadice.advisor.explain import explain
    from pentadice.faces.words import advice_text

    # The target table refused or missing: said before any solve.
    target_table = loading.target_table(rs, data) if target is not None else None
    advisor = loading.load_advisor(rules_name, data, compiled=False)
    loading.load_spread(advisor)
    advice = advisor.advise(situation)
    if target_table is not None:
        _advise_target(advice, rs, target_table, target, top, as_json)
        return
    why = explain(advisor, advice)
    if as_json:
        click.echo(json.dumps({**advice.as_dict(rs, top), "why": why.as_dict() if why else None}))
    else:
        click.echo(advice_text(advice, rs, top or 10, why))


def _advise_target(advice, rs, target_table, target: int, top: int | None, as_json: bool) -> None:
    """``advise --target T``: the options ranked by the chance of finishing with at least T points."""
    from pentadice.advisor import reach

    probabilities = reach.option_probabilities(target_table, advice, target)
    if as_json:
        click.echo(json.dumps(reach.advice_dict(advice, rs, probabilities, target, top)))
    else:
        click.echo(reach.advice_text(advice, rs, probabilities, target, top or 10))


def _advise_batch(path: str, rules_name: str, top: int | None, data: str | None) -> None:
    """One JSON situation a line in, one JSON advice a line out, in order, as they come; a bad line is reported
    with its number (on standard error, and as an error object in its place) and the run goes on."""
    from pentadice.advisor.batch_io import BatchInputError, LineReader, answer_texts

    try:
        stream = sys.stdin.buffer if path == "-" else open(path, "rb")  # noqa: SIM115  (closed below)
    except OSError as e:
        raise exits.BadInput(f"cannot read {path}: {e.strerror or e}") from None
    advisor = loading.load_advisor(rules_name, data)
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
