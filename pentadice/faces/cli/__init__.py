"""The ``pentadice`` command: a module per subcommand, each parsing its arguments and formatting its results;
the work is done by importable code in the layers below (the same functions serve the web API).

Heavy imports (Numba, pyarrow) happen inside the commands that need them, so quick commands start fast.
"""

from __future__ import annotations

import click

from pentadice.faces.cli import advise, distribution, play, review, serve, simulate, solve, verify, where
from pentadice.support import exits


@click.group(cls=exits.Command, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="pentadice")
def main() -> None:
    """Exact optimal strategy for Penta and the Yahtzee family of dice games."""


COMMANDS = (
    solve.solve,
    advise.advise,
    play.play,
    review.review,
    simulate.simulate,
    distribution.distribution,
    where.where,
    verify.verify,
    serve.serve,
)
for command in COMMANDS:
    main.add_command(command)


def entry() -> None:
    """The ``pentadice`` console command (see :func:`pentadice.support.exits.run`)."""
    exits.run(main, prog_name="pentadice")
