"""``pentadice review``: how well a saved game was played (:mod:`pentadice.players.review` judges it,
:mod:`pentadice.faces.review_text` words it)."""

from __future__ import annotations

import json

import click

from pentadice.faces.cli import loading
from pentadice.faces.cli.options import DATA_OPTION, LANG_OPTION, RuleSetParam, read_stdin
from pentadice.support import exits, paths


@click.command()
@click.argument("save_file", metavar="SAVE.json")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option(
    "--rules",
    "rules_file",
    type=RuleSetParam(),
    default=None,
    metavar="FILE",
    help="The house-rules file of a game of house rules (the save names its rule set; a built-in one is known).",
)
@DATA_OPTION
@LANG_OPTION
def review(save_file: str, as_json: bool, rules_file: str | None, data: str | None) -> None:
    """How well a saved game was played: each decision against the best option and the expected points it
    lost, and for each player the total, the mean per decision (under 0.2: expert play) and the worst three.

    SAVE.json is a game saved by `pentadice play --save` (or by the web page); its rule set is used (with
    --rules FILE for house rules, read before the save). '-': standard input.
    """
    from pentadice.faces.review_text import review_lines
    from pentadice.faces.save_files import load_game
    from pentadice.players.engine import MAX_SAVE_BYTES, Game, GameError
    from pentadice.players.review import review as review_game
    from pentadice.support.inputs import clean

    try:
        if save_file == "-":
            game = Game.from_json(read_stdin("the saved game", MAX_SAVE_BYTES))
        else:
            game = load_game(paths.expand(save_file))
    except paths.PathError as e:
        raise click.UsageError(str(e)) from None
    except GameError as e:  # one line, no usage banner: the file is at fault, not the command line
        raise exits.BadInput(clean(str(e))) from None
    advisor = loading.load_advisor(game.rules.name, data, compiled=False)
    result = review_game(game, advisor)
    if as_json:
        click.echo(json.dumps(result.as_dict()))
        return
    for line in review_lines(result, game.rules):
        click.echo(line)
