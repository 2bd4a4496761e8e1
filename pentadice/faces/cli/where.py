"""``pentadice where``: which table directory the commands use, why, and which tables it holds."""

from __future__ import annotations

import json

import click

from pentadice.faces.cli.options import DATA_OPTION
from pentadice.support import paths


@click.command()
@DATA_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def where(data: str | None, as_json: bool) -> None:
    """Which table directory the commands use, why, and which tables it holds."""
    from pentadice.tables.inventory import inventory

    directory, source = paths.locate(data)
    held = inventory(directory)
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
