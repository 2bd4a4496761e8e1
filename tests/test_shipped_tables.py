"""The tables the package ships (pentadice/tables/shipped/) are those a fresh solve writes, bit for bit, and a
command that finds no Penta table copies them instead of solving: checked as a solved table is, never for house
rules or a reduced game that takes Penta's name, and never half-written.

Cost: the session's Penta solve and second moments (shared with other files), and copies of 20 MB."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from pentadice.advisor import Advisor
from pentadice.game import rules
from pentadice.tables import moment_files, shipped, table
from tests import solutions


def _no_solve():
    raise AssertionError("solved, where the shipped table should have been copied")


def test_the_shipped_tables_are_a_fresh_solve_bit_for_bit():
    rs, values, m2, _timings = solutions.with_second_moments("penta")
    got = table.verify(rs, shipped.SHIPPED)
    assert got.values.tobytes() == np.ascontiguousarray(values).tobytes()
    assert moment_files.load_moments(rs, shipped.SHIPPED, got.values).tobytes() == np.ascontiguousarray(m2).tobytes()
    assert moment_files.verify_moments(got) is not None


def test_a_missing_penta_table_is_copied_from_the_package(tmp_path):
    rs = rules.get_rules("penta")
    loaded = table.load_or_solve(rs, tmp_path, _no_solve, shipped=lambda files: shipped.install(rs, files))
    assert loaded.expected_score == pytest.approx(254.4848458817, abs=1e-9)
    source = table.TableFiles(shipped.SHIPPED, "penta")
    for kind in shipped.KINDS:
        assert getattr(loaded.files, kind).read_bytes() == getattr(source, kind).read_bytes()
    assert not list(tmp_path.glob("*.tmp")) and not list(tmp_path.glob(".*.tmp"))
    advisor = Advisor.load("penta", str(tmp_path), compiled=False)
    assert advisor.has_moments_file(), "the SDs come with it"


def test_a_rule_set_without_shipped_tables_is_solved(tmp_path):
    kiriki = rules.get_rules("kiriki")
    assert not shipped.available(kiriki)
    assert not shipped.install(kiriki, table.TableFiles(tmp_path, "kiriki"))
    assert not list(tmp_path.iterdir())


def test_a_game_that_takes_pentas_name_is_not_given_pentas_table(penta_is_small):
    """A reduced game registered as "penta" (as the tests' small games are) has another definition."""
    assert not shipped.available(rules.get_rules("penta"))


def test_a_damaged_shipped_table_is_refused_when_loaded(tmp_path, monkeypatch):
    fake = tmp_path / "shipped"
    shutil.copytree(shipped.SHIPPED, fake)
    values = fake / "penta.npy"
    raw = bytearray(values.read_bytes())
    raw[-100] ^= 0xFF
    values.write_bytes(bytes(raw))
    monkeypatch.setattr(shipped, "SHIPPED", fake)
    data = tmp_path / "data"
    data.mkdir()
    with pytest.raises(table.TableError, match=r"damaged|checksum|does not match"):
        penta = rules.get_rules("penta")
        table.load_or_solve(penta, data, _no_solve, shipped=lambda files: shipped.install(penta, files))
