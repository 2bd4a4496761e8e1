"""How commands end, as a user meets them in a real process: one convention (0 done, 1 failure, 2 usage error, 130
interrupted), one line, never a traceback, a closed pipe or standard stream included (a path to the home of a user
that does not exist, a folder given for a file); and what can be checked is checked before any work."""

import io
import json
import os
import shutil
import signal
import subprocess
import sys

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from commands import run, unbuffered
from saves import PLAY
from signals import interrupt, wait_for_work

from pentadice.faces.cli import main

CLI = [sys.executable, "-m", "pentadice"]


def start(*args, data, **kwargs):
    return subprocess.Popen(
        [*CLI, *args, "--data", str(data)],
        stdin=kwargs.pop("stdin", subprocess.DEVNULL),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        **kwargs,
    )


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupted_simulate_exits_130_with_one_line(penta_table_dir, sig):
    proc = start("simulate", "-n", "50000000", data=penta_table_dir)
    wait_for_work(proc, 3)  # past Python's start-up and the table's loading (about 1 s of processor time)
    interrupt(proc, sig)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err.decode().strip().splitlines()[-1].startswith("Interrupted: ")
    assert b"Traceback" not in err and b"Aborted" not in err


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupted_batch_exits_130_and_keeps_the_answers_given(penta_table_dir, sig):
    proc = start("advise", "--batch", "-", data=penta_table_dir, stdin=subprocess.PIPE)
    proc.stdin.write(b'{"dice": [1, 1, 3, 4, 6]}\n')
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["dice"] == [1, 1, 3, 4, 6]  # at work: the first line answered
    interrupt(proc, sig)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert b"Traceback" not in err and b"Aborted" not in err
    assert err.decode().strip().startswith("Interrupted: ")


def test_damaged_table_is_a_failure_not_a_usage_error(tmp_path, penta_table_dir):
    for p in penta_table_dir.iterdir():
        if not p.name.startswith("."):
            shutil.copy(p, tmp_path / p.name)
    with open(tmp_path / "penta.npy", "r+b") as fh:
        fh.seek(4000)
        fh.write(b"\x01\x02\x03")
    for args in (["advise", "1", "1", "3", "4", "6"], ["simulate", "-n", "10"]):
        proc = subprocess.run([*CLI, *args, "--data", str(tmp_path)], capture_output=True, text=True)
        assert proc.returncode == 1, proc.stderr
        assert "Usage:" not in proc.stderr and "Traceback" not in proc.stderr
        assert "does not match its checksum" in proc.stderr


@pytest.mark.parametrize(
    "args",
    [["advise", "1", "1", "3", "4", "6"], ["advise", "--batch", "-"], ["simulate", "-n", "10"], ["--help"]],
)
def test_full_or_closed_standard_output_is_a_failure(penta_table_dir, args):
    extra = [] if args == ["--help"] else ["--data", str(penta_table_dir)]
    with open("/dev/full", "wb") as full:
        proc = subprocess.run(
            [*CLI, *args, *extra], input=b'{"dice": [1, 1, 3, 4, 6]}\n', stdout=full, stderr=subprocess.PIPE
        )
    err = proc.stderr.decode()
    if args != ["--help"]:  # click prints its own help; the commands are ours
        assert proc.returncode == 1, err
        assert "cannot write to standard output: no space left" in err
    assert "Traceback" not in err and "Exception ignored" not in err
    closed = subprocess.run(
        ["bash", "-c", 'exec "$@" >&-', "_", *CLI, *args, *extra],
        input=b'{"dice": [1, 1, 3, 4, 6]}\n',
        stderr=subprocess.PIPE,
    )
    assert closed.returncode == 1 and b"standard output is closed" in closed.stderr
    assert b"Traceback" not in closed.stderr


def test_a_reader_that_goes_away_ends_the_batch_quietly(penta_table_dir):
    lines = b'{"dice": [1, 1, 3, 4, 6]}\n' * 20000
    proc = subprocess.run(
        [
            "bash",
            "-c",
            '"$@" | head -c 10 > /dev/null; exit "${PIPESTATUS[0]}"',
            "_",
            *CLI,
            "advise",
            "--batch",
            "-",
            "--data",
            str(penta_table_dir),
        ],
        input=lines,
        stderr=subprocess.PIPE,
    )
    assert proc.returncode == 1
    assert b"Traceback" not in proc.stderr and b"Exception ignored" not in proc.stderr


def test_simulate_checks_its_output_before_playing(penta_table_dir, tmp_path, monkeypatch):
    played = []
    monkeypatch.setattr("pentadice.simulator.simulate.run", lambda *a, **k: played.append(1))
    run = CliRunner().invoke
    data = ["--data", str(penta_table_dir)]
    for out, message in [
        (tmp_path / "missing" / "games.parquet", "does not exist"),
        (tmp_path, "is a directory"),
        ("/dev/null", "is a device"),
    ]:
        result = run(main, ["simulate", "-n", "10", "--out", str(out), *data])
        assert result.exit_code == 2 and message in result.output, result.output
    assert played == []


def test_simulate_streams_parquet_to_standard_output_and_follows_symlinks(penta_table_dir, tmp_path):
    proc = subprocess.run(
        [*CLI, "simulate", "-n", "50", "--seed", "3", "--out", "-", "--data", str(penta_table_dir)],
        capture_output=True,
    )
    assert proc.returncode == 0, proc.stderr
    games = pq.read_table(io.BytesIO(proc.stdout), page_checksum_verification=True)
    assert games.num_rows == 50 and b"Mean score" in proc.stderr  # the summary goes to standard error
    real = tmp_path / "real.parquet"
    real.write_bytes(proc.stdout)  # an earlier file of games: may be replaced
    real.chmod(0o600)
    link = tmp_path / "link.parquet"
    link.symlink_to(real)
    result = CliRunner().invoke(
        main, ["simulate", "-n", "40", "--seed", "3", "--out", str(link), "--data", str(penta_table_dir)]
    )
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and pq.read_table(real).num_rows == 40
    assert oct(real.stat().st_mode & 0o777) == "0o600"


def test_simulate_never_replaces_a_file_that_is_not_games(penta_table_dir, tmp_path):
    """A typo in --out must not destroy a text, or the table's own Parquet export."""
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes")
    for victim in (notes, penta_table_dir / "penta.parquet"):
        before = victim.read_bytes()
        result = CliRunner().invoke(
            main, ["simulate", "-n", "10", "--out", str(victim), "--data", str(penta_table_dir)]
        )
        assert result.exit_code == 2 and "is left alone" in result.output
        assert victim.read_bytes() == before


def test_advise_checks_the_table_directory_before_solving(tmp_path, monkeypatch):
    solved = []
    monkeypatch.setattr("pentadice.solver.solve", lambda *a, **k: solved.append(1))
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = CliRunner().invoke(main, ["advise", "1", "1", "3", "4", "6", "--data", str(blocker / "tables")])
    assert result.exit_code == 1 and "cannot write tables to" in result.output
    assert "Usage:" not in result.output and solved == []


def test_solve_json_and_errors_never_print_a_traceback(tmp_path):
    proc = subprocess.run(
        [*CLI, "solve", "--skip", "chances,win,win-end", "--out", "/proc/pentadice-tables"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1 and proc.stderr.startswith("Error: cannot write tables to")
    assert "Traceback" not in proc.stderr
    assert (
        json.loads(
            subprocess.check_output([*CLI, "solve", "--skip", "chances,win,win-end", "--json", "--out", str(tmp_path)])
        )["rules"]
        == "penta"
    )
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_negative_seed_is_a_usage_error(penta_table_dir):
    result = CliRunner().invoke(main, ["simulate", "-n", "5", "--seed", "-1", "--data", str(penta_table_dir)])
    assert result.exit_code == 2 and "--seed" in result.output


def test_a_finished_command_is_not_killed_by_a_late_ctrl_c():
    """Once a command has ended (its output written), Python's teardown restores SIGINT's default action; a
    Ctrl-C then killed the process silently with "killed by SIGINT" (-2) although its work was done. The entry
    point ignores the signals once the command is over."""
    code = (
        "import signal, sys\n"
        "sys.argv = ['pentadice', 'where', '--json']\n"
        "from pentadice.faces.cli import entry\n"
        "try:\n"
        "    entry()\n"
        "except SystemExit as e:\n"
        "    print(e.code, signal.getsignal(signal.SIGINT) is signal.SIG_IGN, file=sys.stderr)\n"
        "    signal.raise_signal(signal.SIGINT)\n"  # a Ctrl-C during the teardown: ignored now
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.split()[-2:] == ["0", "True"]
    assert json.loads(proc.stdout)["directory"]


def test_maxi_yatzy_distribution_and_target_are_refused_before_any_solve(tmp_path, monkeypatch):
    from pentadice.faces.cli import loading

    def no_solve(*args, **kwargs):
        raise AssertionError("the value table was loaded or solved before the refusal")

    monkeypatch.setattr(loading, "load_advisor", no_solve)
    empty = tmp_path / "tables"
    empty.mkdir()
    dist = run("distribution", "--rules", "maxi-yatzy", "--data", str(empty))
    assert dist.exit_code == 2 and "not computed" in dist.stderr and "GB" in dist.stderr, dist.output
    target = run(
        "advise", "--rules", "maxi-yatzy", "1", "1", "3", "4", "6", "6", "--target", "300", "--data", str(empty)
    )
    assert target.exit_code == 1 and "too large to build" in target.stderr, target.output
    assert not list(empty.rglob("*.npy"))


def test_simulate_to_a_closed_pipe_ends_quietly(penta_table_dir):
    cmd = [sys.executable, "-m", "pentadice", "simulate", "-n", "20000", "--seed", "1", "--out", "-"]
    proc = subprocess.Popen(
        [*cmd, "--data", str(penta_table_dir)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=unbuffered()
    )
    head = proc.stdout.read(4)
    proc.stdout.close()  # as `| head -c 4` does
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 1
    assert head == b"PAR1"
    assert "Error" not in err and "Broken pipe" not in err and "Traceback" not in err, err


def test_closed_standard_error_or_input_are_read_as_nothing(penta_table_dir):
    data = ["--data", str(penta_table_dir)]
    sim = subprocess.run(
        ["bash", "-c", 'exec "$@" 2>&-', "_", *CLI, "simulate", "-n", "20", *data], capture_output=True
    )
    assert sim.returncode == 0 and b"Mean score" in sim.stdout
    batch = subprocess.run(
        ["bash", "-c", 'exec "$@" <&-', "_", *CLI, "advise", "--batch", "-", *data], capture_output=True
    )
    assert batch.returncode == 0 and batch.stdout == b"" and b"Traceback" not in batch.stderr


def test_bad_input_files_get_one_line_without_the_usage_banner(penta_table_dir, tmp_path):
    data = ["--data", str(penta_table_dir)]
    for args in (
        ["advise", "1", "1", "3", "4", "6", "--sheet-file", str(tmp_path)],
        ["advise", "--batch", str(tmp_path / "missing.jsonl")],
        ["advise", "--batch", str(tmp_path)],
        ["play", "--resume", str(tmp_path)],
    ):
        result = run(*args, *data, input="quit\n")
        assert result.exit_code == 2, result.output
        assert "Usage:" not in result.output and result.output.startswith("Error: "), result.output


def test_home_of_a_user_that_does_not_exist(penta_table_dir, tmp_path):
    for args in (
        ["advise", "1", "1", "3", "4", "6", "--data", "~nosuchuser/x"],
        ["where", "--data", "~nosuchuser"],
        [*PLAY, "--data", str(penta_table_dir), "--save", "~nosuchuser/g.json"],
    ):
        result = run(*args, input="quit\n")
        assert result.exit_code in (1, 2) and "nosuchuser" in result.output, result.output
        assert not isinstance(result.exception, RuntimeError)
    save = tmp_path / "g.json"
    result = run(*PLAY, "--data", str(penta_table_dir), "--save", str(save), input="save ~nosuchuser/g.json\nquit\n")
    assert result.exit_code == 0, result.output
    assert "Not allowed: cannot expand '~nosuchuser'" in result.output and save.exists()


def test_ctrl_c_inside_an_import_is_taken_once_the_import_is_done(monkeypatch):
    """Ctrl-C raised inside Python's import machinery would be printed as "Exception ignored" and lost: the
    handler sends it again a moment later instead, and raises it anywhere else."""
    import types

    from pentadice.support import exits

    sent = []

    class Timer:  # the moment later, recorded rather than waited for
        def __init__(self, seconds, fn, args):
            sent.append((seconds, fn, args))

        def start(self):
            pass

    monkeypatch.setattr(exits.threading, "Timer", Timer)

    def frame(filename, back=None):
        return types.SimpleNamespace(f_code=types.SimpleNamespace(co_filename=filename), f_back=back)

    in_import = frame("/usr/lib/python3/weakref.py", frame("<frozen importlib._bootstrap>", frame("solve.py")))
    exits._interrupt(signal.SIGINT, in_import)
    assert len(sent) == 1 and sent[0][2][1] == signal.SIGINT and sent[0][0] == exits.IMPORT_RETRY_SECONDS
    with pytest.raises(KeyboardInterrupt):
        exits._interrupt(signal.SIGINT, frame("solve.py", frame("cli.py")))
    assert len(sent) == 1
