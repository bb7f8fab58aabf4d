"""Slurm's own sched/backfill runs of the twin check against several dispatchlab
simulations of the same scaled slice: which one predicts the real slurmctld?

Reads ``results/backfill<k>_tick<T>_jobs.csv`` (the realized starts, from Slurm's job
completion log) and compares them with the ``easy``, ``conservative`` and ``fifo``
simulations on ``nodes=4,cores=25`` and with the ``slurm`` family configured from the
very ``slurm.conf`` the local cluster writes for those runs (``LocalCluster`` with
``scheduler="backfill"``: ``bf_interval=1``, ``bf_resolution=1``, ``sched_interval=1``,
``priority/basic``, ``select/cons_tres`` ``CR_Core``, 4 nodes × 25 CPUs). The ``slurm``
family reads its settings in seconds, so every simulation runs in wall seconds (the scaled
slice's times × the tick). Writes ``results/backfill_vs_sims_tick<T>.json``: per run and
dispatcher, the share of starts within 1 s, one tick and two ticks, the median / p95 / max
absolute start difference, and the makespans; with the configuration and versions.

  .venv/bin/python experiments/live_slurm/backfill_vs_sims.py [--tick 2] [--compression 1800]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dispatchlab.live.local_cluster import LocalCluster
from dispatchlab.live.replay import scaled_workload
from dispatchlab.platform.slurm_conf import SlurmConfWarning
from dispatchlab.provenance import versions
from dispatchlab.simulation import simulate
from dispatchlab.workload.load import load_workload
from dispatchlab.workload.workload import Workload

HERE = Path(__file__).resolve().parent
TRACE = HERE.parents[1] / "src/dispatchlab/data/traces/KTH-SP2-1996-2.1-cln.slice.swf.gz"
PLATFORM = "nodes=4,cores=25"


def local_cluster_conf(folder: Path) -> Path:
    """The slurm.conf ``LocalCluster`` writes for the twin check's backfill runs (written
    by its own writer; no daemon is started)."""
    cluster = LocalCluster(nodes=4, cpus=25, partition="main", scheduler="backfill",
                           root=folder)
    cluster._write_conf()
    return cluster.conf


def in_seconds(scaled: Workload, tick: int) -> Workload:
    """The scaled slice with its times in wall seconds instead of ticks."""
    return dataclasses.replace(scaled, submit=scaled.submit * tick,
                               runtime=scaled.runtime * tick, walltime=scaled.walltime * tick)


def compare(real: pd.DataFrame, sim: pd.DataFrame, tick: int) -> dict[str, Any]:
    """Start differences (realized − simulated, wall s) and makespans."""
    sim = sim.set_index("job_id")
    signed = real["real_start"].to_numpy() - sim.loc[real.index, "start"].to_numpy()
    diff = np.abs(signed)
    real_span, sim_span = int(real["real_end"].max()), int(sim["end"].max())
    return {"jobs": len(diff), "within_1s": float((diff <= 1).mean()),
            "within_1tick": float((diff <= tick).mean()),
            "within_2ticks": float((diff <= 2 * tick).mean()),
            "median": float(np.median(diff)), "p95": float(np.quantile(diff, 0.95)),
            "max": float(diff.max()), "mean_signed": float(signed.mean()),
            "real_makespan_s": real_span, "sim_makespan_s": sim_span,
            "makespan_diff_pct": round(100.0 * (sim_span - real_span) / real_span, 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--skip", type=int, default=3875)
    ap.add_argument("--limit", type=int, default=50)
    ap.add_argument("--compression", type=float, default=1800.0)
    ap.add_argument("--tick", type=int, default=2)
    ap.add_argument("--dispatchers", nargs="+",
                    default=["slurm", "easy", "conservative", "fifo"])
    args = ap.parse_args()
    scaled = scaled_workload(load_workload(TRACE, skip=args.skip, limit=args.limit),
                             args.compression, args.tick)
    work = in_seconds(scaled, args.tick)
    runs: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="dispatchlab-twin-") as tmp:
        conf = local_cluster_conf(Path(tmp))
        conf_lines = [line for line in conf.read_text().splitlines()
                      if line.split("=")[0] in ("SchedulerType", "SchedulerParameters",
                                                 "SelectType", "SelectTypeParameters",
                                                 "NodeName", "PartitionName")]
        sims = {}
        for spec in args.dispatchers:
            with warnings.catch_warnings():  # daemons, ports, paths: reported, not used
                warnings.simplefilter("ignore", SlurmConfWarning)
                sims[spec] = (simulate(work, str(conf), f"slurm:conf={conf}").jobs
                              if spec == "slurm" else simulate(work, PLATFORM, spec).jobs)
    for csv in sorted((HERE / "results").glob(f"backfill*_tick{args.tick}_jobs.csv")):
        real = pd.read_csv(csv).set_index("trace_job")
        runs[csv.name] = {spec: compare(real, sim, args.tick) for spec, sim in sims.items()}
    report = {
        "config": {"trace": TRACE.name, "skip": args.skip, "limit": args.limit,
                   "compression_per_tick": args.compression, "tick_s": args.tick,
                   "time_unit": "wall s (the scaled slice's ticks × tick_s)",
                   "platform": PLATFORM, "slurm_conf": conf_lines,
                   "slurm_spec": "slurm:conf=<LocalCluster's slurm.conf>",
                   "differences": "realized - simulated start, wall s"},
        "versions": versions(), "load_avg": os.getloadavg(), "runs": runs}
    out = HERE / "results" / f"backfill_vs_sims_tick{args.tick}.json"
    out.write_text(json.dumps(report, indent=2, default=str) + "\n")
    rows = [{"run": run, "dispatcher": spec, **stats}
            for run, per in runs.items() for spec, stats in per.items()]
    print(pd.DataFrame(rows).drop(columns=["jobs"]).to_string(index=False))


if __name__ == "__main__":
    main()
