"""Speed of the ``slurm`` family: jobs simulated per second on a trace.

The trace (default: the bundled 5,000-job KTH SP2 slice) runs on a ``slurm.conf`` of
``--nodes`` nodes × ``--cpus`` CPUs (default 100 × 1, the SP2) with Slurm 22.05's
scheduling defaults (``sched/backfill``: ``bf_interval=30``, ``bf_resolution=60``,
``bf_window=1440``, ``bf_max_job_test=500``; ``priority/basic``; ``cons_tres``
``CR_Core``), or with ``--conf`` an operator's file. Reports the median over
``--repeats`` of wall and CPU seconds and jobs per second, with the load average before
and after (the machine may be shared) and the versions → ``--out`` (JSON).

Usage: ``python benchmarks/bench_slurm_family.py [--trace FILE] [--limit N] [--repeats 3]
[--nodes 100] [--cpus 1] [--conf slurm.conf] [--out FILE]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from dispatchlab.provenance import versions
from dispatchlab.simulation import simulate
from dispatchlab.workload.load import load_workload
from script_args import ready, runner_options

HERE = Path(__file__).resolve().parent
TRACE = HERE.parent / "src/dispatchlab/data/traces/KTH-SP2-1996-2.1-cln.slice.swf.gz"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trace", type=Path, default=TRACE)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--nodes", type=int, default=100)
    ap.add_argument("--cpus", type=int, default=1)
    ap.add_argument("--conf", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "slurm_family.json")
    runner_options(ap, out=False)
    args = ap.parse_args()
    ready(args, args.trace, *([args.conf] if args.conf else []))
    wl = load_workload(args.trace, limit=args.limit)
    with tempfile.TemporaryDirectory(prefix="dispatchlab-bench-") as tmp:
        conf = args.conf or Path(tmp) / "slurm.conf"
        if args.conf is None:
            names = f"n[1-{args.nodes}]" if args.nodes > 1 else "n1"
            conf.write_text(f"NodeName={names} CPUs={args.cpus}\n"
                            f"PartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE\n")
        load_before = os.getloadavg()
        walls, cpus = [], []
        starts = None
        for _ in range(args.repeats):
            t, c = time.perf_counter(), time.process_time()
            res = simulate(wl, str(conf), f"slurm:conf={conf}")
            walls.append(time.perf_counter() - t)
            cpus.append(time.process_time() - c)
            now = res.jobs["start"].tolist()
            if starts is not None and now != starts:
                raise SystemExit("two runs of the same simulation differ")
            starts = now
        conf_text = conf.read_text().splitlines()
    wall, cpu = statistics.median(walls), statistics.median(cpus)
    report = {"trace": args.trace.name, "jobs": wl.n_jobs, "repeats": args.repeats,
              "slurm_conf": conf_text, "wall_s": wall, "cpu_s": cpu,
              "jobs_per_s_wall": wl.n_jobs / wall, "jobs_per_s_cpu": wl.n_jobs / cpu,
              "load_before": load_before, "load_after": os.getloadavg(),
              "versions": versions()}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, default=str) + "\n")
    print(f"{wl.n_jobs} jobs: median {wall:.1f} s wall, {cpu:.1f} s CPU → "
          f"{wl.n_jobs / wall:.0f} jobs/s wall, {wl.n_jobs / cpu:.0f} jobs/s CPU "
          f"(load {load_before[0]:.1f} → {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
