"""Decision time of the CP dispatchers on Eurora historical batches.

Usage: ``python benchmarks/bench_cp.py [SIZE] [N] [DISPATCHER ...]`` — the first N
historical batches of SIZE jobs (default 1000, 2) on the ``eurora`` platform. Prints the
mean and max decision time (the engine's measurement), the solver share and the model
size per run; targets: mean ≤ 100 ms for ``hcp3``, ≤ 300 ms for ``pcp3``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import dispatchlab.dispatchers.cp.presets  # noqa: F401  (registers the CP presets)
from dispatchlab.simulation import simulate
from dispatchlab.workload.load import load_workload

BATCHES = (Path(__file__).resolve().parents[1] / ".." / "shared" / "traces" / "eurora" /
           "job_instances" / "historical_traces").resolve()


def main(argv: list[str]) -> None:
    size = int(argv[0]) if argv else 1000
    count = int(argv[1]) if len(argv) > 1 else 2
    names = argv[2:] or ["hcp3", "pcp3", "hcp3-heuristic", "pcp3-heuristic"]
    files = sorted((BATCHES / str(size)).glob("*.log_crypt"))[:count]
    print(f"{'batch':34s} {'dispatcher':16s} {'sim s':>7s} {'mean ms':>8s} {'max ms':>8s} "
          f"{'solver':>7s} {'fallb':>6s} {'jobs/model':>10s}")
    for path in files:
        wl = load_workload(path)
        for name in names:
            t0 = time.perf_counter()
            res = simulate(wl, "eurora", name, on_infeasible="reject")
            sim = time.perf_counter() - t0
            s = res.summary
            ds = s["dispatcher_stats"]
            print(f"{path.name:34s} {name:16s} {sim:7.1f} {s['dispatch_time_mean_ms']:8.1f} "
                  f"{s['dispatch_time_max_ms']:8.0f} {ds['solver_calls']:7d} "
                  f"{ds['fallbacks']:6d} {ds['mean_model_jobs_solver']:10.1f}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
