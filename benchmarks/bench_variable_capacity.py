"""Variable capacity: seconds of simulation for a 7-day Borg-like window, per strategy.

The case study's setting (Robert et al.): 32 machines of 24 cores, the alive count a
slides random walk (mean 24, range 8, period 20 min), the jobs of the authors' Borg window
``files/traces/borgSO/7D_604800.txt`` of github.com/lucasperotin/variableResources
(``--trace``; window start 604800, 7 days), or without it a synthetic log-scale window of
the same size (``gen:vc-synthetic``, 17,035 jobs). Run times are exact (no wall-time
kills). One process: each strategy runs once untimed (compiles or loads its kernels), then
``--repeats`` timed runs; the table gives the median of the simulation time the summary
reports (audit and tables off) and of the process CPU time over the call, with the load
average before and after. Target: ≤ 2 s per strategy.

Usage: ``python benchmarks/bench_variable_capacity.py [--trace FILE] [--repeats 3]
[--out FILE]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

from dispatchlab.simulation import simulate
from dispatchlab.workload.load import load_workload
from script_args import ready, runner_options

STRATEGIES = ("ff-aware", "ff-unaware", "target-stretch", "target-asap", "packed-target-asap")
SCENARIO = "gen:capacity-walk:mean=24,range=8,period=1200,until=3000000,seed={seed}"


def run_once(workload: Any, strategy: str, seed: int) -> tuple[float, float]:
    """Simulation seconds (summary) and process CPU seconds of one run."""
    cpu = time.process_time()
    res = simulate(workload, "nodes=32,cores=24", strategy, seed=seed,
                   scenario=SCENARIO.format(seed=seed), walltime_kill=False, check=False,
                   tables=False)
    return float(res.summary["sim_seconds"]), time.process_time() - cpu


def main() -> None:
    """Run the table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trace", help="the authors' 7D_604800.txt (default: synthetic)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", help="write the table as JSON here")
    runner_options(ap, out=False)
    args = ap.parse_args()
    ready(args)
    if args.trace:
        wl = load_workload(args.trace, start=604800, window=604800)
        source = str(args.trace)
    else:
        wl = load_workload("gen:vc-synthetic:kind=log,jobs=17035,seed=1")
        source = "gen:vc-synthetic:kind=log,jobs=17035,seed=1"
    load_before = os.getloadavg()
    rows = []
    for name in STRATEGIES:
        run_once(wl, name, 0)  # compile / load the kernels
        sims, cpus = [], []
        for k in range(args.repeats):
            s, c = run_once(wl, name, k + 1)
            sims.append(s)
            cpus.append(c)
        rows.append({"strategy": name, "sim_s_median": statistics.median(sims),
                     "cpu_s_median": statistics.median(cpus), "sim_s": sims})
        print(f"{name:20s} sim {statistics.median(sims):6.2f} s   cpu "
              f"{statistics.median(cpus):6.2f} s   runs {[round(x, 2) for x in sims]}")
    out = {"workload": source, "jobs": wl.n_jobs, "repeats": args.repeats,
           "loadavg_before": load_before, "loadavg_after": os.getloadavg(), "rows": rows}
    print(f"load average before {load_before}, after {out['loadavg_after']}")
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
