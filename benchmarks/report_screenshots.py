"""Regenerate the report screenshots in docs/img/: the demo report, a power-capping and a
variable-capacity comparison, taken in Debian's headless Chromium (Playwright).

    .venv/bin/python benchmarks/report_screenshots.py            # all three
    .venv/bin/python benchmarks/report_screenshots.py --only power

The power-capping and variable-capacity comparisons are small experiments (a minute or
two on 2 cores); the demo reuses ./demo-output when `make demo` has run (else runs it,
several minutes: it includes the CP dispatcher hcp3). Runs are stored in --work and reused.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.report.browser import launch, open_report, why_no_browser  # noqa: E402

DOCS = REPO / "docs" / "img"
CLI = [str(Path(sys.executable).parent / "dispatchlab")]

POWER = """
name = "power-capping"
platforms = ["eurora"]
dispatchers = ["easy", "easy-power", "prb-power"]
seeds = [0]
[[workloads]]
name = "cap-10kW"
path = "gen:eurora-like:jobs=400,seed=1"
scenario = "gen:constant:what=power_cap,value=10000"
[[workloads]]
name = "cap-12kW"
path = "gen:eurora-like:jobs=400,seed=1"
scenario = "gen:constant:what=power_cap,value=12000"
"""

CAPACITY = """
name = "variable-capacity"
platforms = [{ spec = "nodes=32,cores=24", name = "32x24" }]
dispatchers = ["ff-aware", "ff-unaware", "target-asap"]
seeds = [1]
[[workloads]]
name = "synthetic-log"
path = "gen:vc-synthetic:kind=log,seed=1"
scenario = "gen:capacity-walk:mean=24,range=8,period=1200,until=3000000,seed={seed}"
walltime_kill = false
metrics_window = [0, 604800]
"""


def run(*args: str | Path) -> None:
    """A dispatchlab command from the repository root, paths relative to it (the report
    shows its command line)."""
    subprocess.run([*CLI, *(os.path.relpath(a, REPO) if isinstance(a, Path) else a
                            for a in args)], check=True, cwd=REPO)


def experiment_report(work: Path, name: str, toml: str, title: str) -> Path:
    """Run (or reuse) a small experiment and write its report."""
    spec = work / f"{name}.toml"
    spec.write_text(textwrap.dedent(toml))
    out = work / name
    run("run-experiment", spec, "--out", out, "--workers", "2")
    run("report", out, "--title", title)
    return out / "report" / "index.html"


def demo_report(work: Path) -> Path:
    out = REPO / "demo-output"
    if not (out / "runs").is_dir():
        run("demo", "--out", out)
    run("report", out, "--title", "Dispatchers on the KTH SP2 trace (first 5,000 jobs)")
    return out / "report" / "index.html"


def shoot(browser: Any, html: Path, shots: list[tuple[str, str, bool]]) -> None:
    """``shots``: (CSS selector, file name, hover the largest Gantt bar first)."""
    opened = open_report(browser, html, width=1280, height=1000)
    page = opened.page
    if opened.errors:
        raise SystemExit(f"{html}: console errors {opened.errors}")
    for selector, name, hover in shots:
        target = page.locator(selector).first
        target.scroll_into_view_if_needed()
        if hover:
            x, y = page.evaluate("""sel => {
                let best = null, area = 0;
                for (const p of document.querySelectorAll(sel + ' .bars .point path')) {
                    const r = p.getBoundingClientRect();
                    if (r.width * r.height > area && r.top > 0 && r.bottom < innerHeight) {
                        area = r.width * r.height; best = r; }
                }
                return [best.x + best.width / 2, best.y + best.height / 2];
            }""", selector)
            page.mouse.move(x, y)
            page.wait_for_timeout(400)
        path = DOCS / name
        if selector == "main":  # the top of the page, as a reader first sees it
            page.evaluate("window.scrollTo(0, 0)")
            page.screenshot(path=str(path))
        else:
            target.screenshot(path=str(path))
        print(f"{path.relative_to(REPO)}: {path.stat().st_size / 1024:.0f} KB "
              f"(page drawn in {opened.rendered_ms / 1000:.2f} s)")
    opened.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, default=REPO / "report-screenshots-work",
                    help="where the small experiments are stored (reused)")
    ap.add_argument("--only", choices=["demo", "power", "capacity"], action="append")
    args = ap.parse_args()
    reason = why_no_browser()
    if reason:
        raise SystemExit(reason)
    args.work.mkdir(parents=True, exist_ok=True)
    DOCS.mkdir(parents=True, exist_ok=True)
    chosen = args.only or ["demo", "power", "capacity"]
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = launch(pw)
        if "demo" in chosen:
            shoot(browser, demo_report(args.work), [
                ("main", "report-demo-top.png", False),
                ("#gantt", "report-demo-gantt.png", True)])
        if "power" in chosen:
            html = experiment_report(args.work, "power-capping", POWER,
                                     "Power capping: 400 Eurora-like jobs under a 10 and "
                                     "a 12 kW cap")
            shoot(browser, html, [("figure:has(#web-power)", "report-power-over-time.png",
                                   False),
                                  ("#energy", "report-power-energy.png", False)])
        if "capacity" in chosen:
            html = experiment_report(args.work, "variable-capacity", CAPACITY,
                                     "Variable capacity: 32 machines, a random walk of "
                                     "alive nodes")
            shoot(browser, html, [("figure:has(#web-alive)", "report-capacity-alive.png",
                                   False),
                                  ("#capacity", "report-capacity.png", False)])
        browser.close()


if __name__ == "__main__":
    main()
