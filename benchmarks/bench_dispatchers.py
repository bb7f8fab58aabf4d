"""Rule-based dispatcher benchmark: EASY and conservative backfilling on full real traces.

Each measurement runs in a fresh Python process; the table gives the median of
``--repeats`` runs of the simulation loop (dispatcher included, trace loading and the
result audit excluded) and the dispatcher's own share of it. ``--behaviour`` adds a table
of utilization, mean wait and mean bounded slowdown of FIFO, EASY and conservative
backfilling on the full HPC2N, CTC-SP2 and KTH-SP2 traces.

Usage: ``python benchmarks/bench_dispatchers.py [--repeats 3] [--behaviour] [--out FILE]``.
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

from script_args import ready, runner_options

HERE = Path(__file__).resolve().parent
SWF = (HERE.parent / ".." / "shared" / "traces" / "swf").resolve()

#: (label, trace file, platform, dispatcher, target jobs/s or None)
CASES = [
    ("HPC2N", "HPC2N-2002-2.2-cln.swf.gz", "nodes=240,cores=1", "easy", 20_000),
    ("CTC-SP2", "CTC-SP2-1996-3.1-cln.swf.gz", "nodes=338,cores=1", "easy", None),
    ("KTH-SP2", "KTH-SP2-1996-2.1-cln.swf.gz", "nodes=100,cores=1", "conservative", 2_000),
    ("Lublin-256-a", "lublin-256-a.swf", "nodes=256,cores=1", "conservative", None),
    ("Lublin-256-b", "lublin-256-b.swf", "nodes=256,cores=1", "conservative", None),
]

BEHAVIOUR = [
    ("HPC2N", "HPC2N-2002-2.2-cln.swf.gz", "nodes=240,cores=1"),
    ("CTC-SP2", "CTC-SP2-1996-3.1-cln.swf.gz", "nodes=338,cores=1"),
    ("KTH-SP2", "KTH-SP2-1996-2.1-cln.swf.gz", "nodes=100,cores=1"),
]

CHILD = r"""
import json, sys, time
from dispatchlab.simulation import simulate
from dispatchlab.workload import load_swf
path, plat, disp = sys.argv[1], sys.argv[2], sys.argv[3]
wl = load_swf(path)
t0 = time.perf_counter()
res = simulate(wl, plat, disp, check=False)
s = res.summary
print(json.dumps({
    "jobs": wl.n_jobs, "sim_s": s["sim_seconds"], "total_s": time.perf_counter() - t0,
    "dispatch_s": s["dispatch_time_total_s"], "utilization": s["utilization"],
    "mean_wait": s["mean_wait"], "mean_bsld": s["mean_bounded_slowdown"],
}))
"""


def measure(path: Path, plat: str, disp: str) -> dict[str, float]:
    """One run in a fresh interpreter."""
    out = subprocess.run([sys.executable, "-c", CHILD, str(path), plat, disp],
                         check=True, capture_output=True, text=True)
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def speed_table(repeats: int) -> list[str]:
    """Median wall time and throughput per case."""
    lines = [
        "| trace | dispatcher | platform | jobs | simulation (s) | dispatcher (s) | jobs/s | "
        "target |",
        "|---|---|---|---:|---:|---:|---:|---|",
    ]
    for label, name, plat, disp, target in CASES:
        path = SWF / name
        if not path.exists():
            print(f"skipping {label}: {path} not found", file=sys.stderr)
            continue
        runs = [measure(path, plat, disp) for _ in range(repeats)]
        sim = statistics.median(r["sim_s"] for r in runs)
        dsp = statistics.median(r["dispatch_s"] for r in runs)
        jobs = int(runs[0]["jobs"])
        goal = "" if target is None else (
            f"≥ {target:,} {'met' if jobs / sim >= target else 'MISSED'}")
        lines.append(f"| {label} | {disp} | {plat} | {jobs:,} | {sim:.2f} | {dsp:.2f} | "
                     f"{jobs / sim:,.0f} | {goal} |")
    return lines


def behaviour_table() -> list[str]:
    """Utilization and waits of FIFO, EASY and conservative on the full traces."""
    lines = [
        "| trace | dispatcher | utilization | mean wait (s) | mean bounded slowdown |",
        "|---|---|---:|---:|---:|",
    ]
    for label, name, plat in BEHAVIOUR:
        path = SWF / name
        if not path.exists():
            continue
        for disp in ("fifo", "easy", "conservative"):
            r = measure(path, plat, disp)
            lines.append(f"| {label} | {disp} | {r['utilization']:.4f} | "
                         f"{r['mean_wait']:,.0f} | {r['mean_bsld']:,.1f} |")
    return lines


def main() -> None:
    """Print the tables as Markdown (and write them to ``--out``)."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--behaviour", action="store_true",
                    help="also run FIFO/EASY/conservative once per trace for quality figures")
    ap.add_argument("--out", type=Path, default=None)
    runner_options(ap, out=False)
    args = ap.parse_args()
    ready(args, SWF)
    lines = [
        f"Dispatcher benchmark — {time.strftime('%Y-%m-%d %H:%M')}, {platform.node()}, "
        f"Python {platform.python_version()}, median of {args.repeats} runs",
        "",
        *speed_table(args.repeats),
    ]
    if args.behaviour:
        lines += ["", *behaviour_table()]
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
