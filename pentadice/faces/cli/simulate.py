"""``pentadice simulate``: solitaire games played by a strategy (:mod:`pentadice.simulator.simulate`), or games
between computer players (``--players``: :mod:`pentadice.simulator.multiplayer`); the summary as text or JSON."""

from __future__ import annotations

import functools
import json
import os
import time

import click

from pentadice.faces.cli import loading
from pentadice.faces.cli.options import DATA_OPTION, RULES_OPTION
from pentadice.game import rules
from pentadice.support import exits, interrupts, paths


@click.command()
@click.option("-n", "--games", type=click.IntRange(min=1), required=True, help="Number of games.")
@click.option("--seed", type=click.IntRange(min=0), default=None, help="Seed: the same seed gives the same games.")
@click.option(
    "--strategy",
    type=click.Choice(["optimal", "greedy"]),
    default="optimal",
    show_default=True,
    help="optimal: by the solved table; greedy: the most points this turn.",
)
@RULES_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option(
    "--out", type=click.Path(dir_okay=False), default=None, help="Write one row per game to this Parquet file."
)
@click.option(
    "--players",
    default=None,
    metavar="S1,S2,...",
    help="Play multiplayer games between these strategies (optimal, win; 2 to 6) and report win rates.",
)
@DATA_OPTION
@click.pass_context
def simulate(ctx, games, seed, strategy, rules_name, as_json, out, players, data) -> None:
    """Play N solitaire games with a strategy and summarise the scores; with --players, N games between
    computer players (seats rotated game by game) and each strategy's win rate."""
    from pentadice.simulator import simulate as sim
    from pentadice.tables import atomic

    if players is not None:
        _simulate_players(ctx, games, seed, rules_name, as_json, out, players, data)
        return

    try:  # what can fail before the games is checked before them
        target = atomic.target(out, stream_ok=True, replaces=sim.is_games_file) if out else None
    except atomic.TargetError as e:
        raise click.UsageError(str(e)) from None
    advisor = loading.load_advisor(rules_name, data, compiled=False)  # the simulator's own kernels play the games
    with interrupts.Held():
        if sim.needs_compiling(advisor.rules):  # a first run: say why nothing moves for a few seconds
            click.echo("Compiling the simulator (first run only)...", err=True)
        sim.compile_seconds(advisor.rules)
    seed = sim.fresh_seed() if seed is None else seed
    tally = sim.Tally(advisor.rules)
    bar = loading.progress(label=f"Playing {games:,} games", length=games, enabled=not as_json)
    start = time.perf_counter()
    summary = functools.partial(_simulate_summary, tally, advisor, strategy, seed, as_json, target)
    try:
        with bar:
            sim.run(advisor.table, games, seed, strategy, tally, bar.update, target)
    except interrupts.CommittedInterrupt:
        summary(time.perf_counter() - start, out)
        raise exits.Interrupted(f"the games had been written to {out} already") from None
    except KeyboardInterrupt:
        if tally.games:  # what was played is summed up all the same
            summary(time.perf_counter() - start, None)
        kept = (
            f"the summary above is of the {tally.games:,} games played of {games:,}"
            if tally.games
            else f"stopped before any of the {games:,} games was played"
        )
        if target is None:
            raise exits.Interrupted(kept) from None
        if target.streamed:
            raise exits.Interrupted(f"{kept}; the games on {target.given} are cut short") from None
        raise exits.Interrupted(f"{kept}; no games were written, {out} is as it was") from None
    except OSError as e:
        if target is not None and target.path is None:  # the games go to standard output: closed (quiet) or full
            raise exits.stdout_failure(e) from None
        raise exits.Failure(f"cannot write {out}: {e.strerror or e}") from None
    try:
        summary(time.perf_counter() - start, out)
    except KeyboardInterrupt:
        raise exits.Interrupted(f"the games were written to {out}" if out else "stopped") from None


def _simulate_players(ctx, games, seed, rules_name, as_json, out, players, data) -> None:
    """``simulate --players``: the games are played by pentadice.simulator.multiplayer."""
    from click.core import ParameterSource

    from pentadice.simulator import multiplayer as mp
    from pentadice.simulator import simulate as sim

    if ctx.get_parameter_source("strategy") is not ParameterSource.DEFAULT:
        raise click.UsageError("--strategy is for solitaire games; with --players each player names its strategy")
    if out is not None:
        raise click.UsageError("--out writes solitaire games; it cannot be used with --players")
    try:
        names = mp.parse_players(players, rules.get_rules(rules_name), paths.data_dir(data))
    except mp.PlayersError as e:
        raise click.UsageError(str(e)) from None
    advisor = loading.load_advisor(rules_name, data, compiled=False)
    with interrupts.Held():
        if mp.needs_compiling(advisor.rules):
            click.echo("Compiling the multiplayer simulator (first run only)...", err=True)
        mp.compile_seconds(advisor.rules)
    directory = getattr(getattr(advisor.table, "files", None), "directory", None)
    if "win" in names:
        click.echo(_win_tables_message(advisor.rules, directory), err=True)
    seed = sim.fresh_seed() if seed is None else seed
    bar = loading.progress(label=f"Playing {games:,} games", length=games, enabled=not as_json)
    try:
        with bar:
            result = mp.simulate_players(advisor.table, names, games, seed, bar.update)
    except KeyboardInterrupt:
        kept = _win_tables_kept(advisor.rules, directory) if "win" in names else ""
        raise exits.Interrupted(f"stopped: no games are summed up{kept}") from None
    if as_json:
        click.echo(json.dumps(result))
        return
    for line in mp.summary_lines(result, advisor.rules):
        click.echo(line)


def _win_table_files(rs: rules.RuleSet, directory) -> tuple[list, int]:
    """The win strategy's table files whole in ``directory``, and how many there are when all are there."""
    from pentadice.players import win
    from pentadice.tables import win_tables

    return win_tables.saved_whole(rs, directory, win.ENDGAME_BOXES)


def _win_tables_message(rs: rules.RuleSet, directory) -> str:
    """What happens before the games of ``simulate --players ...win...``: the tables read, or built (and
    whether they are saved for later runs). No time is quoted: the summary gives the seconds it took."""
    from pentadice.players import win
    from pentadice.tables import win_store, win_tables

    if win.too_large(rs) and directory is not None and win_store.finished_meta(rs, directory) is not None:
        store = win_store.Store(directory, rs.name)
        size = store.array.stat().st_size / 1e9
        return f"Reading the win strategy's tables built out of core, {store.root} ({size:,.2f} GB, checked)..."
    found, wanted = _win_table_files(rs, directory)
    if directory is not None and len(found) == wanted:
        return f"Reading the win strategy's tables from {directory} (built again if damaged or not this table's)..."
    theta = directory is not None and win_tables.saved_paths(rs, directory, win_tables.THETA_KIND)[0] in found
    what = (
        "the end-game table (the theta tables read from the table directory, unless damaged or not this table's)"
        if theta
        else ("a backward solve per theta" + ("" if wanted == 1 else ", then the end-game table"))
    )
    if directory is not None and os.access(directory, os.W_OK):
        saved = f"saved in {directory} for later runs"
    else:
        saved = "not saved: the table directory cannot be written, so every run builds them"
    return f"Building the win strategy's tables: {what}; {saved}..."


def _win_tables_kept(rs: rules.RuleSet, directory) -> str:
    """What an interrupted ``simulate --players ...win...`` leaves on disk of the win strategy's tables."""
    found, _ = _win_table_files(rs, directory)
    if not found:
        return "; no table of the win strategy was saved"
    sizes = ", ".join(f"{p.name} ({p.stat().st_size / 1e6:,.0f} MB)" for p in found)
    return f"; the win strategy's tables saved in {directory} stay there, whole, for later runs: {sizes}"


def _simulate_summary(tally, advisor, strategy, seed, as_json, target, seconds: float, written: str | None) -> None:
    # With the games on standard output, the summary goes to standard error.
    echo = functools.partial(click.echo, err=target is not None and target.path is None)
    rs = tally.rules
    st = tally.stats(seconds)
    if as_json:
        echo(json.dumps({"rules": rs.name, "strategy": strategy, "seed": seed, **st}))
        return
    echo(f"{rs.title}, {strategy} strategy, {st['games']:,} games (seed {seed})")
    echo(f"Mean score:        {st['mean']:.3f}  (std {st['std']:.2f}, standard error {st['stderr']:.3f})")
    if strategy == "optimal":
        echo(f"Solved mean:       {advisor.table.expected_score:.3f}  (exact, from the table)")
    pct = st["percentiles"]
    echo("Percentiles:       " + "  ".join(f"{q}%: {pct[q]}" for q in ("1", "10", "25", "50", "75", "90", "99")))
    echo(f"Min / max:         {st['min']} / {st['max']}")
    echo(f"Upper bonus rate:  {st['upper_bonus_rate']:.2%}")
    alike = rs.box_name(rs.all_alike_box)
    echo(f"{alike + ' rate:':<19}{st['all_alike_rate']:.2%}  (games with points in the {alike} box)")
    if rs.penta_bonus and rs.penta_box >= 0:
        dist = ", ".join(f"{k}: {v:,}" for k, v in st["penta_bonus_distribution"].items())
        echo(f"{rs.bonus_name + 'es:':<19}{dist}")
    if rs.penta_repeat:
        dist = ", ".join(f"{k}: {v:,}" for k, v in st["extra_turns_distribution"].items())
        echo(f"{'Extra turns:':<19}{dist}")
    echo(f"Speed:             {st['games_per_second']:,.0f} games/s ({st['seconds']:.2f} s)")
    echo("Final scores:")
    hist = tally.histogram()
    peak = max(c for _, _, c in hist)
    for lo, hi, c in hist:
        echo(f"  {lo:>4}-{hi:<4} {'#' * round(40 * c / peak):<40} {c:,}")
    if written:
        echo(f"Games written to {written}")
