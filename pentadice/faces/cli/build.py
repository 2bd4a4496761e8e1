"""``pentadice build``: build a rule set's win tables or target table out of core, layer by layer, as Dask tasks
(:mod:`pentadice.cluster`): on this machine's cores or on a running cluster; resumed after an interruption."""

from __future__ import annotations

import json
import os
import re

import click

from pentadice.faces.cli.options import DATA_OPTION, RULES_OPTION
from pentadice.game import rules
from pentadice.support import exits, paths

UNITS = {"": 1, "b": 1, "k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9, "t": 1e12, "tb": 1e12,
         "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40}  # fmt: skip
MAX_BYTES = float(1 << 60)  # --memory above 1 EiB is a typo (or 1e999: infinity)


class Bytes(click.ParamType):
    """A size: ``4GB``, ``512MiB``, ``2e9`` (bytes)."""

    name = "SIZE"

    def convert(self, value, param, ctx) -> int:
        if isinstance(value, int):
            return value
        m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?(?:e[0-9]+)?)\s*([a-z]*)\s*", str(value).lower())
        if not m or m.group(2) not in UNITS:
            self.fail(f"{value!r} is not a size (such as 4GB or 512MiB)", param, ctx)
        number = float(m.group(1)) * UNITS[m.group(2)]
        if not number < MAX_BYTES:  # 1e999 is inf: no machine has that (and int() of it would fail)
            self.fail(f"{value!r} is too large: give what the workers may use, at most 1EiB (such as 4GB)", param, ctx)
        size = int(number)
        if size < 1 << 26:
            self.fail(f"{value!r} is too small: give the workers at least 64MiB", param, ctx)
        return size


@click.command()
@RULES_OPTION
@DATA_OPTION
@click.option(
    "--table",
    "which",
    type=click.Choice(["win", "targets", "chances"]),
    default="win",
    show_default=True,
    help="The win player's tables, the target table (`advise --target`: the files `solve --targets` writes), or "
    "the chances table (live chances: the files `solve` writes).",
)
@click.option(
    "--scheduler",
    envvar="PENTADICE_SCHEDULER",
    default=None,
    metavar="ADDRESS",
    help="A running Dask scheduler (tcp://HOST:PORT; tls://HOST:PORT with Dask's TLS settings) whose workers see "
    "--data at the same path [default: $PENTADICE_SCHEDULER, else a cluster of this machine's cores].",
)
@click.option(
    "--workers",
    type=click.IntRange(min=0),
    default=None,
    help="Worker processes of the local cluster; 0 runs the tasks in this process, without Dask "
    "[default: one per core].",
)
@click.option(
    "--memory",
    type=Bytes(),
    default="4GB",
    show_default=True,
    help="What the workers may use together: sets the chunk size.",
)
@click.option(
    "--chunk",
    type=click.IntRange(min=1),
    default=None,
    metavar="MASKS",
    help="Box masks a task computes (--table targets: lanes of rows; chances: states) [default: as many as "
    "--memory allows, at most 4096 masks, 4,194,304 lanes or 4096 states].",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of the summary.")
def build(rules_name: str, data: str | None, which: str, scheduler: str | None, workers: int | None, memory: int,
          chunk: int | None, as_json: bool) -> None:  # fmt: skip
    """Build the win player's tables (or with --table targets the target table) out of core: layer by layer of
    open boxes, each layer cut into chunks that run as Dask tasks, reading the layer below from disk. For the
    tables too large to build in memory (Maxi Yatzy's win tables: 12.7 GB). Run it again after an interruption:
    it goes on from the chunks already written. The win tables need the value table first (`pentadice solve`)."""
    from pentadice.cluster import engine
    from pentadice.faces.cli import loading
    from pentadice.players import win
    from pentadice.tables import chances_store, table, targets_store, win_plan, win_store

    rs = rules.get_rules(rules_name)
    directory = paths.data_dir(data)
    what = {"win": "win tables", "targets": "target table", "chances": "chances table"}[which]
    scheduler = scheduler.strip() if scheduler and scheduler.strip() else None  # PENTADICE_SCHEDULER= : unset
    if scheduler is not None:  # said before any table is read or planned
        try:
            scheduler = engine.check_scheduler(scheduler)
        except engine.AddressError as e:
            raise click.BadParameter(str(e), param_hint="'--scheduler' / PENTADICE_SCHEDULER") from None
        except engine.ClusterError as e:
            raise exits.Failure(str(e)) from None
    values = None
    if which != "targets":
        try:
            values = table.load(rs, directory).values
        except table.TableError as e:
            raise exits.Failure(str(e)) from None
    bar = None

    def kept():
        """The folder of the build's work."""
        store = {"win": win_store.Store, "targets": targets_store.store_of, "chances": chances_store.store_of}[which]
        return store(directory, rs.name)

    def total(n: int) -> None:
        nonlocal bar
        bar = loading.progress(label=f"The {what} of {rs.name}", length=n, enabled=not as_json)
        bar.__enter__()

    progress = engine.Progress(
        say=lambda text: click.echo(text, err=True) if not as_json else None,
        advance=lambda n: bar.update(n) if bar is not None else None,
        total=total,
    )
    n_workers = max(workers or engine.default_workers(), 1)
    if not as_json and which == "win" and win.too_large(rs) is None:
        click.echo(
            f"Note: {rs.title}'s win tables fit in memory: `win` plays from those `pentadice solve` builds, not "
            "from these (built out of core for a check, or to try a cluster)",
            err=True,
        )
    if not as_json and which == "win":
        p = win_plan.make(rs, win.stored_thetas(rs), memory, n_workers, chunk)
        click.echo(
            f"{rs.title}: {len(p.thetas) - 1} tables of {p.shape[1] * p.shape[2]:,} states x {p.shape[3]} "
            f"lanes, {p.bytes / 1e9:,.2f} GB, in {p.n_tasks:,} tasks of at most {p.chunk:,} box masks",
            err=True,
        )
    if not as_json and which == "targets":
        click.echo(f"{rs.title}: planning the target table (the states of each layer)...", err=True)
        t = targets_store.make(rs, memory, n_workers, chunk)
        click.echo(
            f"{rs.title}: {sum(t.lanes):,} lanes of rows at most, in {t.n_tasks:,} tasks of at most "
            f"{t.chunk_lanes:,} lanes; {t.needed_bytes() / 1e9:,.2f} GB of disk at most",
            err=True,
        )
    try:
        if which == "targets":
            summary = engine.build_targets(rs, directory, scheduler, workers, memory, progress, chunk)
        elif which == "chances":
            summary = engine.build_chances(rs, directory, values, scheduler, workers, memory, progress, chunk)
        else:
            summary = engine.build(rs, directory, values, scheduler, workers, memory, progress, chunk)
    except KeyboardInterrupt:
        raise exits.Interrupted(
            f"the chunks written so far are kept in {kept().root}; run the same command again to go on"
        ) from None
    except engine.ClusterError as e:
        root = kept().root
        if root.is_dir() and any(root.iterdir()):
            raise exits.Failure(f"{e}; what the build wrote is kept in {root}, for the same command to go on") from None
        raise exits.Failure(str(e)) from None
    except table.TableError as e:
        raise exits.Failure(str(e)) from None
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    finally:
        if bar is not None:
            bar.__exit__(None, None, None)
    if as_json:
        click.echo(json.dumps(summary))
        return
    if not summary["built"]:
        click.echo(f"The {rs.name} {what} in {summary['files']} {'are' if which == 'win' else 'is'} whole "
                   "already (checked).")  # fmt: skip
        return
    click.echo(
        f"Built the {rs.name} {what}: {summary['tasks_run']:,} tasks run"
        + (f", {summary['tasks_resumed']:,} resumed" if summary["tasks_resumed"] else "")
        + f", {summary['seconds']:,.1f} s, {summary['bytes'] / 1e9:,.2f} GB in {summary['files']}"
        + (os.sep if which == "win" else "")
    )
