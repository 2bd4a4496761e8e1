"""Option values a command cannot use are usage errors (exit 2, the problem named in one line, no traceback) before
anything starts: ``serve --keep-days`` of ``nan``, ``inf`` or a negative number (a server that would start, then
fail its hourly expiry and never remove an idle game), ``build --memory 1e999`` (infinity)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from pentadice.faces.cli import main


def refused(*args: str) -> str:
    """The error line of a command refused as a usage error."""
    done = CliRunner().invoke(main, list(args))
    assert done.exit_code == 2, done.output
    assert "Traceback" not in done.output and isinstance(done.exception, SystemExit), done.output
    errors = [line for line in done.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, done.output
    return errors[0]


@pytest.mark.parametrize(("value", "says"), [
    ("nan", "'nan' is not a number"),
    ("NaN", "'NaN' is not a number"),
    ("inf", "'inf' is not a finite number"),
    ("-inf", "'-inf' is not a finite number"),
    ("1e999", "'1e999' is not a finite number"),
    ("-1", "'-1' is not greater than 0"),
    ("0", "'0' is not greater than 0"),
    ("36501", "'36501' is more than 36500 days"),
    ("36500.0000001", "'36500.0000001' is more than 36500 days"),
    ("1e-300", "'1e-300' is less than an hour (0.04167 days)"),
    ("0.04", "'0.04' is less than an hour (0.04167 days)"),
    ("soon", "'soon' is not a number"),
])  # fmt: skip
def test_serve_refuses_keep_days_it_cannot_use(value, says, monkeypatch):
    from pentadice.faces.cli import serve

    def started(*args, **kwargs):
        raise AssertionError(f"serve started with --keep-days {value}")  # not a server that runs until Ctrl-C

    monkeypatch.setattr(serve, "_served_rules", started)
    line = refused("serve", "--keep-days", value, "--port", "0")
    assert "--keep-days" in line and says in line, line


@pytest.mark.parametrize(("value", "says"), [
    ("1e999", "'1e999' is too large"),
    ("2e18", "'2e18' is too large"),
    ("9999999TiB", "'9999999TiB' is too large"),
])  # fmt: skip
def test_build_refuses_a_memory_no_machine_has(tmp_path, value, says):
    line = refused("build", "--rules", "yatzy", "--data", str(tmp_path), "--memory", value)
    assert "--memory" in line and says in line, line
    assert list(tmp_path.iterdir()) == []


def test_a_usable_keep_days_is_taken():
    from pentadice.faces.cli.options import PositiveNumber

    assert PositiveNumber(36500).convert("0.5", None, None) == 0.5
    assert PositiveNumber(36500).convert(30.0, None, None) == 30.0
    assert PositiveNumber(36500, "days", minimum=(1 / 24, "an hour")).convert(str(1 / 24), None, None) == 1 / 24


@pytest.mark.parametrize(
    "command", [["advise", "1", "1", "3", "4", "6"], ["simulate", "-n", "1"], ["export-app", "app"]]
)
@pytest.mark.parametrize("value", ["", "  "], ids=["empty", "blank"])
def test_a_blank_table_directory_is_a_usage_error_not_the_default(command, value, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    line = refused(*command, "--data", value)
    assert "--data" in line and "names no folder" in line, line
    assert list(tmp_path.iterdir()) == []
