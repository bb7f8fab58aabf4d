"""Machines that change, at compiled speed: HPC2N EASY under a node walk, a cap walk, both.

Issue 27 asks for HPC2N (202,871 jobs) EASY with 20 % of the nodes leaving and coming back
on a seeded random walk, and EASY under a varying power cap, to run compiled at
≥ 300,000 jobs/s with the general loop's schedule. Each case runs ``--repeats`` times in a
fresh interpreter with ``--loop auto`` (the compiled loop when it qualifies) and
``--general`` times with the general loop, alternately; the table gives the medians of the
loop's own time (``summary["sim_seconds"]``), jobs/s, the process CPU time of the
``simulate()`` call, which loop ran, and whether the schedule digests
(:mod:`schedule_digests`: every segment, node-state row, sample and decision point) of
the two loops agree. The load average is recorded before and after (the machine may be
shared).

Usage: ``python benchmarks/bench_changing_machines.py [--repeats 3] [--general 1]
[--only hpc2n-easy-nodewalk ...] [--tree DIR] [--out benchmarks/results/changing_machines]``
(writes ``.json`` and ``.md``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_general_loop import measure  # noqa: E402

#: The issue's cases (defined in :mod:`schedule_digests`).
CASES = ("hpc2n-easy-nodewalk", "hpc2n-easy-capwalk", "hpc2n-easy-nodewalk-capwalk")
#: The issue's target for the compiled loop on these cases.
TARGET_JOBS_PER_S = 300_000


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians of fresh-process runs of one case on one loop."""
    sim = statistics.median(r["sim_seconds"] for r in runs)
    return {"engine": sorted({r["engine"] for r in runs}),
            "sim_seconds": sim, "jobs_per_s": runs[0]["jobs"] / sim,
            "call_cpu_seconds": statistics.median(r["call_cpu_seconds"] for r in runs),
            "runs": [r["sim_seconds"] for r in runs],
            "digests": sorted({r["digest"] for r in runs})}


def table(rows: list[dict[str, Any]], head: str) -> str:
    """The Markdown report."""
    lines = [head, "",
             "| case | jobs | auto: loop | engine s | jobs/s | CPU s | jobs per CPU s | "
             "general: engine s | jobs/s | CPU s | speed-up (engine s) | ≥ 300,000 jobs/s | "
             "same schedule |",
             "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"]
    for r in rows:
        a, g = r["auto"], r["general"]
        lines.append(
            f"| {r['case']} | {r['jobs']:,} | {'/'.join(a['engine'])} | "
            f"{a['sim_seconds']:.3f} | {a['jobs_per_s']:,.0f} | {a['call_cpu_seconds']:.2f} | "
            f"{r['jobs'] / a['call_cpu_seconds']:,.0f} | "
            f"{g['sim_seconds']:.2f} | {g['jobs_per_s']:,.0f} | {g['call_cpu_seconds']:.2f} | "
            f"{g['sim_seconds'] / a['sim_seconds']:.1f}× | "
            f"{'yes' if a['jobs_per_s'] >= TARGET_JOBS_PER_S else 'NO'} | "
            f"{'yes' if r['same_schedule'] else 'NO'} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    """Alternate the loops on every case; write the medians."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=3, help="fresh runs with --loop auto")
    ap.add_argument("--general", type=int, default=1, help="fresh runs with the general loop")
    ap.add_argument("--only", nargs="*", default=list(CASES))
    ap.add_argument("--out", type=Path, default=None, help="path without suffix")
    ap.add_argument("--tree", type=Path, default=HERE.parent,
                    help="the checkout whose src/ runs (default: this one)")
    args = ap.parse_args()
    load_before = _load()
    rows = []
    tree = args.tree.resolve()
    for case in args.only:
        runs: dict[str, list[dict[str, Any]]] = {"auto": [], "general": []}
        for k in range(max(args.repeats, args.general)):
            if k < args.repeats:
                runs["auto"].append(measure(tree, case, "auto"))
            if k < args.general:
                runs["general"].append(measure(tree, case, "general"))
        auto, general = summarize(runs["auto"]), summarize(runs["general"])
        row = {"case": case, "jobs": runs["auto"][0]["jobs"], "auto": auto,
               "general": general,
               "same_schedule": len(auto["digests"]) == 1 and auto["digests"]
               == general["digests"], "load": _load()}
        rows.append(row)
        print(json.dumps(row), flush=True)
    load_after = _load()
    head = (f"Machines that change — {time.strftime('%Y-%m-%d %H:%M')} UTC, "
            f"{platform.node()}, Python {platform.python_version()}; medians of "
            f"{args.repeats} fresh-process runs of `{tree}` with `--loop auto` and "
            f"{args.general} with the general loop, alternated; load average before "
            f"{load_before}, after {load_after} (2 cores, shared).\n\n"
            "Engine s: `summary['sim_seconds']` (the loop's own wall clock); CPU s: process "
            "CPU time of the whole `simulate()` call (workload and platform already loaded; "
            "jobs per CPU s divides by it: a lower bound of the loop's own rate, little "
            "affected by other processes); "
            "same schedule: every run's schedule digest (`schedule_digests.py`) equal.")
    text = table(rows, head)
    print(text)
    if args.out:
        args.out.with_suffix(".md").write_text(text)
        args.out.with_suffix(".json").write_text(json.dumps(
            {"repeats": args.repeats, "general": args.general, "load_before": load_before,
             "load_after": load_after, "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
