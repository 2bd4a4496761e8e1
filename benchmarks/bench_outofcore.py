"""Maxi Yatzy's tables beyond the values: the cost of one chunk of each, measured, and the whole table extrapolated
from it (``docs/scale.md``).

For each table: its states and bytes, a chunk of its widest layers computed here by the kernel that builds it
(median of ``--runs``), the CPU seconds per state (or per state and target), and the whole build on this machine's
cores and on a cluster of N workers. A chunk's cost does not depend on the numbers it reads, so a chunk is
timed on rows of ones where the layers below are not built (the target table's rows are then as long as they can
be: an upper bound, which the Yatzy ratio of rows computed to rows allotted corrects).

    python benchmarks/bench_outofcore.py [--runs 3] [--data DIR] [--workers 2] [--yatzy]

With ``--data`` holding a finished ``maxi-yatzy.win.store`` (``pentadice build --rules maxi-yatzy``), its measured
build time is printed beside the extrapolation. ``--yatzy``: the full-size comparisons, Yatzy's win tables,
chances table and target table built on a 2-worker ``LocalCluster`` against the same tables built in memory, bit
for bit, with both times.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from pentadice.game import rules, states


def median_seconds(fn, runs: int) -> float:
    """:func:`bench_advise.median_time` of ``fn``, after a first call (compiled, or loaded from Numba's cache)."""
    from bench_advise import median_time

    fn()
    return median_time(fn, runs)


def row(what: str, figure: str) -> None:
    print(f"| {what} | {figure} |", flush=True)


def hours(seconds: float) -> str:
    return f"{seconds / 3600:,.1f} h" if seconds >= 3600 else f"{seconds / 60:,.1f} min"


def win_chunk(rs: rules.RuleSet, runs: int) -> float:
    """CPU seconds per (state, theta) of the utility pass: 2,048 box masks of the widest layer."""
    from pentadice.solver import utility
    from pentadice.solver.turn_inputs import turn_inputs

    masks, flags = max(states.layers(rs), key=lambda layer: len(layer[0]))
    U = np.ones((rs.n_flags, 1 << rs.n_boxes, rs.lanes))
    kernel = utility.wide_for(rs.lanes).solve_theta_states
    inputs = turn_inputs(rs).layer()
    n = 2048
    return median_seconds(lambda: kernel(U, 0.01, *inputs, masks, flags, 0, n), runs) / n


def bounds(rs: rules.RuleSet) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(flags, masks, subtotals, lanes allotted)`` of every reachable state (``targets.bound + 1``), vectorised."""
    from pentadice.tables import targets_store

    flags, masks, subs = np.nonzero(states.reachable(rs))
    return flags, masks, subs, targets_store.bounds(rs, masks, subs) + 1


def target_chunk(rs: rules.RuleSet, runs: int) -> tuple[float, int, int]:
    """CPU seconds per (state, target) of the target pass (300 states of the layer of 5 open boxes, their
    successors' rows as long as allotted); the lanes allotted to every state; the states."""
    from pentadice.solver import targets
    from pentadice.solver.turn_inputs import turn_inputs

    flags, masks, subs, alloc = bounds(rs)
    pop = np.bitwise_count(masks.astype(np.uint64))
    k = targets.compiled()
    shape = rs.table_shape
    off = np.zeros(shape, dtype=np.int64)
    ln = np.zeros(shape, dtype=np.int64)
    below = pop == 4
    off[flags[below], masks[below], subs[below]] = np.cumsum(alloc[below]) - alloc[below]
    ln[flags[below], masks[below], subs[below]] = alloc[below]
    prev = np.ones(int(alloc[below].sum()))
    here = np.nonzero(pop == 5)[0][:300]
    a = alloc[here]
    off[flags[here], masks[here], subs[here]] = np.cumsum(a) - a
    cur = np.empty(int(a.sum()))
    args = (prev, cur, off, ln, a, *turn_inputs(rs).layer(), flags[here], masks[here], subs[here])
    gmax = targets.max_gain(rs)
    seconds = median_seconds(lambda: k.target_states(*args, gmax, 0, len(here)), runs)
    lanes = int(ln[flags[here], masks[here], subs[here]].sum())
    return seconds / lanes, int(alloc.sum()), len(masks)


def endgame_chunk(rs: rules.RuleSet, runs: int) -> tuple[float, int]:
    """CPU seconds per box mask of the end-game table (every subtotal, 512 lanes): 20 masks of 2 open boxes; the
    masks of at most 4 open boxes."""
    from pentadice.players import win
    from pentadice.solver import utility
    from pentadice.solver.turn_inputs import turn_inputs

    all_masks = np.arange(1 << rs.n_boxes, dtype=np.int64)
    pop = np.bitwise_count(all_masks)
    small = all_masks[pop <= win.ENDGAME_BOXES]
    rowix = np.full(1 << rs.n_boxes, -1, dtype=np.int64)
    rowix[small] = np.arange(len(small))
    Wt = np.full((len(small), rs.n_flags, rs.upper_threshold + 1, utility.TARGET_LANES), 0.5)
    masks = small[pop[small] == 2][:20].astype(np.int64)
    kernel = utility.target.solve_target_states
    inputs = turn_inputs(rs).layer()
    return median_seconds(lambda: kernel(Wt, rowix, *inputs, masks, 0, len(masks)), runs) / len(masks), len(small)


def yatzy_comparison(workers: int) -> None:
    """Yatzy's win tables on a ``LocalCluster`` of ``workers`` processes against the in-memory solve of each
    theta (one thread each, as a worker): times and whether every slot is the same bits."""
    import tempfile

    from pentadice.cluster import engine
    from pentadice.players import win
    from pentadice.solver import induction, utility
    from pentadice.tables import table, win_store

    rs = rules.get_rules("yatzy")
    values = induction.solve(rs).values
    with tempfile.TemporaryDirectory() as d:
        table.save(rs, values, Path(d))
        start = time.perf_counter()
        summary = engine.build(rs, d, values, workers=workers)
        cluster = time.perf_counter() - start
        stored = win_store.open_win(rs, d, values)
        start = time.perf_counter()
        same = np.array_equal(stored.array[0], win.padded(rs, values), equal_nan=True)
        for i, theta in enumerate(stored.thetas[1:], 1):
            same &= np.array_equal(stored.array[i], utility.solve_theta(rs, float(theta)), equal_nan=True)
        memory = time.perf_counter() - start
    row(
        f"Yatzy's win tables ({summary['tasks']:,} tasks, {summary['bytes'] / 1e9:.2f} GB) on a {workers}-worker "
        "LocalCluster against in memory",
        f"cluster {cluster:,.1f} s (start-up included), in memory {memory:,.1f} s on one thread; "
        + ("every slot the same bits" if same else "THE BITS DIFFER"),
    )


def yatzy_targets_comparison(workers: int) -> None:
    """Yatzy's target table built out of core on a ``LocalCluster`` of ``workers`` processes against ``solve
    --targets`` in memory on as many threads: times, and whether the files are the same bytes."""
    import tempfile

    from pentadice.cluster import engine
    from pentadice.tables import targets

    rs = rules.get_rules("yatzy")
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        start = time.perf_counter()
        targets.solve_and_save(rs, Path(a), threads=workers)
        memory = time.perf_counter() - start
        start = time.perf_counter()
        summary = engine.build_targets(rs, b, workers=workers)
        cluster = time.perf_counter() - start
        same = all(
            (Path(a) / name).read_bytes() == (Path(b) / name).read_bytes()
            for name in (f"{rs.name}.targets.npy", f"{rs.name}.targets-index.npy")
        )
    row(
        f"Yatzy's target table ({summary['tasks']:,} tasks, {summary['bytes'] / 1e9:.2f} GB) on a {workers}-worker "
        "LocalCluster against `solve --targets` in memory",
        f"cluster {cluster:,.1f} s (start-up included), in memory {memory:,.1f} s on {workers} threads; "
        + ("the same bytes" if same else "THE BYTES DIFFER"),
    )


def yatzy_chances_comparison(workers: int) -> None:
    """Yatzy's chances table built out of core on a ``LocalCluster`` of ``workers`` processes against the pass in
    memory on as many threads (as ``solve`` builds it): times, and whether the files are the same bytes."""
    import tempfile

    from pentadice.cluster import engine
    from pentadice.solver import induction, remaining
    from pentadice.tables import chance_tables, table

    rs = rules.get_rules("yatzy")
    values = induction.solve(rs).values
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        for d in (a, b):
            table.save(rs, values, Path(d))
        start = time.perf_counter()
        chance_tables.save(rs, a, remaining.solve(rs, values, threads=workers), values)
        memory = time.perf_counter() - start
        start = time.perf_counter()
        summary = engine.build_chances(rs, b, values, workers=workers)
        cluster = time.perf_counter() - start
        same = all(
            (Path(a) / name).read_bytes() == (Path(b) / name).read_bytes()
            for name in (f"{rs.name}.chances.npy", f"{rs.name}.chances-index.npy")
        )
    row(
        f"Yatzy's chances table ({summary['tasks']:,} tasks, {summary['bytes'] / 1e9:.2f} GB) on a {workers}-worker "
        "LocalCluster against the pass in memory",
        f"cluster {cluster:,.1f} s (start-up included), in memory {memory:,.1f} s on {workers} threads; "
        + ("the same bytes" if same else "THE BYTES DIFFER"),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2, help="this machine's cores used by a build")
    parser.add_argument("--data", type=Path, default=None, help="a directory with a finished maxi-yatzy.win.store")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    parser.add_argument(
        "--yatzy", action="store_true", help="Yatzy's win, chances and target tables on the cluster against in memory"
    )
    args = parser.parse_args()
    rs = rules.get_rules("maxi-yatzy")
    from pentadice.players import win
    from pentadice.solver import utility
    from pentadice.tables import win_plan

    out: dict = {}
    print("| Maxi Yatzy table, one chunk (median of runs) | figure |\n| --- | --- |")
    per = win_chunk(rs, args.runs)
    plan = win_plan.make(rs, win.stored_thetas(rs))
    computed = sum(len(m) for m, _ in states.layers(rs)) * (len(plan.thetas) - 1)
    core = per * computed
    out["win"] = {"seconds_per_state": per, "states": computed, "bytes": plan.bytes, "core_seconds": core}
    row(
        "win tables: utility pass, 2,048 box masks x 80 lanes",
        f"{per * 1e6:,.0f} us a state; {computed:,} (state, theta) rows, {plan.bytes / 1e9:,.2f} GB: "
        f"{hours(core)} of one core, {hours(core / args.workers)} on {args.workers}",
    )
    if args.data is not None:
        meta_path = args.data / "maxi-yatzy.win.store" / "table.json"
        if meta_path.is_file():
            meta = json.loads(meta_path.read_text())
            out["win"]["measured_seconds"] = meta["build_seconds"]
            row("win tables: the whole build, measured", f"{hours(meta['build_seconds'])} ({meta['workers']} workers)")
    per_lane, lanes, n_states = target_chunk(rs, args.runs)
    core = per_lane * lanes
    disk = lanes * 2
    held = max_two_layers(rs)
    out["targets"] = {
        "seconds_per_lane": per_lane,
        "lanes_allotted": lanes,
        "states": n_states,
        "core_seconds_at_most": core,
        "uint16_bytes_at_most": disk,
        "float64_two_layers": held,
    }
    row(
        "target table: 300 states of 5 open boxes, rows as long as allotted",
        f"{per_lane * 1e9:,.0f} ns a (state, target); {n_states:,} states, {lanes:,} (state, target) allotted: "
        f"at most {hours(core)} of one core; at most {disk / 1e9:,.0f} GB at 16 bits, float64 rows of two "
        f"layers {held / 1e9:,.0f} GB",
    )
    per_mask, masks = endgame_chunk(rs, args.runs)
    core = per_mask * masks
    end_bytes = win.table_bytes(rs)[1]
    out["win-end"] = {"seconds_per_mask": per_mask, "masks": masks, "core_seconds": core, "bytes": end_bytes}
    row(
        f"end-game table: 20 box masks of 2 open boxes, {rs.upper_threshold + 1} subtotals x "
        f"{utility.TARGET_LANES} lanes",
        f"{per_mask:,.2f} s a mask; {masks:,} masks, {end_bytes / 1e9:,.2f} GB: {hours(core)} of one core",
    )
    if args.yatzy:
        yatzy_comparison(args.workers)
        yatzy_chances_comparison(args.workers)
        yatzy_targets_comparison(args.workers)
    if args.json is not None:
        args.json.write_text(json.dumps(out, indent=1))


def max_two_layers(rs: rules.RuleSet) -> int:
    """The float64 bytes of the two widest consecutive layers' rows, as allotted (what a target build holds)."""
    _, masks, _, alloc = bounds(rs)
    pop = np.bitwise_count(masks.astype(np.uint64))
    per_layer = np.bincount(pop, weights=alloc) * 8
    return int(max(per_layer[i] + per_layer[i + 1] for i in range(len(per_layer) - 1)))


if __name__ == "__main__":
    main()
