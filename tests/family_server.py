"""``python tests/family_server.py PORT [YATZY_DIR]``: the real application (page and API) serving Yatzy (its solved
table; read from ``YATZY_DIR`` where :func:`saved_yatzy` saved it, else solved here) and a 6-dice game under the
name ``maxi-yatzy`` (Maxi Yatzy's sheet cut to nine boxes, threshold 75: solved here in seconds, where the real
table takes minutes and 640 MB), for the browser tests."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import reduced_games

from pentadice.advisor import Advisor
from pentadice.game import rules
from pentadice.solver import induction
from pentadice.tables import moment_files, table


def six_dice_game() -> rules.RuleSet:
    """Maxi Yatzy's rules (6 dice, threshold 75) on nine of its boxes."""
    return reduced_games.GAMES["maxi-yatzy, 9 boxes"]


def advisor(rs: rules.RuleSet, directory: Path | None = None) -> Advisor:
    """The advisor of ``rs``, solved here and saved in ``directory`` (a temporary one if None), as served."""
    directory = Path(tempfile.mkdtemp(prefix="pentadice-family-")) if directory is None else directory
    values = induction.solve(rs).values
    table.save(rs, values, directory)
    moment_files.build_moments(rs, directory, values)  # the spread the advice shows, built before the first request
    return Advisor(table.load(rs, directory))


_saved: list[Path] = []  # saved_yatzy's directory, once made


def saved_yatzy(tmp_path_factory) -> Path:
    """A directory holding Yatzy's table and second moments as :func:`advisor` saves them, from the test session's
    solve (tests/solutions.py): built once per session for the in-process app and the family server (the second
    moments take seconds), rather than solved and built again by each."""
    if not _saved:
        from solutions import solved

        rs = rules.get_rules("yatzy")
        directory = tmp_path_factory.mktemp("family-yatzy")
        values = solved("yatzy").values
        table.save(rs, values, directory)
        moment_files.build_moments(rs, directory, values)
        _saved.append(directory)
    return _saved[0]


def loaded(rs: rules.RuleSet, directory: Path) -> Advisor:
    """The advisor of ``rs`` from the tables saved in ``directory`` (:func:`saved_yatzy`), as served."""
    return Advisor(table.load(rs, directory))


def main() -> None:
    from pentadice.faces.web import (
        addresses,
        server,  # the web extra: only the server needs it
    )
    from pentadice.faces.web.advising import warm_up
    from pentadice.faces.web.api import create_app

    port = int(sys.argv[1])
    yatzy = rules.get_rules("yatzy")
    saved = Path(sys.argv[2]) if len(sys.argv) > 2 else None
    advisors = {
        "yatzy": advisor(yatzy) if saved is None else loaded(yatzy, saved),
        "maxi-yatzy": advisor(six_dice_game()),
    }
    warm_up(advisors.values())  # as `pentadice serve` does: the first request loads no compiled code
    server.run(create_app(advisors), addresses.bind("127.0.0.1", port))


if __name__ == "__main__":
    main()
