"""A newcomer's first minutes, timed from nothing: pip's cache empty, Numba's cache empty, no table.

1. From a fresh copy of the checkout: `make play`, split into its install (the packages playing needs) and the
   game's start until the first prompt of the first move ("keep, roll or score?").
2. A pip user: the wheel built (not counted), installed into a new virtual environment outside the checkout, then
   `pentadice advise 1 1 3 4 6` (SDs included), then `pentadice serve` until its page answers.

Single runs (each takes a minute or more and downloads nothing twice only because pip's cache is emptied each
time); saved to benchmarks/results/first-use.json for the Performance page. Asserts nothing about time.

`python benchmarks/bench_first_use.py`
"""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import results
from bench_game_latency import free_port

ROOT = Path(__file__).resolve().parent.parent
PROMPT = b"keep, roll or score?"


def fresh_copy(work: Path) -> Path:
    """The checkout's tracked and new files (what a clone of this work tree holds), without any built state."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True,
                            check=True).stdout.split(b"\0")  # fmt: skip
    copy = work / "clone"
    for name in filter(None, listed):
        source, target = ROOT / name.decode(), copy / name.decode()
        if source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return copy


def clean_env(work: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PENTADICE_DATA", "NUMBA_CACHE_DIR", "VIRTUAL_ENV")}
    pip_cache = work / "pip-cache"
    shutil.rmtree(pip_cache, ignore_errors=True)
    return {**env, "PIP_CACHE_DIR": str(pip_cache), "XDG_DATA_HOME": str(work / "xdg")}


def first_move(copy: Path, env: dict[str, str]) -> tuple[float, float]:
    """``(install seconds, seconds from the game's start to its first prompt)`` of `make play` in ``copy``."""
    start = time.perf_counter()
    subprocess.run(["make", ".venv/.installed-runtime"], cwd=copy, env=env, check=True, capture_output=True)
    installed = time.perf_counter() - start
    start = time.perf_counter()
    proc = subprocess.Popen(["make", "play"], cwd=copy, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)  # fmt: skip
    seen = b""
    try:
        while PROMPT not in seen:
            ready, _, _ = select.select([proc.stdout], [], [], 600)
            chunk = os.read(proc.stdout.fileno(), 65536) if ready else b""
            if not chunk:
                raise SystemExit(f"`make play` ended before its first prompt:\n{seen.decode(errors='replace')}")
            seen += chunk
        started = time.perf_counter() - start
    finally:
        proc.stdin.close()
        proc.wait(120)
    return installed, started


def pip_user(work: Path, env: dict[str, str]) -> tuple[float, float, float]:
    """``(pip install seconds, first advise seconds, seconds until serve's page answers)``."""
    wheels = work / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(wheels), str(ROOT)],
                   check=True, capture_output=True)  # fmt: skip
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    start = time.perf_counter()
    subprocess.run([venv / "bin" / "pip", "install", "--quiet", *wheels.glob("*.whl")], env=env, check=True,
                   capture_output=True)  # fmt: skip
    installed = time.perf_counter() - start
    user = {**env, "NUMBA_CACHE_DIR": str(work / "numba")}
    outside = work / "elsewhere"
    outside.mkdir()
    start = time.perf_counter()
    done = subprocess.run([venv / "bin" / "pentadice", "advise", "1", "1", "3", "4", "6"], cwd=outside, env=user,
                          capture_output=True, text=True)  # fmt: skip
    advised = time.perf_counter() - start
    if done.returncode != 0 or "SD" not in done.stdout:
        raise SystemExit(f"the first advise failed:\n{done.stdout}{done.stderr}")
    port = free_port()
    start = time.perf_counter()
    server = subprocess.Popen([venv / "bin" / "pentadice", "serve", "--port", str(port)], cwd=outside, env=user,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                if server.poll() is not None or time.perf_counter() - start > 900:
                    raise SystemExit("`pentadice serve` did not serve its page") from None
                time.sleep(0.2)
        served = time.perf_counter() - start
    finally:
        server.terminate()
        server.wait(60)
    return installed, advised, served


def main() -> list[tuple[str, str, str]]:
    started = results.stamp()
    rows = []
    with tempfile.TemporaryDirectory(prefix="pentadice-first-use-") as tmp:
        work = Path(tmp)
        installed, first = first_move(fresh_copy(work), clean_env(work))
        rows.append(("`make play` from a fresh copy, pip's cache empty: until the first move's prompt",
                     f"{installed + first:.1f} s ({installed:.1f} s installing, {first:.1f} s starting the game)",
                     "<= 90 s"))  # fmt: skip
        print(f"  {rows[-1][0]}: {rows[-1][1]}", flush=True)
        pip_s, advise_s, serve_s = pip_user(work, clean_env(work))
        rows.append(("`pip install` of the wheel into a new virtual environment, pip's cache empty",
                     f"{pip_s:.1f} s", ""))  # fmt: skip
        rows.append(("then a first `pentadice advise 1 1 3 4 6` (no table, empty Numba cache; SDs included)",
                     f"{advise_s:.2f} s", "<= 5 s"))  # fmt: skip
        rows.append(("then a first `pentadice serve` until its page answers (it compiles the advice kernels)",
                     f"{serve_s:.1f} s", ""))  # fmt: skip
        for what, figure, _goal in rows[1:]:
            print(f"  {what}: {figure}", flush=True)
    saved = results.save("first-use", started, rows, " ".join(["make bench", *sys.argv[1:]]))
    print(f"(saved to {saved.relative_to(results.ROOT)}; docs/performance.md shows them)")
    return rows


if __name__ == "__main__":
    main()
