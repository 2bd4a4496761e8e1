"""``pentadice rules``: the rule sets by name, and one rule set written out as a house-rules file to start from
(or a house-rules file checked and shown as it is read)."""

from __future__ import annotations

import json

import click

from pentadice.faces.cli.options import RuleSetParam
from pentadice.game import rules as game_rules  # (the command is `rules`)


@click.command()
@click.argument("rule_set", required=False, type=RuleSetParam())
def rules(rule_set: str | None) -> None:
    """Without RULE_SET, list the rule sets. With one (a name, or a house-rules file, which is then checked),
    print it as a JSON rules file: give it a name of its own, change what your house plays differently, and
    pass the file to any command's --rules (docs/house-rules.md)."""
    if rule_set is None:
        for name, rs in game_rules.REGISTRY.items():
            click.echo(f"{name:<22}{rs.title} ({rs.dice} dice, {len(rs.boxes)} boxes)")
        click.echo(
            "\nHouse rules: `pentadice rules yatzy > house.json`, give it a name of its own and change what you play "
            "differently, then `--rules house.json` (docs/house-rules.md)."
        )
        return
    from pentadice.game import rule_files

    click.echo(json.dumps(rule_files.definition(game_rules.get_rules(rule_set)), indent=1))
