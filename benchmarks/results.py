"""The benchmarks' figures as files, and the Performance page written from them.

`make bench` and `make bench-serve` each save their rows to benchmarks/results/<name>.json (what the user runs, the
figure, the goal where there is one) with when and where they were measured: the day, pentadice's version and commit,
the machine's cores and CPU, and its load average at the start and the end. docs/performance.md shows those files'
rows between two markers; the benchmarks rewrite that part of the page when they save, `python
benchmarks/results.py` rewrites it from the files as they are, and tests/test_docs_site.py fails while the page and
the files disagree.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
PAGE = ROOT / "docs" / "performance.md"
START = "<!-- figures: written by benchmarks/results.py from benchmarks/results/*.json; do not edit by hand -->"
END = "<!-- figures: end -->"
# The files in the order the page shows them, with the heading of each.
RUNS = (
    ("first-use", "A newcomer's first minutes (`make bench`, benchmarks/bench_first_use.py)"),
    ("bench", "Commands, solves and simulations (`make bench`)"),
    ("serve-advice", "The advice API under load (`make bench-serve`, wrk)"),
    ("serve-games", "Games through the API under load (`make bench-serve`)"),
)


def cpu_model() -> str:
    """The CPU's model name as the system reports it (Linux), else the platform's word for it."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def stamp() -> dict:
    """When and where a run is measured: the day (UTC), version, commit ("+changes" when the work tree differs),
    cores, CPU and the load average now."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        release = version("pentadice")
    except PackageNotFoundError:
        release = "unknown"

    def git(*args: str) -> str:
        try:
            done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return ""
        return done.stdout.strip() if done.returncode == 0 else ""

    commit = git("rev-parse", "--short", "HEAD") or "no commit"
    if git("status", "--porcelain", "--untracked-files=no"):
        commit += "+changes"
    return {
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "version": release,
        "commit": commit,
        "cores": os.cpu_count(),
        "cpu": cpu_model(),
        "load_start": round(os.getloadavg()[0], 2),
    }


def save(name: str, started: dict, rows: list[tuple[str, str, str]], command: str) -> Path:
    """Writes ``rows`` ((what the user runs, figure, goal)) of a run begun at ``started`` (:func:`stamp`) to
    benchmarks/results/``name``.json (atomically), then rewrites the Performance page's figures."""
    record = {**started, "load_end": round(os.getloadavg()[0], 2), "command": command,
              "rows": [{"what": w, "figure": f, "goal": g} for w, f, g in rows]}  # fmt: skip
    RESULTS.mkdir(parents=True, exist_ok=True)
    target = RESULTS / f"{name}.json"
    fd, tmp = tempfile.mkstemp(dir=RESULTS, prefix=f".{name}.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(record, fh, indent=1, ensure_ascii=False)
        fh.write("\n")
    os.replace(tmp, target)
    write_page()
    return target


def load_runs(folder: Path = RESULTS) -> list[tuple[str, dict]]:
    """``(heading, record)`` of every results file there is, in the page's order."""
    return [(heading, json.loads(path.read_text(encoding="utf-8")))
            for name, heading in RUNS if (path := folder / f"{name}.json").exists()]  # fmt: skip


def render(runs: list[tuple[str, dict]]) -> str:
    """The page's figures: one table per run, each row with the command, the figure, the date, the machine and
    the load."""
    out = []
    for heading, r in runs:
        machine = f"{r['cores']} cores, {r['cpu']}"
        load = f"{r['load_start']:.2f} to {r['load_end']:.2f}"
        out += [f"### {heading}", "",
                f"`{r['command']}`, pentadice {r['version']} (commit {r['commit']}).", "",
                "| what the user runs | measured | goal | date | machine | load |",
                "| --- | --- | --- | --- | --- | --- |"]  # fmt: skip
        for row in r["rows"]:
            cells = [row["what"], row["figure"], row["goal"], r["date"], machine, load]
            out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
        out.append("")
    return "\n".join(out)


def figures_of_page(text: str) -> str:
    """What the page holds between its markers."""
    _head, sep, rest = text.partition(START + "\n")
    body, sep2, _tail = rest.partition(END)
    if not sep or not sep2:
        raise ValueError(f"{PAGE.name} lacks its figures' markers")
    return body


def write_page(page: Path = PAGE) -> None:
    """Rewrites the page's figures from the results files."""
    text = page.read_text(encoding="utf-8")
    old = figures_of_page(text)
    page.write_text(text.replace(START + "\n" + old + END, START + "\n" + render(load_runs()) + "\n" + END))


if __name__ == "__main__":
    write_page()
    print(f"wrote the figures of {PAGE.relative_to(ROOT)} from {RESULTS.relative_to(ROOT)}/", file=sys.stderr)
