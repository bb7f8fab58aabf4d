"""How far the general loop is from the floor of any Python event loop, measured in one run.

The floor is the leanest FIFO simulation Python can run on a machine of one-slot nodes: a
heap of ends, a list queue, a free-slot count — no nodes chosen, no decision objects, no
validation, no record beyond each job's start. It must give the engine's mean wait to the
last digit (a check of both). Beside it, in fresh processes, alternating: the engine's
general loop with the rule-based ``fifo``, the general loop with the leanest FIFO dispatcher
a user could write (``lean``: ``benchmarks/lean_fifo.py``; what the engine itself costs) and
the compiled loop on the same run (``simulate(..., check=False,
tables=False)``). Medians of ``--repeats``: CPU seconds of the whole
``simulate`` call (the workload already loaded; the figure compared with the floor's CPU
seconds) and the wall-clock seconds of the loop itself (the engine's ``sim_seconds``, which
a loaded machine inflates).

Usage: ``python benchmarks/bench_loop_floor.py [--trace HPC2N] [--nodes 240] [--repeats 5]``.
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from script_args import keep_output, ready, runner_options

HERE = Path(__file__).resolve().parent
TRACE = (HERE.parent / ".." / "shared" / "traces" / "swf" / "HPC2N-2002-2.2-cln.swf.gz").resolve()

CHILD = r"""
import json, sys, time
from dispatchlab import simulate
from dispatchlab.workload import load_swf
sys.path.insert(0, sys.argv[4])
from lean_fifo import LeanFifo
wl = load_swf(sys.argv[1])
lean = sys.argv[3] == "lean"
disp = LeanFifo(wl.units.tolist()) if lean else "fifo"
t0, c0 = time.perf_counter(), time.process_time()
res = simulate(wl, f"nodes={sys.argv[2]},cores=1", disp, loop="general" if lean else sys.argv[3],
               check=False, tables=False)
print(json.dumps({"loop": res.summary["loop"], "sim_seconds": res.summary["sim_seconds"],
                  "call_cpu": time.process_time() - c0, "mean_wait": res.summary["mean_wait"]}))
"""


def floor(trace: Path, nodes: int) -> dict[str, float]:
    """The leanest FIFO loop: its CPU seconds and mean wait."""
    from dispatchlab.workload import load_swf

    wl = load_swf(trace)
    submit, units = wl.submit.tolist(), wl.units.tolist()
    dur = [min(r, w) for r, w in zip(wl.runtime.tolist(), wl.walltime.tolist(), strict=True)]
    n = len(submit)
    c0 = time.process_time()
    free, heap, queue, head, nxt = nodes, [], [], 0, 0
    start = [0] * n
    while nxt < n or heap:
        t = submit[nxt] if nxt < n else 1 << 62
        if heap and heap[0][0] <= t:
            t = heap[0][0]
        while heap and heap[0][0] == t:
            free += units[heapq.heappop(heap)[1]]
        while nxt < n and submit[nxt] == t:
            if units[nxt] <= nodes:  # (larger jobs: rejected, as the engine does)
                queue.append(nxt)
            nxt += 1
        while head < len(queue) and units[queue[head]] <= free:
            j = queue[head]
            head += 1
            free -= units[j]
            start[j] = t
            heapq.heappush(heap, (t + dur[j], j))
    cpu = time.process_time() - c0
    ran = queue[:head]
    return {"cpu": cpu, "mean_wait": sum(start[j] - submit[j] for j in ran) / len(ran),
            "jobs": n}


def engine(trace: Path, nodes: int, loop: str) -> dict[str, Any]:
    """One engine run in a fresh interpreter."""
    out = subprocess.run([sys.executable, "-c", CHILD, str(trace), str(nodes), loop, str(HERE)],
                         check=True, capture_output=True, text=True, env=dict(os.environ))
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    """Floor, general and compiled, alternating; the table of medians."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--trace", type=Path, default=TRACE)
    ap.add_argument("--nodes", type=int, default=240)
    ap.add_argument("--repeats", type=int, default=5)
    runner_options(ap)
    args = ap.parse_args()
    ready(args, args.trace)
    keep_output(args.out)
    load = os.getloadavg()[0]
    runs: dict[str, list[dict[str, Any]]] = {"floor": [], "general": [], "lean": [],
                                             "compiled": []}
    for _ in range(args.repeats):
        runs["floor"].append(floor(args.trace, args.nodes))
        for loop in ("general", "lean", "compiled"):
            runs[loop].append(engine(args.trace, args.nodes, loop))
    jobs = runs["floor"][0]["jobs"]
    base = statistics.median(r["cpu"] for r in runs["floor"])
    print(f"{args.trace.name}, {jobs} jobs, {args.nodes} one-slot nodes, FIFO; "
          f"median of {args.repeats}; load {load:.2f} → {os.getloadavg()[0]:.2f}")
    print(f"{'loop':10} {'CPU s':>8} {'jobs/CPU s':>11} {'× floor':>8} {'loop wall s':>12} "
          f"{'mean wait':>12}")
    print(f"{'floor':10} {base:8.3f} {jobs / base:11,.0f} {1.0:8.2f} {'':>12} "
          f"{runs['floor'][0]['mean_wait']:12.4f}")
    for loop in ("general", "lean", "compiled"):
        cpu = statistics.median(r["call_cpu"] for r in runs[loop])
        wall = statistics.median(r["sim_seconds"] for r in runs[loop])
        print(f"{loop:10} {cpu:8.3f} {jobs / cpu:11,.0f} {cpu / base:8.2f} {wall:12.3f} "
              f"{runs[loop][0]['mean_wait']:12.4f}")
    waits = {round(r["mean_wait"], 9) for rs in runs.values() for r in rs}
    if len(waits) != 1:
        raise SystemExit(f"the loops disagree on the mean wait: {sorted(waits)}")


if __name__ == "__main__":
    main()
