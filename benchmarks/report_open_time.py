"""Time to open interactive reports in headless Chromium, and their size on disk.

    .venv/bin/python benchmarks/report_open_time.py demo-output/report/index.html [more …]

Time to open = navigation start → every figure shown at load drawn, measured by the page
itself (``window.reportRenderedAt``, from ``performance.now()``), each report opened
--repeat times in a fresh browser context (nothing cached), offline; the median is printed
with the load average, since the machine may be shared.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.report.browser import launch, open_report, why_no_browser  # noqa: E402


def mb(path: Path) -> float:
    return path.stat().st_size / 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pages", nargs="+", type=Path)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    reason = why_no_browser()
    if reason:
        raise SystemExit(reason)
    from playwright.sync_api import sync_playwright

    print("| report | time to open (median of "
          f"{args.repeat}) | min–max | index.html | plotly.min.js | folder (with PNG/SVG) |")
    print("|---|---|---|---|---|---|")
    with sync_playwright() as pw:
        browser = launch(pw)
        for html in args.pages:
            times = []
            for _ in range(args.repeat):
                opened = open_report(browser, html)
                if opened.errors or opened.failed:
                    raise SystemExit(f"{html}: {opened.errors} {opened.failed}")
                times.append(opened.rendered_ms / 1000)
                opened.close()
            folder = sum(p.stat().st_size for p in html.parent.iterdir() if p.is_file()) / 1e6
            print(f"| {html} | {statistics.median(times):.2f} s | {min(times):.2f}–"
                  f"{max(times):.2f} s | {mb(html):.1f} MB | "
                  f"{mb(html.parent / 'plotly.min.js'):.1f} MB | {folder:.1f} MB |")
        browser.close()
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f} (1 min), "
          f"{os.cpu_count()} cores")


if __name__ == "__main__":
    main()
