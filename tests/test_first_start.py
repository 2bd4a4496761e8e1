"""A first use after installing: with no table and an empty Numba cache, `pentadice advise` answers from the tables
the package ships (SDs included) without solving or compiling, and `serve` knows that its first start compiles the
advice kernels (and says so).

Cost: two short processes (about a second each)."""

from __future__ import annotations

import os
import subprocess
import sys


def _fresh_env(tmp_path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PENTADICE_DATA"}
    return {**env, "NUMBA_CACHE_DIR": str(tmp_path / "numba"), "XDG_DATA_HOME": str(tmp_path / "xdg")}


def test_a_first_advise_answers_from_the_shipped_tables(tmp_path):
    data = tmp_path / "tables"
    proc = subprocess.run(
        [sys.executable, "-m", "pentadice", "advise", "1", "1", "3", "4", "6", "--data", str(data)],
        capture_output=True, text=True, env=_fresh_env(tmp_path), timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "Best: Keep 4 and reroll four dice (expected final score 249.769)" in proc.stdout
    assert "SD" in proc.stdout.split("rank", 1)[1].split("\n", 1)[0], "the SDs come with the first answer"
    assert "Solving" not in proc.stderr and "Compiling" not in proc.stderr, proc.stderr
    assert sorted(p.name for p in data.iterdir() if not p.name.startswith(".")) == [
        "penta.json", "penta.m2.json", "penta.m2.npy", "penta.npy", "penta.parquet",
    ]  # fmt: skip
    assert not list((tmp_path / "numba").rglob("*.nbi")), "nothing was compiled"


def test_a_first_start_of_the_server_knows_it_compiles(tmp_path):
    code = "from pentadice.faces.web.advising import needs_compiling; print(needs_compiling())"
    fresh = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_fresh_env(tmp_path))
    assert fresh.stdout.strip() == "True", fresh.stderr
