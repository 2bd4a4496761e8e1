"""The offline app's first answer: from the navigation to the first advice, the app opened with no network in
headless Chromium slowed 4x (DevTools ``Emulation.setCPUThrottlingRate``, a phone-class budget), its files and
Penta's tables from the service worker's cache (median of 5 openings; goal: within 1 s). Also the download and
storage size of each rule set the app can take. Prints figures; asserts nothing about time.

Run: ``.venv/bin/python benchmarks/bench_offline.py [--data DIR] [--runs 5] [--throttle 4]`` (the Penta table in
the table directory: ``make table``).
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np

from pentadice.faces.web import app_tables
from pentadice.game import rules

CHROMIUM = os.environ.get("PENTADICE_CHROMIUM", "/usr/bin/chromium")
SITUATION = {"dice": [1, 1, 3, 4, 6], "rolls_left": 2, "sheet": {"ones": 3, "chance": 22}}
# Put in every page before its scripts: the first advice asked as soon as the page's scripts have run, its time
# since the navigation began kept (performance.now() counts from the navigation's start).
FIRST_ADVICE = """
window.addEventListener("DOMContentLoaded", async () => {
  try {
    const answer = await PentaOffline.api("POST", "/api/advise", %s);
    window.__firstAdvice = {ms: performance.now(), best: answer.best, mode: PentaOffline.mode};
  } catch (e) { window.__firstAdvice = {error: String(e && e.message)}; }
});
"""


class QuietFiles(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args) -> None:
        pass


def sizes() -> None:
    """Each rule set's download (and the service worker's storage): its description and its values."""
    print("Download and storage per rule set (JSON description + float64 values):")
    for name, rs in rules.REGISTRY.items():
        values = app_tables.values_bytes(rs)
        try:
            app_tables.check_size(rs)
        except app_tables.TooLarge:
            print(f"  {name:<22} values {values / 2**20:8.1f} MiB: too large, not exported")
            continue
        described = len(app_tables.export(rs, np.zeros(rs.table_shape)).json_bytes)
        total = (values + described) / 2**20
        print(f"  {name:<22} values {values / 2**20:6.1f} MiB + JSON {described / 1024:5.0f} KiB = {total:5.1f} MiB")


def first_advice(folder: Path, runs: int, throttle: float) -> list[float]:
    """Milliseconds from the navigation to the first advice, offline, ``runs`` times."""
    from playwright.sync_api import sync_playwright

    handler = functools.partial(QuietFiles, directory=str(folder))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_port}/"
    chromium = CHROMIUM if os.access(CHROMIUM, os.X_OK) else shutil.which("chromium")
    times = []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, args=["--headless", "--no-sandbox"])
            context = browser.new_context(viewport={"width": 390, "height": 844})
            page = context.new_page()
            page.goto(url)  # the first visit: the service worker stores the app and Penta's tables
            page.wait_for_selector("body[data-ready='1']")
            page.evaluate("navigator.serviceWorker.ready.then(() => caches.keys())")
            page.wait_for_function("() => !!navigator.serviceWorker.controller")
            context.add_init_script(FIRST_ADVICE % json.dumps(SITUATION))
            context.set_offline(True)
            cdp = context.new_cdp_session(page)
            cdp.send("Emulation.setCPUThrottlingRate", {"rate": throttle})
            for _ in range(runs):
                page.goto(url + "?fast=1")
                page.wait_for_function("() => !!window.__firstAdvice", timeout=60_000)
                got = page.evaluate("window.__firstAdvice")
                if "error" in got or got["mode"] != "offline":
                    raise SystemExit(f"the first advice failed: {got}")
                times.append(got["ms"])
            browser.close()
    finally:
        httpd.shutdown()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=None, help="the table directory holding penta's table")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--throttle", type=float, default=4.0)
    args = parser.parse_args()
    sizes()
    with tempfile.TemporaryDirectory(prefix="pentadice-bench-offline-") as tmp:
        folder = Path(tmp) / "app"
        cmd = [sys.executable, "-m", "pentadice", "export-app", str(folder)]
        if args.data:
            cmd += ["--data", args.data]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        times = first_advice(folder, args.runs, args.throttle)
    shown = ", ".join(f"{t:.0f}" for t in times)
    print(
        f"First advice offline, CPU slowed {args.throttle:g}x, navigation to answer: median "
        f"{statistics.median(times):.0f} ms over {len(times)} openings ({shown} ms); goal: within 1000 ms"
    )


if __name__ == "__main__":
    main()
