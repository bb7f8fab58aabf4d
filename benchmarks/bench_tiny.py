"""Tiny-run speed: what parameter searches pay per simulation (issue 12's lean path).

A warm process simulates 200 different 50-job workloads on 10 one-core nodes under FIFO,
end to end through ``simulate(..., tables=False)`` (workload object in hand, platform and
dispatcher by name, audit on unless ``--no-check``), on the compiled loop and on the
general loop; medians over the 200 runs, several rounds interleaved.
Usage: ``python benchmarks/bench_tiny.py [--rounds 3] [--out benchmarks/results/tiny.md]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np

from dispatchlab import Workload, simulate
from script_args import ready, runner_options

N_WORKLOADS, N_JOBS, NODES = 200, 50, "nodes=10,cores=1"


def workloads(seed: int = 0) -> list[Workload]:
    """200 random 50-job workloads (Poisson arrivals, 1–4 units, runtime ≤ walltime)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(N_WORKLOADS):
        submit = np.cumsum(rng.exponential(60, N_JOBS)).astype(np.int64)
        wall = rng.integers(60, 3600, N_JOBS)
        run = np.maximum(1, (wall * rng.uniform(0.1, 1.0, N_JOBS)).astype(np.int64))
        out.append(Workload.from_columns(submit=submit, walltime=wall, runtime=run,
                                         units=rng.integers(1, 5, N_JOBS),
                                         req={"cores": np.ones(N_JOBS, np.int64)}))
    return out


def time_runs(wls: list[Workload], engine: str, check: bool) -> list[float]:
    """Seconds per end-to-end ``simulate(..., tables=False)`` call."""
    out = []
    for wl in wls:
        t0 = time.perf_counter()
        res = simulate(wl, NODES, "fifo", loop=engine, tables=False, check=check)
        out.append(time.perf_counter() - t0)
        assert res.summary["loop"] == engine
    return out


def main() -> None:
    """Print (and optionally write) a Markdown table of median times per run."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-check", action="store_true", help="skip the audit")
    ap.add_argument("--out", type=Path, default=None)
    runner_options(ap, out=False)
    args = ap.parse_args()
    ready(args)
    wls = workloads()
    check = not args.no_check
    for engine in ("compiled", "general"):  # warm up: compile, import, caches
        time_runs(wls[:5], engine, check)
    times: dict[str, list[float]] = {"compiled": [], "general": []}
    load0 = os.getloadavg()
    for _ in range(args.rounds):
        for engine in times:
            times[engine] += time_runs(wls, engine, check)
    load1 = os.getloadavg()
    lines = [
        f"Tiny-run benchmark — {time.strftime('%Y-%m-%d %H:%M')}, {platform.node()}, Python "
        f"{platform.python_version()}; {N_WORKLOADS} workloads × {N_JOBS} jobs on "
        f"`{NODES}`, FIFO, `simulate(..., tables=False, check={check})`, {args.rounds} "
        f"rounds; load average {load0[0]:.2f} before, {load1[0]:.2f} after.",
        "",
        "| loop | median (ms) | p10 (ms) | p90 (ms) | target (ms) |",
        "|---|---:|---:|---:|---:|",
    ]
    for engine, target in (("compiled", 0.5), ("general", 2.0)):
        t = np.array(times[engine]) * 1e3
        lines.append(f"| {engine} | {statistics.median(t):.3f} | {np.percentile(t, 10):.3f} "
                     f"| {np.percentile(t, 90):.3f} | {target} |")
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
