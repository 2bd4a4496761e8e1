"""``pentadice history``: the finished games of the games database (the page's, the API's and ``play``'s) and each
player's statistics; ``--json`` for programs, ``--out FILE.parquet`` for analysts.

It only reads: the database is opened read-only (never made, migrated or changed; one on a read-only mount is
read), and ``--out`` replaces only a previous export. Names and every other text from the database are printed
without control or invisible characters, escaped (:func:`visible`)."""

from __future__ import annotations

import json

import click

from pentadice.faces.cli.options import DB_OPTION, RuleSetParam
from pentadice.support import exits
from pentadice.support.inputs import unsafe_char


@click.command()
@DB_OPTION
@click.option("--player", default=None, metavar="NAME", help="Only the games of the player of this name.")
@click.option(
    "--rules", "rules_name", type=RuleSetParam(), default=None, help="Only the games of these rules (a name or a file)."
)
@click.option("--limit", type=click.IntRange(1, 1000), default=20, show_default=True, help="Finished games listed.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object: games, players (and the player's games).")
@click.option(
    "--out",
    metavar="FILE.parquet",
    default=None,
    help="Write every finished player's result to a Parquet file (one row a player of a game), then stop.",
)
def history(db: str | None, player: str | None, rules_name: str | None, limit: int, as_json: bool, out: str | None):
    """The finished games, the latest first, and each player's statistics: games, wins, mean and best score, and
    the mean loss per decision of the review (below 0.2 points is expert play)."""
    from pentadice.storage import history as kept
    from pentadice.storage.database import StorageError, open_database
    from pentadice.tables.atomic import TargetError

    if out is not None:
        if not out.strip():
            raise click.BadParameter("is empty: give a file name, e.g. games.parquet", param_hint="'--out'")
        try:
            kept.export_target(out)  # before the database is read: a file it may not replace is said first
        except TargetError as e:
            raise exits.Failure(visible(not_written(out, e))) from None
    try:
        database = open_database(db, read_only=True)
    except StorageError as e:
        raise exits.Failure(e.message) from None
    try:
        if out is not None:
            try:
                rows = kept.export(database, out)
            except TargetError as e:
                raise exits.Failure(visible(not_written(out, e))) from None
            except OSError as e:
                raise exits.Failure(visible(f"cannot write {out}: {e.strerror or e}")) from None
            click.echo(visible(f"Wrote {rows:,} results of finished games to {out}"))
            return
        games = kept.finished_games(database, limit, 0, player, rules_name)
        stats = kept.player_stats(database, player, rules_name)
        series = kept.player_series(database, player, rules_name) if player is not None else None
    except StorageError as e:
        raise exits.Failure(e.message) from None
    finally:
        database.close()
    if as_json:
        answer = {"database": database.where, **games, "players": stats, "expert_mean_loss": kept.EXPERT_MEAN_LOSS}
        if series is not None:
            answer["player_games"] = series
        click.echo(json.dumps(answer))
        return
    _print(database.where, games, stats, player, rules_name)


def not_written(out: str, e: OSError) -> str:
    """The one line of a target refused: ``cannot write OUT: ...`` (the file named once)."""
    text = str(e)
    if text.startswith("cannot write"):
        return text
    if text.startswith(out):
        text = "it" + text[len(out) :]
    return f"cannot write {out}: {text}"


def visible(text: str) -> str:
    """``text`` as it may be printed: each control, bidirectional or invisible character (a newline, ESC, a
    zero-width space) written as its escape (``\\n``, ``\\x1b``, ``\\u200b``), so that a name can neither
    forge a line nor pass for another."""
    from pentadice.players.seats import name_key

    def shown(c: str) -> str:
        if unsafe_char(c) or (not c.isspace() and name_key(c) == "" and c != ""):
            return c.encode("unicode_escape").decode("ascii")
        return c

    return "".join(shown(c) for c in text)


def _echo(line: str) -> None:
    """A line of the listing, every text from the database in it escaped (:func:`visible`)."""
    click.echo(visible(line))


def _print(where: str, games: dict, stats: list[dict], player: str | None, rules_name: str | None) -> None:
    if not games["total"]:
        if player is None and rules_name is None:
            _echo(f"No finished games yet in {where}: play one (pentadice play, or the page of pentadice serve).")
        elif player is None:
            _echo(f"No finished {rules_name} games in {where}.")
        else:
            kind = f"{rules_name} game" if rules_name else "game"
            _echo(f"No finished {kind} in {where} has a player named {player}.")
        return
    shown = len(games["games"])
    _echo(f"Finished games in {where}: {games['total']:,} (the latest {shown} shown)")
    for g in games["games"]:
        when = g["finished"][:16].replace("T", " ")
        seats = ", ".join(f"{p['name']} {p['score']}" for p in g["players"])
        _echo(f"  {when}  {g['rules']:<14} {seats}  won: {', '.join(g['winners'])}  [{g['id']}]")
    click.echo("")
    click.echo(f"{'player':<20} {'rules':<14} {'games':>5} {'wins':>5} {'mean':>7} {'best':>5} {'loss/decision':>14}")
    for s in stats:
        loss = "-" if s["mean_loss"] is None else f"{s['mean_loss']:.3f}" + (" expert" if s["expert"] else "")
        name = s["name"] + (" (computer)" if s["computer"] else "")
        _echo(
            f"{name:<20} {s['rules']:<14} {s['games']:>5} {s['wins']:>5} {s['mean_score']:>7.1f} "
            f"{s['best_score']:>5} {loss:>14}"
        )
