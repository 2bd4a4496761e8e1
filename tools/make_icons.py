"""Make the offline app's icons (``pentadice/faces/web/static/icons/``) from the page's ``favicon.svg``, rendered by
headless Chromium: ``icon-192.png`` and ``icon-512.png`` (the die as it is, on a transparent ground) and
``maskable-512.png`` (the die inside the safe zone, on the accent colour, for launchers that crop icons to a
shape). Run once, the PNGs committed: ``.venv/bin/python tools/make_icons.py``."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from playwright.sync_api import sync_playwright

STATIC = Path(__file__).resolve().parent.parent / "pentadice" / "faces" / "web" / "static"
ACCENT = "#1f6f5c"
CHROMIUM = os.environ.get("PENTADICE_CHROMIUM", "/usr/bin/chromium")


def page_html(svg: str, size: int, maskable: bool) -> str:
    """A page showing the icon at ``size`` pixels: the whole die, or for a maskable icon the die at 70 % on the
    accent colour (the safe zone is the central circle of 80 %)."""
    inner = round(size * 0.7) if maskable else size
    ground = ACCENT if maskable else "transparent"
    sized = svg.replace("<svg ", '<svg width="100%" height="100%" ', 1)
    return (
        f"<!doctype html><html><body style='margin:0;background:{ground};width:{size}px;height:{size}px;"
        f"display:flex;align-items:center;justify-content:center'>"
        f"<div style='width:{inner}px;height:{inner}px'>{sized}</div></body></html>"
    )


def main() -> None:
    svg = (STATIC / "favicon.svg").read_text()
    out = STATIC / "icons"
    out.mkdir(exist_ok=True)
    chromium = CHROMIUM if os.access(CHROMIUM, os.X_OK) else shutil.which("chromium")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=["--headless", "--no-sandbox", "--disable-gpu"])
        for name, size, maskable in (("icon-192.png", 192, False), ("icon-512.png", 512, False),
                                     ("maskable-512.png", 512, True)):  # fmt: skip
            page = browser.new_page(viewport={"width": size, "height": size})
            page.set_content(page_html(svg, size, maskable))
            page.screenshot(path=str(out / name), omit_background=not maskable)
            page.close()
            print(f"{out / name}: {(out / name).stat().st_size} bytes")
        browser.close()


if __name__ == "__main__":
    main()
