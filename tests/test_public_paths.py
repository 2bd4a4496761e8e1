"""The public import paths of docs/architecture.md: each imports, the README, docs/ and the notebooks import
from no other, the console script and ``python -m pentadice`` start; and a Numba cache directory filled by the
layout before the folders (an old install's) next to this one gives the same values."""

import importlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ARCHITECTURE = ROOT / "docs" / "architecture.md"
IMPORT = re.compile(r"^\s*from (pentadice[\w.]*) import ([\w, ]+?)\s*(?:#.*)?$", re.M)
BEFORE_FOLDERS = "61b4319"  # the last commit with the flat layout (the modules moved into layer folders after it)


def listed() -> dict[str, set[str]]:
    """The section "Public import paths" of docs/architecture.md: module -> names."""
    text = ARCHITECTURE.read_text()
    section = text.split("### Public import paths", 1)[1].split("\n#", 1)[0]
    paths: dict[str, set[str]] = {}
    for line in section.splitlines():
        if line.startswith("- `pentadice"):
            module, _, rest = line[3:].partition("`")
            paths[module] = set(re.findall(r"`(\w+)`", rest))
    return paths


def documented() -> set[tuple[str, str]]:
    """Every ``from pentadice... import name`` in the README, docs/ and the notebooks' code cells."""
    texts = [ROOT.joinpath("README.md").read_text()]
    texts += [p.read_text() for p in sorted((ROOT / "docs").rglob("*.md"))]
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(notebook.read_text())["cells"]
        texts += ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    found = set()
    for text in texts:
        for module, names in IMPORT.findall(text):
            found |= {(module, n.strip().split(" as ")[0]) for n in names.split(",") if n.strip()}
    return found


def test_the_documents_import_only_the_listed_paths():
    paths = listed()
    assert documented(), "no import found in the documents: the pattern is wrong"
    unlisted = sorted(f"{m}:{n}" for m, n in documented() if n not in paths.get(m, ()))
    assert unlisted == [], "add these to docs/architecture.md's public import paths (and keep them working)"


@pytest.mark.parametrize("module", sorted(listed()))
def test_each_listed_path_imports(module):
    imported = importlib.import_module(module)
    for name in listed()[module]:
        assert hasattr(imported, name) or importlib.util.find_spec(f"{module}.{name}"), f"{module}:{name}"


def test_the_console_script_and_python_m_start():
    from pentadice.cli import entry
    from pentadice.faces.cli import entry as faces_entry

    assert entry is faces_entry
    run = subprocess.run([sys.executable, "-m", "pentadice", "--help"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and "solve" in run.stdout, run.stderr


SOLVE = (  # the values and the second moments (kernels in solver/moments.py: a path both layouts have)
    "import hashlib; from pentadice import solver; from {rules} import get_rules; "
    "s = solver.solve(get_rules('penta'), moments=True); "
    "print(repr(s.expected_score), hashlib.sha256(s.values.tobytes() + s.m2.tobytes()).hexdigest())"
)


@pytest.mark.slow
def test_an_upgrade_in_place_over_the_flat_layouts_numba_cache_gives_the_same_values(tmp_path):
    """Solve Penta's values and second moments with a checkout of the flat layout, then replace its modules by
    these in place (its Numba cache kept, as an upgrade keeps ``__pycache__``) and solve again: the same tables
    to the last bit, from kernels compiled again. Moved modules are looked up under their new paths; those that
    kept their path (``solver/moments.py``) carry a new source stamp, and the stale-cache check hashes their
    sources."""
    git = shutil.which("git")
    if git is None or subprocess.run([git, "cat-file", "-e", BEFORE_FOLDERS], cwd=ROOT).returncode != 0:
        pytest.skip(f"the commit {BEFORE_FOLDERS} (the layout before the folders) is not in this clone")
    checkout = tmp_path / "checkout"
    add = [git, "worktree", "add", "--detach", str(checkout), BEFORE_FOLDERS]
    subprocess.run(add, cwd=ROOT, check=True, capture_output=True)
    try:
        cache = tmp_path / "numba"
        env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "PYTHONPATH": str(checkout)}

        def solve(rules_module: str) -> str:
            code = SOLVE.format(rules=rules_module)
            run = subprocess.run(
                [sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600
            )
            assert run.returncode == 0, run.stderr
            return run.stdout.strip()

        before = solve("pentadice.rules")
        cached = {p: p.stat().st_mtime_ns for p in cache.rglob("*.nbi")}
        assert any("solver_" in p.parent.name for p in cached), "the flat layout cached no solver kernel"
        package = checkout / "pentadice"
        for old in [p for p in package.rglob("*") if p.is_file() and "__pycache__" not in p.parts]:
            old.unlink()
        shutil.copytree(ROOT / "pentadice", package, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
        after = solve("pentadice.game.rules")
        assert after == before
        fresh = [p for p in cache.rglob("*.nbi") if cached.get(p) != p.stat().st_mtime_ns]
        assert any("solver_" in p.parent.name for p in fresh), "the moments' kernels were not compiled again"
    finally:
        subprocess.run([git, "worktree", "remove", "--force", str(checkout)], cwd=ROOT, capture_output=True)
