"""Every kind of stored table (``pentadice.tables.chunks.KINDS``), a byte flipped in each of its chunks: no command and
no server ever answers from it.

The registry is walked: each kind is built here (a reduced game registered as "penta", so that the real
commands run in seconds) and listed with the commands that read it. A kind added to the registry without
joining this file fails :func:`test_every_registered_kind_is_walked`; an array stored without the registry
fails :func:`test_every_stored_array_goes_through_the_registry`.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import subprocess
import urllib.request
from pathlib import Path

import numpy as np
import pytest
import reduced_games
import serving
from click.testing import CliRunner

from pentadice.faces.cli import main
from pentadice.game import rules
from pentadice.solver import remaining
from pentadice.tables import chance_tables, chunks, moment_files, table

SMALL = reduced_games.GAMES["penta, 2 dice, lower boxes, threshold 63"]
WIN_GAMES = ["simulate", "-n", "300", "--players", "win,optimal", "--seed", "3", "--json"]

# kind -> the commands that read it. Each must refuse a damaged file (exit 1, saying it is damaged), except the
# games of the win strategy, which build its tables again from the value table when theirs are damaged (said on
# stderr): the answer is then the intact one.
READERS: dict[str, list[list[str]]] = {
    "values": [["advise", "2", "6"], ["distribution"], ["simulate", "-n", "10"], ["verify"]],
    "moments": [["advise", "2", "6"], ["verify"]],
    "targets": [["advise", "2", "6", "--target", "60"], ["distribution", "--target", "60"], ["verify"]],
    "targets-index": [["advise", "2", "6", "--target", "60"], ["distribution", "--target", "60"], ["verify"]],
    "win": [WIN_GAMES, ["verify"]],
    "win-end": [WIN_GAMES, ["verify"]],
    # The win tables built out of core (`pentadice build`): read by `win` only where they are too large to build
    # in memory (Maxi Yatzy; tests/test_outofcore.py), checked whole by `verify`.
    "win-store": [["verify"]],
    # The chances table: `verify` checks it whole; `play` and `serve` hold it (tests/test_prepared.py).
    "chances": [["verify"]],
    "chances-index": [["verify"]],
}
REBUILT = {"win", "win-end"}
# Kinds that live only while a build runs (its work folder is removed when the table is written): no command
# reads them; the build checks them when it goes on, which the named test damages and walks.
MID_BUILD = {"layer-rows": "tests/test_outofcore_targets.py, tests/test_outofcore_chances.py"}


def run(*args, stdin: str | None = None):
    return CliRunner().invoke(main, [str(a) for a in args], input=stdin)


def timeless(summary: dict) -> dict:
    """A summary without its timings (seconds differ from run to run)."""
    return {k: v for k, v in summary.items() if not k.endswith("seconds")}


def fresh_win_caches() -> None:
    from pentadice.players import win

    win._cache.clear()
    win._endgames.clear()


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A directory with a table of every kind, of the small game registered as "penta" meanwhile."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(rules.REGISTRY, "penta", SMALL)
        d = tmp_path_factory.mktemp("kinds")
        builders = (
            ["solve", "--json"],
            ["solve", "--targets", "--json"],
            WIN_GAMES,
            ["build", "--workers", "0", "--json"],
        )
        for args in builders:
            result = run(*args, "--data", d)
            assert result.exit_code == 0, result.output
        fresh_win_caches()
        intact = run(*WIN_GAMES, "--data", d)
        values = table.load(SMALL, d).values
        if not chance_tables.is_saved(SMALL, d, values):  # `solve` builds it where it builds every table
            chance_tables.save(SMALL, d, remaining.solve(SMALL, values), values)
    return d, json.loads(intact.stdout)  # the registry as it was: each test registers the small game itself


def files_of(directory: Path, kind: chunks.Kind) -> list[Path]:
    if "/" in kind.suffix:  # a file in a folder of its own (the win tables built out of core)
        path = directory / kind.file_name("penta")
        return [path] if path.is_file() else []
    pattern = re.escape(kind.file_name("penta", max_open="{M}")).replace(r"\{M\}", "[0-9]+")
    return sorted(p for p in directory.iterdir() if re.fullmatch(pattern, p.name))


def test_every_registered_kind_is_walked(built):
    directory, _ = built
    assert set(READERS) | set(MID_BUILD) == set(chunks.KINDS) and not set(READERS) & set(MID_BUILD)
    for kind in (chunks.KINDS[name] for name in READERS):
        assert files_of(directory, kind), f"no {kind.name} file was built: add its builder to this test"


def test_every_stored_array_goes_through_the_registry():
    """Only pentadice/tables/chunks.py writes or reads array files: any other table would escape the checks."""
    package = Path(chunks.__file__).parent.parent
    pattern = re.compile(r"np\.(save|savez|load|memmap|fromfile)\b|\.tofile\(|open_memmap")
    offenders = [
        f"{p.relative_to(package)}:{n}"
        for p in package.rglob("*.py")
        if p.name != "chunks.py"
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert offenders == []


def flip(path: Path, position: int) -> None:
    """Flip one bit of the byte at ``position``, in place (twice: as it was)."""
    with open(path, "r+b") as fh:
        fh.seek(position)
        byte = fh.read(1)
        fh.seek(position)
        fh.write(bytes([byte[0] ^ 0x01]))


def positions(path: Path, most: int | None = None) -> list[int]:
    """A byte in each chunk of the file (``most``: the first, the last and chunks drawn between), at a
    different place in each chunk."""
    size = path.stat().st_size
    rng = np.random.default_rng(size)
    starts = list(range(0, size, chunks.CHUNK_BYTES))
    if most is not None and len(starts) > most:
        drawn = rng.choice(len(starts) - 2, size=most - 2, replace=False) + 1
        starts = [starts[0], *(starts[i] for i in sorted(drawn)), starts[-1]]
    return [c + int(rng.integers(0, min(chunks.CHUNK_BYTES, size - c))) for c in starts]


def load_kind(kind_name: str, directory: Path) -> object:
    """Load a kind's table the way every command does; for the target table's data, read every row."""
    from pentadice.players import win
    from pentadice.tables import targets, win_tables

    if kind_name == "values":
        return table.load(SMALL, directory)
    if kind_name == "moments":
        return moment_files.load_moments(SMALL, directory)
    if kind_name in ("targets", "targets-index"):
        tt = targets.load(SMALL, directory)
        for f, m, sub in zip(*np.nonzero(tt.first >= 0), strict=True):
            tt.row(int(f), int(m), int(sub))
        return tt
    if kind_name in ("chances", "chances-index"):
        ct = chance_tables.load(SMALL, directory, table.load(SMALL, directory).values)
        if ct is not None:
            for sid, sub in zip(*np.nonzero(ct.width > 0), strict=True):
                ct.row(int(sid) >> SMALL.n_boxes, int(sid) & SMALL.box_mask, int(sub))
        return ct
    values = table.load(SMALL, directory).values
    if kind_name == "win-store":
        from pentadice.tables import win_store

        return win_store.open_win(SMALL, directory, values)
    (npy,) = files_of(directory, chunks.KINDS[kind_name])
    meta = json.loads(npy.with_suffix(".json").read_text())
    return win_tables.load_saved(SMALL, directory, kind_name, win.padded(SMALL, values), meta["params"])


class WarningsSaid(logging.Handler):
    """The text of each warning, never its record: a record keeps the exception it was given, and through its
    traceback the private copy the loader read (pytest's own handlers keep every record of a test: 64 copies of a
    134 MB win table, 9 GB and a minute of page faults)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.said: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.said.append(record.getMessage())


@pytest.mark.parametrize("kind_name", list(READERS))
def test_a_flipped_byte_in_any_chunk_is_refused_by_its_loader(built, kind_name, monkeypatch):
    """Every chunk (at most 64 drawn in the largest files): the loader every command uses refuses it, or for the
    win tables gives nothing, so that they are built again (and says so, naming the file)."""
    directory, _ = built
    monkeypatch.setitem(rules.REGISTRY, "penta", SMALL)
    monkeypatch.setattr(table.time, "sleep", lambda s: None)  # the re-read after a mismatch: no need to wait
    warnings = WarningsSaid()
    logger = logging.getLogger("pentadice")
    monkeypatch.setattr(logger, "propagate", False)  # the warnings reach this handler only, as text
    monkeypatch.setattr(logger, "handlers", [*logger.handlers, warnings])
    assert load_kind(kind_name, directory) is not None
    for path in files_of(directory, chunks.KINDS[kind_name]):
        for position in positions(path, most=64):
            flip(path, position)
            try:
                if kind_name in REBUILT:
                    warnings.said.clear()
                    assert load_kind(kind_name, directory) is None, f"byte {position} of {path.name}"
                    assert any("damaged" in w and path.name in w for w in warnings.said), warnings.said
                else:
                    with pytest.raises(table.TableError, match="damaged"):
                        load_kind(kind_name, directory)
            finally:
                flip(path, position)
        assert load_kind(kind_name, directory) is not None


@pytest.mark.parametrize("kind_name", list(READERS))
def test_a_flipped_byte_is_refused_by_every_command(built, kind_name, monkeypatch, caplog):
    """The commands that read each kind, on a byte flipped in its first chunk (the header's), a middle one and
    its last: exit 1 naming the file, or for the win tables the intact answer, built again and said so."""
    directory, intact = built
    if not READERS[kind_name]:
        pytest.skip(f"no command reads {chunks.KINDS[kind_name].what} yet")
    monkeypatch.setitem(rules.REGISTRY, "penta", SMALL)
    for path in files_of(directory, chunks.KINDS[kind_name]):
        before = path.read_bytes()
        size = len(before)
        for position in (7, size // 2, size - 1):
            flip(path, position)
            for command in READERS[kind_name]:
                fresh_win_caches()
                caplog.clear()
                with caplog.at_level(logging.WARNING, logger="pentadice"):
                    result = run(*command, "--data", directory, stdin="")
                where = f"{kind_name}: byte {position} of {path.name}, `{' '.join(command)}`"
                assert "Traceback" not in result.output, where
                assert result.exception is None or isinstance(result.exception, SystemExit), (
                    f"{where}: {result.exception}"
                )
                if kind_name in REBUILT and command is WIN_GAMES:
                    assert result.exit_code == 0, f"{where}: {result.output}"
                    assert timeless(json.loads(result.stdout)) == timeless(intact), where
                    assert "damaged" in caplog.text and path.name in caplog.text, where
                    assert path.read_bytes() == before, where  # built again: the same bytes
                    flip(path, position)  # damaged again for the next command
                else:
                    assert result.exit_code == 1, f"{where}: {result.output}"
                    assert "damaged" in result.output and path.name in result.output, f"{where}: {result.output}"
            flip(path, position)
        assert path.read_bytes() == before


def test_where_reports_a_damaged_or_edited_table_as_unusable(built, tmp_path, monkeypatch):
    source, _ = built
    monkeypatch.setitem(rules.REGISTRY, "penta", SMALL)
    work = tmp_path / "t"
    work.mkdir()
    for name in ("penta.npy", "penta.json"):
        shutil.copy(source / name, work)
    meta = json.loads((work / "penta.json").read_text())
    meta["expected_score"] += 1.0  # edited metadata: every other command refuses it
    (work / "penta.json").write_text(json.dumps(meta))
    result = run("where", "--data", work)
    assert result.exit_code == 0, result.output
    line = next(x for x in result.output.splitlines() if x.strip().startswith("penta "))
    assert "unusable" in line and "edited" in line and "solved" not in line
    assert run("advise", "2", "6", "--data", work).exit_code == 1


def test_a_record_that_does_not_describe_its_file_is_refused(tmp_path):
    a = np.arange(100_000, dtype=np.float64)
    with open(tmp_path / "a.npy", "wb") as fh:
        record = chunks.save(fh, a, "values")
    assert np.array_equal(chunks.open_array(tmp_path / "a.npy", record, "values", private=False).array, a)
    assert np.array_equal(chunks.open_array(tmp_path / "a.npy", record, "values", private=True).array, a)
    with pytest.raises(table.TableError, match="no record of the second moments"):
        chunks.open_array(tmp_path / "a.npy", record, "moments")
    with pytest.raises(ValueError, match="not a registered table kind"):
        chunks.open_array(tmp_path / "a.npy", record, "something-new")
    for bad in (
        {**record, "chunks": record["chunks"][:-8]},
        {**record, "chunks": "zz" + record["chunks"][2:]},
        {**record, "chunk_bytes": 4096},
        None,
        [],
    ):
        with pytest.raises(table.TableError, match="record"):
            chunks.open_array(tmp_path / "a.npy", bad, "values")
    with pytest.raises(table.TableError, match="holds float64"):
        chunks.open_array(tmp_path / "a.npy", {**record, "shape": [50_000, 2]}, "values")
    os.truncate(tmp_path / "a.npy", 1000)
    with pytest.raises(chunks.Damaged, match="1,000 bytes"):
        chunks.open_array(tmp_path / "a.npy", record, "values")


def test_lazy_kinds_check_each_chunk_before_its_first_use(tmp_path):
    """A target table is checked a chunk at a time: a query that reads intact chunks is answered, one that
    reaches a damaged chunk is refused, and no answer ever comes from the damaged bytes."""
    data = np.arange(200_000, dtype=np.uint16)
    with open(tmp_path / "t.npy", "wb") as fh:
        record = chunks.save(fh, data, "targets")
    flip(tmp_path / "t.npy", 128 + 2 * 150_000)  # inside element 150,000
    checked = chunks.open_array(tmp_path / "t.npy", record, "targets", private=False)
    checked.ensure(0, 1000)
    assert np.array_equal(checked.array[:1000], data[:1000])
    with pytest.raises(chunks.Damaged, match="does not match its checksum"):
        checked.ensure(149_990, 150_010)
    with pytest.raises(chunks.Damaged):
        checked.check_all()
    with pytest.raises(chunks.Damaged):  # a private copy is checked whole when read
        chunks.open_array(tmp_path / "t.npy", record, "targets", private=True)


# The server holds private copies, checked once at start-up: a damaged table stops it before it serves, and
# nothing done to the files afterwards reaches its answers.


def serve(directory: Path) -> tuple[list[str], int]:
    """The command of a Penta server on a free port of 127.0.0.1, and the port."""
    port = serving.free_port()
    return serving.quiet_serve(port, directory), port


SITUATIONS = [
    ([1, 1, 3, 4, 6], 2, {"ones": 2, "fives": 15}),
    ([2, 2, 5, 6, 6], 1, {"sixes": 24}),
    ([3, 4, 5, 5, 6], 0, {}),
]


def advise(url: str, situation: tuple) -> dict:
    dice, rolls_left, sheet = situation
    body = json.dumps({"dice": dice, "rolls_left": rolls_left, "sheet": sheet}).encode()
    request = urllib.request.Request(url + "/api/advise", body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as r:
        return json.loads(r.read())


def advise_cli(directory: Path, situation: tuple) -> dict:
    dice, rolls_left, sheet = situation
    words = " ".join(f"{k}={v}" for k, v in sheet.items())
    result = run("advise", *dice, "--rolls-left", rolls_left, "--sheet", words, "--json", "--data", directory)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def penta_full(tmp_path_factory, penta_table_dir):
    """Penta's value table and its second moments, as `pentadice solve` writes them."""
    d = tmp_path_factory.mktemp("penta-full")
    shutil.copy(penta_table_dir / "penta.npy", d)
    shutil.copy(penta_table_dir / "penta.json", d)
    result = run("solve", "--skip", "chances,win,win-end", "--data", d, "--json")  # the second moments written too
    assert result.exit_code == 0, result.output
    return d


@pytest.mark.slow
@pytest.mark.parametrize("name", ["penta.npy", "penta.m2.npy"])
def test_the_server_refuses_to_start_on_a_damaged_table(penta_full, tmp_path, name):
    size = (penta_full / name).stat().st_size
    for position in (10, size // 2, size - 1):  # the header's chunk, one inside, the last
        work = tmp_path / f"{position}"
        shutil.copytree(penta_full, work)
        flip(work / name, position)
        args, _ = serve(work)
        with open(tmp_path / "log", "wb") as out:
            proc = subprocess.run(args, stdout=out, stderr=subprocess.STDOUT, timeout=120)
        assert proc.returncode == 1
        out = (tmp_path / "log").read_text()
        assert "damaged" in out and name in out and "Traceback" not in out


@pytest.mark.slow
def test_tables_changed_under_a_running_server_change_nothing(penta_full, tmp_path):
    """Truncated, then replaced by another rule set's table while it runs: the server answers as before."""
    work = tmp_path / "t"
    shutil.copytree(penta_full, work)
    log = tmp_path / "log"
    args, port = serve(work)
    url = f"http://127.0.0.1:{port}"
    with serving.started(args, port, log) as proc:
        expected = [advise_cli(penta_full, s) for s in SITUATIONS]  # what the intact table answers
        assert advise(url, SITUATIONS[0]) == expected[0]
        os.truncate(work / "penta.npy", 0)
        os.truncate(work / "penta.m2.npy", 0)
        assert advise(url, SITUATIONS[1]) == expected[1]  # a new situation: computed, not from the cache
        with open(work / "penta.npy", "wb") as fh:  # other values copied over the file, in place (as `cp` does)
            chunks.save(fh, np.full((2, 8192, 64), 7.0), "values")
        assert advise(url, SITUATIONS[2]) == expected[2]
        assert proc.poll() is None
    assert "Traceback" not in log.read_text()


def test_a_damaged_chunk_met_in_the_middle_of_a_question_ends_it_cleanly(tmp_path, monkeypatch):
    """The target table's data is checked as a question reads it: with small chunks, a byte flipped in each
    chunk in turn; every question either gives the intact answer (it read no damaged chunk) or ends with exit 1
    naming the file, never a traceback, and some do end so."""
    monkeypatch.setitem(rules.REGISTRY, "penta", SMALL)
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 1024)
    for args in (["solve", "--json"], ["solve", "--targets", "--json"]):
        assert run(*args, "--data", tmp_path).exit_code == 0
    question = ["advise", "2", "6", "--sheet", "twos=4", "--target", "60", "--json", "--data", tmp_path]
    intact = run(*question)
    assert intact.exit_code == 0, intact.output
    path = tmp_path / "penta.targets.npy"
    refused = 0
    for position in positions(path)[1:]:  # the header's chunk is checked on loading: the others as read
        flip(path, position)
        result = run(*question)
        flip(path, position)
        assert "Traceback" not in result.output
        assert result.exception is None or isinstance(result.exception, SystemExit), result.exception  # handled
        if result.exit_code == 0:
            assert result.stdout == intact.stdout
        else:
            assert result.exit_code == 1 and "penta.targets.npy" in result.output and "damaged" in result.output
            refused += 1
    assert refused > 0


def test_a_header_numpy_cannot_parse_is_refused(tmp_path):
    header = b"{'descr': '<f8', 'fortran_order': False, 'shape': (2, 8192, 64, }"  # unbalanced: a tokenizer error
    header += b" " * (118 - len(header)) + b"\n"
    raw = b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + bytes(64)
    (tmp_path / "a.npy").write_bytes(raw)
    record = {
        "kind": "values",
        "dtype": "float64",
        "shape": [8],
        "bytes": len(raw),
        "chunk_bytes": chunks.CHUNK_BYTES,
        "algorithm": chunks.ALGORITHM,
        "chunks": "".join(f"{c:08x}" for c in chunks.crcs(raw)),  # a record that matches the bytes
    }
    with pytest.raises(chunks.Damaged, match="no valid NumPy header"):
        chunks.open_array(tmp_path / "a.npy", record, "values")


def test_a_loaded_table_is_out_of_reach_of_its_file(built, tmp_path, monkeypatch):
    """Tables checked whole are read into the process's memory: truncating the file (which would kill a
    process reading it through a memory map, with SIGBUS) or writing over it changes nothing loaded."""
    source, _ = built
    monkeypatch.setitem(rules.REGISTRY, "penta", SMALL)
    for name in ("penta.npy", "penta.json"):
        shutil.copy(source / name, tmp_path)
    loaded = table.load(SMALL, tmp_path)
    before = np.array(loaded.values)
    os.truncate(tmp_path / "penta.npy", 0)
    assert np.array_equal(loaded.values, before, equal_nan=True)
    (tmp_path / "penta.npy").write_bytes(b"\0" * len(before.tobytes()))
    assert np.array_equal(loaded.values, before, equal_nan=True)


def test_a_table_file_linked_to_a_file_of_the_user_is_never_written(tmp_path, monkeypatch):
    """A table file that is a symbolic link to something that is not a table: solving refuses to write through
    it and leaves that file as it was."""
    monkeypatch.setitem(rules.REGISTRY, "penta", SMALL)
    victim = tmp_path / "notes.txt"
    victim.write_text("my notes\n")
    data = tmp_path / "tables"
    data.mkdir()
    for name in ("penta.npy", "penta.json"):
        (data / name).symlink_to(victim)
        result = run("solve", "--skip", "chances,win,win-end", "--data", data)
        assert result.exit_code == 1 and "left alone" in result.output and "Traceback" not in result.output
        assert victim.read_text() == "my notes\n"
        (data / name).unlink()
    nowhere = tmp_path / "nowhere" / "penta.npy"
    (data / "penta.npy").symlink_to(nowhere)  # a link into a directory that is not there: nothing is created
    result = run("advise", "2", "6", "--data", data)  # a missing table is solved: refused before solving
    assert result.exit_code == 1 and f"the directory {nowhere.parent} does not exist" in result.output
    assert not nowhere.parent.exists()


def test_values_that_are_not_those_of_their_rules_are_refused(built, monkeypatch):
    """A value table whose metadata was rewritten to match other values passes the chunk checks; the
    second-moment pass, which computes the values again, refuses it (a TableError, never a traceback)."""
    from pentadice.solver import moments

    source, _ = built
    monkeypatch.setitem(rules.REGISTRY, "penta", SMALL)
    values = np.array(table.load(SMALL, source).values)
    values[~np.isnan(values)] += 3.0
    with pytest.raises(table.TableError, match="not those of its rules"):
        moments.second_moments(SMALL, values)
