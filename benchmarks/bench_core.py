"""Core engine benchmark: strict FIFO on full real traces (wall time, jobs/s, peak memory).

Each measurement runs in a fresh Python process so peak memory (max RSS) is the run's own.
Usage: ``python benchmarks/bench_core.py [--repeats 3] [--out benchmarks/results/core.md]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from script_args import ready, runner_options

HERE = Path(__file__).resolve().parent
SWF = (HERE.parent / ".." / "shared" / "traces" / "swf").resolve()

CASES = [
    ("HPC2N", "HPC2N-2002-2.2-cln.swf.gz", "nodes=240,cores=1", "fifo"),
    ("CEA-Curie", "CEA-Curie-2011-2.1-cln.swf.gz", None, "fifo"),
]

CHILD = r"""
import json, resource, sys, time
t0 = time.perf_counter()
from dispatchlab.workload import load_swf
from dispatchlab.workload.platform_for import platform_for
from dispatchlab.platform.resolve import resolve_platform
from dispatchlab.simulation import simulate
path, plat, disp = sys.argv[1], sys.argv[2], sys.argv[3]
wl = load_swf(path)
t1 = time.perf_counter()
platform = platform_for(wl)[0] if plat == "-" else resolve_platform(plat)
t15 = time.perf_counter()
res = simulate(wl, platform, disp, check=False, loop=sys.argv[4])
t2 = time.perf_counter()
print(json.dumps({
    "jobs": wl.n_jobs, "load_s": t1 - t0, "sim_s": res.summary["sim_seconds"],
    "call_s": t2 - t15, "total_s": t2 - t0, "platform": platform.name,
    "engine": res.summary.get("loop", "general"),
    "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
}))
"""


def measure(path: Path, plat: str | None, disp: str, engine: str) -> dict[str, Any]:
    """One run in a fresh interpreter."""
    out = subprocess.run([sys.executable, "-c", CHILD, str(path), plat or "-", disp, engine],
                         check=True, capture_output=True, text=True)
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def _load() -> str:
    """The 1/5/15-minute load averages (the machine may be shared)."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    """Run every case ``--repeats`` times and print a Markdown table of medians."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--loop", "--engine", dest="engine", default="auto",
                    help="auto | compiled | general (--engine: its old name)")
    runner_options(ap, out=False)
    args = ap.parse_args()
    ready(args, SWF)
    lines = [
        f"Core benchmark — {time.strftime('%Y-%m-%d %H:%M')}, {platform.node()}, "
        f"Python {platform.python_version()}, median of {args.repeats} runs, engine "
        f"{args.engine}, load average before: {_load()}",
        "",
        "`simulate (s)`: the engine's run (`summary['sim_seconds']`; jobs/s from it); "
        "`simulate() (s)`: the whole call (setup, engine, per-job and time-series tables; "
        "no audit: `check=False`).",
        "",
        "| trace | dispatcher | platform | engine | jobs | simulate (s) | jobs/s | "
        "simulate() (s) | load (s) | peak RSS (MB) |",
        "|---|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for label, name, plat, disp in CASES:
        path = SWF / name
        if not path.exists():
            print(f"skipping {label}: {path} not found", file=sys.stderr)
            continue
        runs = [measure(path, plat, disp, args.engine) for _ in range(args.repeats)]
        sim = statistics.median(r["sim_s"] for r in runs)
        call = statistics.median(r["call_s"] for r in runs)
        load = statistics.median(r["load_s"] for r in runs)
        peak = max(r["peak_mb"] for r in runs)
        jobs = int(runs[0]["jobs"])
        lines.append(f"| {label} | {disp} | {runs[0]['platform']} | {runs[0]['engine']} | "
                     f"{jobs:,} | {sim:.3f} | {jobs / sim:,.0f} | {call:.2f} | {load:.2f} | "
                     f"{peak:,.0f} |")
    lines += ["", f"Load average after: {_load()}"]
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
