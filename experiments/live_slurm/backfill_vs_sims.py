"""Slurm's own sched/backfill run of the twin check against several dispatchlab
simulations of the same scaled slice (which dispatcher predicts Slurm best?).

Reads ``results/backfill<k>_tick<T>_jobs.csv`` (the realized starts) and writes
``results/backfill_vs_sims_tick<T>.csv``: per dispatcher and run, the share of starts
within 2 scaled seconds and the median / p95 / max absolute difference.

  .venv/bin/python experiments/live_slurm/backfill_vs_sims.py [--tick 2] [--compression 1800]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from dispatchlab.live.replay import scaled_workload
from dispatchlab.simulation import simulate
from dispatchlab.workload.load import load_workload

HERE = Path(__file__).resolve().parent
TRACE = HERE.parents[1] / "src/dispatchlab/data/traces/KTH-SP2-1996-2.1-cln.slice.swf.gz"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--skip", type=int, default=3875)
    ap.add_argument("--limit", type=int, default=50)
    ap.add_argument("--compression", type=float, default=1800.0)
    ap.add_argument("--tick", type=int, default=2)
    ap.add_argument("--dispatchers", nargs="+", default=["easy", "conservative", "fifo"])
    args = ap.parse_args()
    scaled = scaled_workload(load_workload(TRACE, skip=args.skip, limit=args.limit),
                             args.compression, args.tick)
    rows = []
    for csv in sorted((HERE / "results").glob(f"backfill*_tick{args.tick}_jobs.csv")):
        real = pd.read_csv(csv).set_index("trace_job")["real_start"]
        for spec in args.dispatchers:
            sim = simulate(scaled, "nodes=4,cores=25", spec).jobs.set_index("job_id")
            diff = np.abs(real.to_numpy() - sim.loc[real.index, "start"].to_numpy() * args.tick)
            rows.append({"run": csv.name, "dispatcher": spec, "jobs": len(diff),
                         "within_2s": float((diff <= 2).mean()),
                         "median": float(np.median(diff)),
                         "p95": float(np.quantile(diff, 0.95)), "max": float(diff.max())})
    out = pd.DataFrame(rows)
    out.to_csv(HERE / "results" / f"backfill_vs_sims_tick{args.tick}.csv", index=False)
    print(out.to_string(index=False))


if __name__ == "__main__":
    main()
