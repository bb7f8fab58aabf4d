"""Core engine benchmark: strict FIFO on full real traces (wall time, jobs/s, peak memory).

Each measurement runs in a fresh Python process so peak memory (max RSS) is the run's own.
Usage: ``python benchmarks/bench_core.py [--repeats 3] [--out benchmarks/results/core.md]``.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

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
from dispatchlab.platform.from_workload import platform_for
from dispatchlab.platform.resolve import resolve_platform
from dispatchlab.simulation import simulate
path, plat, disp = sys.argv[1], sys.argv[2], sys.argv[3]
wl = load_swf(path)
t1 = time.perf_counter()
platform = platform_for(wl)[0] if plat == "-" else resolve_platform(plat)
res = simulate(wl, platform, disp, check=False)
t2 = time.perf_counter()
print(json.dumps({
    "jobs": wl.n_jobs, "load_s": t1 - t0, "sim_s": res.summary["sim_seconds"],
    "total_s": t2 - t0, "platform": platform.name,
    "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
}))
"""


def measure(path: Path, plat: str | None, disp: str) -> dict[str, float]:
    """One run in a fresh interpreter."""
    out = subprocess.run([sys.executable, "-c", CHILD, str(path), plat or "-", disp],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    """Run every case ``--repeats`` times and print a Markdown table of medians."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    lines = [
        f"Core benchmark — {time.strftime('%Y-%m-%d %H:%M')}, {platform.node()}, "
        f"Python {platform.python_version()}, median of {args.repeats} runs",
        "",
        "| trace | dispatcher | platform | jobs | simulate (s) | jobs/s | load (s) | "
        "peak RSS (MB) |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for label, name, plat, disp in CASES:
        path = SWF / name
        if not path.exists():
            print(f"skipping {label}: {path} not found", file=sys.stderr)
            continue
        runs = [measure(path, plat, disp) for _ in range(args.repeats)]
        sim = statistics.median(r["sim_s"] for r in runs)
        load = statistics.median(r["load_s"] for r in runs)
        peak = max(r["peak_mb"] for r in runs)
        jobs = int(runs[0]["jobs"])
        lines.append(f"| {label} | {disp} | {runs[0]['platform']} | {jobs:,} | {sim:.2f} | "
                     f"{jobs / sim:,.0f} | {load:.2f} | {peak:,.0f} |")
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
