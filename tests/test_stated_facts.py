"""What the program prints and the documentation (the README and the site's pages) states, checked against what the
program does: the files a command writes and lists, sizes, counts, limits and behaviours, each computed from the
program rather than copied into the test. No wall-clock time is asserted: the documentation quotes no times outside
the Performance page, whose figures are the benchmarks' own (tests/test_docs_site.py)."""

import dataclasses
import functools
import json
import math
import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from solutions import solved, with_second_moments

from pentadice.faces.cli import main
from pentadice.game import rules

README = Path(__file__).resolve().parents[1] / "README.md"
DOCS = Path(__file__).resolve().parents[1] / "docs"
PENTA = rules.get_rules("penta")


def _flat(text: str) -> str:
    """Text with every run of white space one space (the pages' lines wrap anywhere)."""
    return " ".join(text.split())


def _documentation() -> str:
    """The README and every page of the site, one after the other, flattened."""
    pages = [README, *sorted(DOCS.rglob("*.md"))]
    return _flat("\n\n".join(p.read_text(encoding="utf-8") for p in pages))


@pytest.fixture(scope="module")
def readme() -> str:
    """What the documentation says (the fixture keeps its name: the README held all of it once)."""
    return _documentation()


@functools.cache
def _solved_with_moments():
    """The session's Penta solution with its second moments, as ``solve`` computes both in one pass."""
    solution = solved("penta")
    return dataclasses.replace(solution, m2=with_second_moments("penta")[2])


def _solve(monkeypatch, directory: Path, *args: str):
    """``pentadice solve`` into ``directory``, the session's solution standing in for the solve itself (the
    writing, the second-moment pass and the output are the command's own)."""
    from pentadice import solver

    solution = _solved_with_moments()  # before the patch: solved() itself calls solver.solve once

    def solve(rs, threads=None, progress=None, moments=False):
        return solution if moments else dataclasses.replace(solution, m2=None)

    monkeypatch.setattr(solver, "solve", solve)
    result = CliRunner().invoke(
        main, ["solve", "--skip", "chances,win,win-end", "--rules", "penta", "--data", str(directory), *args]
    )
    assert result.exit_code == 0, result.output
    return result


def _written(directory: Path) -> set[Path]:
    """The files a command left in ``directory`` (the lock file, hidden, is no output)."""
    return {p for p in directory.iterdir() if not p.name.startswith(".")}


def _listed(output: str) -> set[Path]:
    lines = output.split("Files:", 1)[1].splitlines()
    return {Path(line.strip()) for line in lines if line.strip()}


# --- the files `solve` writes, and the files it says it wrote ---------------------------------------------------


def test_solve_lists_every_file_it_writes(monkeypatch, tmp_path):
    result = _solve(monkeypatch, tmp_path)
    written = _written(tmp_path)
    assert _listed(result.stdout) == written
    assert {p.name for p in written} == {"penta.npy", "penta.parquet", "penta.json", "penta.m2.npy", "penta.m2.json"}


def test_solve_json_files_are_the_files_written(monkeypatch, tmp_path):
    summary = json.loads(_solve(monkeypatch, tmp_path, "--json").stdout)
    assert {Path(p) for p in summary["files"].values()} == _written(tmp_path)
    assert summary["files"]["m2_metadata"] == str(tmp_path / "penta.m2.json")
    readme = _documentation()
    assert f"reports the SD at the start (Penta {summary['sd']:.4f})" in readme
    keys = ", ".join(f"`{k}`" for k in summary["files"])
    assert f"`files` ({keys}: the path of each file written)" in readme


def test_solve_without_moments_lists_three_files(monkeypatch, tmp_path):
    result = _solve(monkeypatch, tmp_path, "--no-moments")
    assert _listed(result.stdout) == _written(tmp_path) and len(_written(tmp_path)) == 3
    summary = json.loads(_solve(monkeypatch, tmp_path / "j", "--no-moments", "--json").stdout)
    assert summary["files"]["m2"] is None and summary["files"]["m2_metadata"] is None


def test_solve_targets_lists_every_file_it_writes(monkeypatch, tmp_path, readme):
    """`solve --targets` (on a small game registered as "penta": the real table takes minutes): its Files lines
    and JSON `files` are the files it adds, `On disk` and `bytes_on_disk` their sizes, and the README's Table
    files section names each."""
    small = PENTA.reduced(dice=2, boxes=("twos", "three_of_a_kind", "small_straight", "chance", "penta"))
    monkeypatch.setitem(rules.REGISTRY, "penta", small)  # (value tables keep all 64 subtotals: threshold 63)
    run = CliRunner().invoke
    assert run(main, ["solve", "--skip", "chances,win,win-end", "--data", str(tmp_path), "--no-moments"]).exit_code == 0
    before = _written(tmp_path)
    result = run(main, ["solve", "--targets", "--data", str(tmp_path)])
    assert result.exit_code == 0, result.output
    added = _written(tmp_path) - before
    listed = set()
    for line in result.stdout.split("Files:", 1)[1].splitlines():
        if line.strip():
            listed.add(Path(line.strip()))
    assert listed == added and len(added) == 3
    size = sum(p.stat().st_size for p in added)
    assert f"On disk:         {size / 1e6:,.1f} MB" in result.stdout
    summary = json.loads(run(main, ["solve", "--targets", "--data", str(tmp_path), "--json"]).stdout)
    assert {Path(p) for p in summary["files"].values()} == added == _written(tmp_path) - before
    assert summary["bytes_on_disk"] == sum(p.stat().st_size for p in added)
    section = readme.split("## Table files", 1)[1].split("## ", 1)[0]
    for path in added:
        assert f"`{path.name.replace('penta', 'NAME', 1)}`" in section, path.name


def test_the_documentation_names_the_files_make_table_writes(monkeypatch, tmp_path, readme):
    """`make table` (`pentadice solve --rules penta --data data`) writes the files of every table a game reads; the
    Table files section names each."""
    _solve(monkeypatch, tmp_path)
    written = {p.name for p in _written(tmp_path)}
    # The tables a game reads, which `solve` goes on to build (tests/test_prepared.py builds them): their files.
    from pentadice.players import win
    from pentadice.tables import chance_tables, win_tables

    rs = rules.get_rules("penta")
    written |= {p.name for p in chance_tables.saved_paths(rs, tmp_path)}
    written |= {p.name for p in win_tables.saved_paths(rs, tmp_path, win_tables.THETA_KIND)}
    end = {"max_open": win.ENDGAME_BOXES}
    written |= {p.name for p in win_tables.saved_paths(rs, tmp_path, win_tables.ENDGAME_KIND, end)}
    assert "the table's three and, with the second moments, their two" in readme
    section = readme.split("## Table files", 1)[1].split("## ", 1)[0]
    for name in written:
        assert f"`{name.replace('penta', 'NAME', 1)}`" in section, name


def test_make_table_solves_penta_into_data():
    """What the README says `make table` does is what the Makefile's rule runs."""
    makefile = (README.parent / "Makefile").read_text(encoding="utf-8")
    assert "$(BIN)/pentadice solve --rules penta --data $(DATA)" in makefile
    assert re.search(r"^DATA \?= data$", makefile, re.M)


# --- no guessed durations in the messages -------------------------------------------------------------------------


def test_compile_messages_quote_no_duration():
    """The "Compiling ..." lines quoted a duration the program cannot know ("about ten seconds", which took 30 s
    on a loaded machine); they say instead where the measured seconds are given."""
    from pentadice.advisor import distribution
    from pentadice.solver import induction

    duration = re.compile(r"\b(\d+|a|an|one|ten|a few|some|several)\s+(s|seconds?|minutes?|hours?)\b|\babout\b")
    for message in (induction.COMPILING_MESSAGE, distribution.COMPILING_MESSAGE):
        assert not duration.search(message), message
    source = Path(main.callback.__code__.co_filename).read_text(encoding="utf-8")
    for line in re.findall(r'"(Compiling [^"]*|Building [^"]*|Reading [^"]*)"', source):
        assert not duration.search(line), line
    assert "some seconds" not in source and "most of an hour" not in source


def test_solve_reports_the_compile_seconds_its_message_promises(monkeypatch, tmp_path):
    """ "the summary says how long it took": the summary has both compile times."""
    out = _solve(monkeypatch, tmp_path).stdout
    assert re.search(r"JIT compile: +\d+\.\d{3} s", out)
    assert re.search(r"Solve: +\d+\.\d{3} s on .*, values and second moments in one pass", out)
    summary = json.loads(_solve(monkeypatch, tmp_path / "j", "--json").stdout)
    assert summary["compile_seconds"] >= 0 and summary["moments_compile_seconds"] >= 0


def test_moments_on_demand_message_names_its_measurement():
    from pentadice.solver import moments

    maxi = rules.get_rules("maxi-yatzy")
    text = moments.on_demand_message(maxi)
    states = moments.pass_states(maxi)
    assert f"{states:,} states" in text
    minutes = states * moments.turn_inputs(maxi).n_keeps * moments.SECONDS_PER_STATE_AND_KEEP / 60
    assert f"about {minutes:.0f} minutes on one core (at the rate measured" in text
    assert re.search(r"measured on a quiet core, \d{4}-\d\d-\d\d\)", text)


# --- the win strategy's build: what it says, and what an interruption leaves ---------------------------------------


def _fake_win_tables(directory: Path, rs, kinds) -> list[Path]:
    from pentadice.tables import win_tables

    made = []
    for kind, params in kinds:
        npy, meta = win_tables.saved_paths(rs, directory, kind, params)
        npy.write_bytes(b"\0" * 1_500_000)
        meta.write_text("{}")
        made.append(npy)
    return made


def test_win_build_message_says_what_it_builds_and_where_it_saves(tmp_path):
    from pentadice.faces.cli.simulate import _win_tables_message
    from pentadice.players import win
    from pentadice.tables import win_tables

    theta = (win_tables.THETA_KIND, None)
    end = (win_tables.ENDGAME_KIND, {"max_open": win.ENDGAME_BOXES})
    text = _win_tables_message(PENTA, tmp_path)
    assert "a backward solve per theta, then the end-game table" in text and f"saved in {tmp_path}" in text
    assert "seconds" not in text and "minutes" not in text
    _fake_win_tables(tmp_path, PENTA, [theta])
    assert _win_tables_message(PENTA, tmp_path).startswith("Building the win strategy's tables: the end-game")
    _fake_win_tables(tmp_path, PENTA, [end])
    assert _win_tables_message(PENTA, tmp_path).startswith(f"Reading the win strategy's tables from {tmp_path}")
    kiriki = rules.get_rules("kiriki")  # no end-game table: its repeated turns
    assert "end-game" not in _win_tables_message(kiriki, tmp_path)
    assert "not saved" in _win_tables_message(PENTA, None)


def test_interrupted_win_build_names_the_tables_it_leaves(tmp_path):
    """SIGTERM during the build: the tables saved before it stay (written atomically, metadata last), and the
    message names them with their sizes rather than only "no games are summed up"."""
    from pentadice.faces.cli.simulate import _win_tables_kept
    from pentadice.players import win
    from pentadice.tables import win_tables

    assert _win_tables_kept(PENTA, tmp_path) == "; no table of the win strategy was saved"
    (npy,) = _fake_win_tables(tmp_path, PENTA, [(win_tables.THETA_KIND, None)])
    kept = _win_tables_kept(PENTA, tmp_path)
    assert f"saved in {tmp_path} stay there, whole" in kept and f"{npy.name} (2 MB)" in kept
    npy2, _ = win_tables.saved_paths(PENTA, tmp_path, win_tables.ENDGAME_KIND, {"max_open": win.ENDGAME_BOXES})
    npy2.write_bytes(b"\0")  # an array without its metadata is not a table written whole: not named
    assert npy2.name not in _win_tables_kept(PENTA, tmp_path)


def test_simulate_interrupted_in_the_win_build_says_what_it_left(monkeypatch, tmp_path, penta_table_dir):
    """The command's own path: `simulate --players win,optimal` says it builds (no duration), and an interrupt
    during the build (SIGTERM arrives as KeyboardInterrupt) names the table that stays. The build is faked: it
    saves the theta tables' files, as the real build does first, then is interrupted."""
    import shutil

    from pentadice.simulator import multiplayer as mp
    from pentadice.tables import win_tables

    for f in penta_table_dir.iterdir():  # the table, not any win tables another test built there
        if ".win" not in f.name:
            shutil.copy(f, tmp_path / f.name)

    def build_then_interrupted(tbl, names, games, seed, progress):
        _fake_win_tables(tmp_path, tbl.rules, [(win_tables.THETA_KIND, None)])
        raise KeyboardInterrupt

    monkeypatch.setattr(mp, "needs_compiling", lambda rs: False)
    monkeypatch.setattr(mp, "compile_seconds", lambda rs: 0.0)
    monkeypatch.setattr(mp, "simulate_players", build_then_interrupted)
    args = ["simulate", "-n", "10", "--players", "win,optimal", "--seed", "1", "--data", str(tmp_path), "--json"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 130
    assert "Building the win strategy's tables: a backward solve per theta, then the end-game table" in result.stderr
    assert "no games are summed up; the win strategy's tables saved in" in result.stderr
    assert "penta.win.npy (2 MB)" in result.stderr and "win-end" not in result.stderr.split("Interrupted", 1)[1]
    result = CliRunner().invoke(main, args)  # the next run: the theta tables are there, the end game is not
    assert "Building the win strategy's tables: the end-game table (the theta tables read from" in result.stderr


def test_win_table_sizes_in_the_readme_and_docs(readme):
    """`NAME.win.npy` 134 MB and `NAME.win-end-4.npy` 573 MB for Penta, from the shapes the strategy uses (the
    .npy header adds 128 bytes); docs/win.md's table of sizes; 16 theta tables."""
    from pentadice.players import lastturns, win

    theta, end = win.table_bytes(PENTA)
    thetas = "the 16 utility tables of the nonzero thetas, float64 `(16, 2, 8192, 64)`"
    assert f"`NAME.win.npy` | {thetas} | {theta / 1e6:.0f} MB |" in readme
    ending = f"float64 `(masks, 2, 64, 512)`, masks: at most {win.ENDGAME_BOXES} boxes open"
    assert f"`NAME.win-end-{win.ENDGAME_BOXES}.npy` | the end-game table, {ending} | {end / 1e6:.0f} MB |" in readme
    assert len(win.grid_thetas(PENTA)) - 1 == 16
    doc = _flat((DOCS / "win.md").read_text(encoding="utf-8"))
    assert f"{(theta + end) / 1e6:.0f} MB for Penta: {theta / 1e6:.0f} MB of theta tables, {end / 1e6:.0f} MB" in doc
    yatzy = rules.get_rules("yatzy")
    y_theta, y_end = win.table_bytes(yatzy)
    assert f"`(16, 1, 32768, 64)`, {y_theta / 1e6:.0f} MB" in doc and f"{y_end / 1e6:.0f} MB | plays" in doc
    masks = int((lastturns.endgame_rows(PENTA, win.ENDGAME_BOXES) >= 0).sum())
    assert f"`({masks}, 2, 64, 512)`, {end / 1e6:.0f} MB" in doc


def test_maxi_yatzy_sizes_in_the_readme(readme):
    """ "its target table is refused with its size" (the rows its build would hold at once, as the refusal
    prints them) and "Its win tables (12.75 GB)" (the out-of-core store: 19 slots of 2**20 masks x 80 lanes)."""
    from pentadice.players import win
    from pentadice.solver import targets as kernel
    from pentadice.tables import win_plan

    maxi = rules.get_rules("maxi-yatzy")
    rows = re.search(r"about ([\d,]+) GB of float64 rows", kernel.refusal(maxi)).group(1)
    assert f"the target table's build would hold {rows} GB" in readme
    stored = win_plan.make(maxi, win.stored_thetas(maxi)).bytes
    assert f"(the win tables: {stored / 1e9:.2f} GB)" in readme


def test_table_shapes_and_sizes_in_the_readme(readme):
    """The Table files section's shapes, and Maxi Yatzy's 638 MB of values (float64, MB = 10^6 bytes as
    everywhere in the README)."""
    for name, shape in (("penta", "(2, 8192, 64)"), ("yatzy", "(1, 32768, 64)"), ("maxi-yatzy", "(1, 1048576, 76)")):
        assert str(rules.get_rules(name).table_shape) == shape
        assert f"`{shape}`" in readme
    maxi = rules.get_rules("maxi-yatzy")
    size = math.prod(maxi.table_shape) * 8 / 1e6
    assert f"`(1, 1048576, 76)` for `maxi-yatzy` ({size:.0f} MB)" in readme
    assert f"{size:.0f} MB + 285 MB on disk" in readme


def test_states_and_parquet_row_groups(penta_table_dir, readme):
    """ "a row group per 32,768 masks" and the 536,448 states solved of the example (test_readme compares the
    example; here the figure is the solver's)."""
    import pyarrow.parquet as pq

    from pentadice.tables import table

    assert table.PARQUET_MASKS == 32_768 and "a row group per 32,768 masks" in readme
    meta = pq.ParquetFile(penta_table_dir / "penta.parquet").metadata
    assert meta.num_row_groups == math.ceil(2**PENTA.n_boxes / table.PARQUET_MASKS)
    assert f"States solved: {solved('penta').states_solved:,}" in readme


# --- the second moments in the API ---------------------------------------------------------------------------------


def test_sd_in_the_api_as_the_readme_says(penta_table_dir, readme):
    """The README once said the API carried no `sd`: `/api/advise` and a game's `advice` do; the batches do not."""
    from fastapi.testclient import TestClient

    from pentadice.advisor import Advisor
    from pentadice.faces.web.api import create_app

    assert "`sd` in `--json`, `/api/advise` and a game's advice" in readme
    assert "`advise --batch` and `/api/advise/batch` carry no `sd`" in readme
    situation = {"dice": [1, 1, 3, 4, 6], "rolls_left": 2, "sheet": {}}
    advisor = Advisor.load("penta", str(penta_table_dir), solve_missing=False)
    with TestClient(create_app({"penta": advisor})) as client:
        advice = client.post("/api/advise", json=situation).json()
        assert all("sd" in o for o in advice["options"]) and "sd" in advice["best"]
        batch = client.post("/api/advise/batch", json={"items": [situation]}).json()
        assert batch and not any("sd" in o for item in batch["results"] for o in item["options"])
        game = client.post("/api/games", json={"players": "Ana,cpu", "seed": 1}).json()
        rolled = client.post(f"/api/games/{game['id']}/roll", json={"keep": []}).json()
        view = rolled.get("game", rolled)  # a move answers the game's view beside what was played
        assert all("sd" in o for o in view["advice"]["options"])
    result = CliRunner().invoke(
        main, ["advise", "--batch", "-", "--data", str(penta_table_dir)], input=json.dumps(situation) + "\n"
    )
    assert result.exit_code == 0 and '"sd"' not in result.stdout


# --- limits and counts the README states -----------------------------------------------------------------------------


def _limits():
    from pentadice import storage
    from pentadice.advisor import batch_io, distribution
    from pentadice.faces import terminal
    from pentadice.faces.cli import options
    from pentadice.faces.web import advising
    from pentadice.players import engine
    from pentadice.simulator import simulate

    return [
        # (what the README says, the program's figure, the figure as the README writes it)
        ("An unfinished game not played for {} days", storage.KEEP_DAYS, "30"),
        ("Answers are cached by situation ({} held, per server process)", advising.CACHE_SIZE, "4,096"),
        ("The games are played {} at a time", simulate.CHUNK, "400,000"),
        ("a JSON object of the same pairs (at most {} KiB", options.SHEET_FILE_LIMIT / 1024, "64"),
        ("not UTF-8, longer than {} KiB", batch_io.MAX_LINE / 1024, "64"),
        ("(a few thousand at a time at most)", batch_io.CHUNK, None),
        ("generator's state; at most {} MB, UTF-8,", engine.MAX_SAVE_BYTES / (1 << 20), "1"),
        ("A line of input is at most {} bytes", terminal.MAX_LINE, "4096"),
        ("(at most {} characters)", engine.MAX_NAME, "32"),
        ("(0: at once, up to {})", engine.MAX_AUTO_COMMIT, "86400"),
        ("its distribution is refused where it would take over {} GB", distribution.MEMORY_LIMIT / 1024**3, "4"),
    ]


@pytest.mark.parametrize("index", range(len(_limits())))
def test_limits_the_readme_states(index, readme):
    claim, value, written = _limits()[index]
    if written is None:  # "a few thousand": between 1,000 and 9,999
        assert claim in readme and 1000 <= value < 10_000
        return
    assert claim.format(written) in readme, claim.format(written)
    assert value == float(written.replace(",", "")), (claim, value)


def test_game_defaults_the_readme_states(readme):
    """ "`--auto-commit` seconds (3)" and "(`--pause`, 0.6 s on a terminal)": the options' defaults."""
    from pentadice.faces.web import schemas

    assert "within `--auto-commit` seconds (3)" in readme and "(`--pause`, 0.6 s on a terminal)" in readme
    play = {p.name: p for p in main.get_command(None, "play").params}
    assert str(play["auto_commit"].default) == "3"
    assert "0.6 on a terminal" in play["pause"].help
    assert schemas.NewGameIn.model_fields["auto_commit"].default == 3


# --- the times the README quotes name their run ------------------------------------------------------------------


def test_no_guessed_times_in_the_documentation(readme):
    """Phrases that were guesses rather than measurements are gone; figures of seconds live on the Performance
    page, written from the benchmarks' result files."""
    for gone in (
        "in about a second",
        "about ten minutes",
        "2-3 minutes",
        "(minutes, once)",
        "about 80 s",
        "the three files",
        "the API and the games carry no",
    ):
        assert gone not in readme, gone


def test_make_bench_stamps_its_run():
    """So that a figure can cite its run: `make bench` prints the day, the version and the commit measured."""
    import importlib.util
    from importlib.metadata import version

    path = README.parent / "benchmarks" / "bench_all.py"
    sys.path.insert(0, str(path.parent))  # bench_all imports its neighbour results.py
    spec = importlib.util.spec_from_file_location("bench_all_stamp", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    stamp = module.run_stamp(module.results.stamp())
    assert re.fullmatch(
        rf"make bench, \d{{4}}-\d\d-\d\d, pentadice {re.escape(version('pentadice'))}, commit \S+", stamp
    )
