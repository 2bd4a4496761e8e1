"""The ``pentadice`` command: a module per subcommand, each parsing its arguments and formatting its results;
the work is done by importable code in the layers below (the same functions serve the web API).

A command's module is imported when that command runs (or ``--help`` lists them all), and heavy imports (Numba,
pyarrow) happen inside the commands that need them, so a quick command starts with its own imports alone.
"""

from __future__ import annotations

import importlib

import click

from pentadice.support import exits

# Each command and the module of pentadice.faces.cli that defines it (a function of the command's name).
COMMANDS = {
    "solve": "solve",
    "advise": "advise",
    "play": "play",
    "review": "review",
    "simulate": "simulate",
    "distribution": "distribution",
    "where": "where",
    "verify": "verify",
    "serve": "serve",
    "history": "history",
    "backup": "backup",
    "export-app": "export_app",
    "build": "build",
    "rules": "rule_sets",
}


class Commands(exits.Command):
    """The group of :data:`COMMANDS`, each loaded from its module on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        module = COMMANDS.get(name)
        if module is None:
            return None
        return getattr(importlib.import_module(f"{__name__}.{module}"), name.replace("-", "_"))


@click.group(cls=Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="pentadice")
def main() -> None:
    """Exact optimal strategy for Penta and the Yahtzee family of dice games."""


def entry() -> None:
    """The ``pentadice`` console command (see :func:`pentadice.support.exits.run`)."""
    exits.run(main, prog_name="pentadice")
