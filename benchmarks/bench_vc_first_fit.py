"""The variable-capacity first-fit strategies: general loop against their compiled loop.

Cases: one setup of the case study's synthetic grid
(experiments/variable_capacity/case_study_synthetic.toml: ``synt-uniform``, 32 machines of
24 cores, the slides' capacity walk of seed 1, exact run times), the synthetic log family
of case_study.toml, and KTH (SWF, 28,475 jobs, each on one machine of 16 cores: the 9 %
wider than that are rejected) on 10 machines of which 20 % leave and come back on a
seeded ``gen:`` random walk (alive in [8, 10], hourly steps). Per case and strategy, in one
process: one untimed run per loop (kernels loaded), then ``--repeats`` runs of each loop,
alternating; the table gives the medians of the process CPU time of the ``simulate()``
call (audit and tables off) and of the loop's own time (``summary["sim_seconds"]``), their
ratio, which loop ran, and whether the schedule digests (:mod:`schedule_digests`: every
segment, node-state row, sample and decision point) of the two loops agree. The load
average is recorded before and after each case (the machine may be shared).

Usage: ``python benchmarks/bench_vc_first_fit.py [--repeats 5] [--only kth ...]
[--out benchmarks/results/vc_first_fit]`` (writes ``.json`` and ``.md``). KTH needs the
shared traces (``DISPATCHLAB_TRACES`` or ``../shared/traces``); it is skipped without them.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from script_args import ready, runner_options

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from dispatchlab.provenance import versions  # noqa: E402
from dispatchlab.simulation import simulate  # noqa: E402
from dispatchlab.workload import Workload, load_swf  # noqa: E402
from dispatchlab.workload.load import load_workload  # noqa: E402
from schedule_digests import KTH, digest_recorder  # noqa: E402

STRATEGIES = ("ff-aware", "ff-unaware")
WALK = "gen:capacity-walk:mean=24,range=8,period=1200,until=3000000,seed=1"
KTH_WALK = ("gen:random-walk:what=alive_nodes,mean=9,range=1,step=1,period=3600,"
            "until=40000000,seed=7")


def kth_one_machine() -> Workload:
    """KTH with each job one unit of its processor count (one machine per job)."""
    wl = load_swf(KTH)
    return dataclasses.replace(wl, units=np.ones(wl.n_jobs, np.int64),
                               min_units=np.ones(wl.n_jobs, np.int64),
                               max_units=np.ones(wl.n_jobs, np.int64),
                               req=(wl.req * wl.units[:, None]).astype(np.int64))


#: name → (workload loader, platform, simulate() keywords)
CASES: dict[str, tuple[Any, str, dict[str, Any]]] = {
    "synt-uniform": (lambda: load_workload("gen:vc-synthetic:kind=uniform,seed=1"),
                     "nodes=32,cores=24", {"scenario": WALK, "walltime_kill": False}),
    "synt-log": (lambda: load_workload("gen:vc-synthetic:kind=log,seed=1"),
                 "nodes=32,cores=24", {"scenario": WALK, "walltime_kill": False}),
    "kth-nodewalk": (kth_one_machine, "nodes=10,cores=16",
                     {"scenario": KTH_WALK, "on_infeasible": "reject"}),
}


def run_once(wl: Workload, plat: str, strategy: str, loop: str,
             kw: dict[str, Any]) -> dict[str, Any]:
    """One simulation: its CPU time, loop time, loop and digest."""
    c0 = time.process_time()
    res = simulate(wl, plat, strategy, seed=1, loop=loop, check=False, tables=False, **kw)
    cpu = time.process_time() - c0
    assert res.recorder is not None
    return {"cpu": cpu, "sim": float(res.summary["sim_seconds"]), "loop": res.summary["loop"],
            "digest": digest_recorder(res.recorder), "aborted": int(res.summary.get(
                "aborted_segments", 0))}


def main() -> None:
    """Run the table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--out", type=Path, default=None)
    runner_options(ap, out=False)
    args = ap.parse_args()
    ready(args)
    rows = []
    for name, (load, plat, kw) in CASES.items():
        if args.only is not None and not any(s in name for s in args.only):
            continue
        if name.startswith("kth") and not KTH.exists():
            print(f"{name}: skipped ({KTH} absent)")
            continue
        wl = load()
        for strategy in STRATEGIES:
            load_before = os.getloadavg()[0]
            runs: dict[str, list[dict[str, Any]]] = {"general": [], "auto": []}
            for loop in runs:  # untimed: kernels loaded
                run_once(wl, plat, strategy, loop, kw)
            for _ in range(args.repeats):
                for loop, out in runs.items():
                    out.append(run_once(wl, plat, strategy, loop, kw))
            g, c = runs["general"], runs["auto"]
            digests = {r["digest"] for r in g + c}
            row = {"case": name, "strategy": strategy, "jobs": int(wl.n_jobs),
                   "general_cpu_s": statistics.median(r["cpu"] for r in g),
                   "compiled_cpu_s": statistics.median(r["cpu"] for r in c),
                   "general_sim_s": statistics.median(r["sim"] for r in g),
                   "compiled_sim_s": statistics.median(r["sim"] for r in c),
                   "loops": sorted({r["loop"] for r in c}), "same_digest": len(digests) == 1,
                   "digest": sorted(digests)[0][:16], "aborted_segments": g[0]["aborted"],
                   "load_before": load_before, "load_after": os.getloadavg()[0]}
            row["cpu_ratio"] = row["general_cpu_s"] / row["compiled_cpu_s"]
            row["sim_ratio"] = row["general_sim_s"] / max(row["compiled_sim_s"], 1e-9)
            rows.append(row)
            print(f"{name:14s} {strategy:11s} general {row['general_cpu_s']:7.3f} s CPU  "
                  f"compiled {row['compiled_cpu_s']:7.3f} s ({row['loops']})  "
                  f"×{row['cpu_ratio']:5.1f}  loop ×{row['sim_ratio']:6.1f}  "
                  f"same digest {row['same_digest']}  load {load_before:.1f}–"
                  f"{row['load_after']:.1f}", flush=True)
    if args.out is None:
        return
    args.out.with_suffix(".json").write_text(json.dumps(
        {"repeats": args.repeats, "versions": versions(), "rows": rows}, indent=1) + "\n")
    lines = ["| case | strategy | jobs | general CPU (s) | compiled CPU (s) | ratio | "
             "engine wall s general / compiled (`sim_seconds`) | aborted segments | "
             "same digest | load |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['case']} | {r['strategy']} | {r['jobs']:,} | "
                     f"{r['general_cpu_s']:.3f} | {r['compiled_cpu_s']:.3f} | "
                     f"{r['cpu_ratio']:.1f}× | {r['general_sim_s']:.3f} / "
                     f"{r['compiled_sim_s']:.4f} | {r['aborted_segments']:,} | "
                     f"{'yes' if r['same_digest'] else 'NO'} | {r['load_before']:.1f}–"
                     f"{r['load_after']:.1f} |")
    args.out.with_suffix(".md").write_text(
        f"# Variable-capacity first fit: general vs compiled loop\n\n"
        f"`python benchmarks/bench_vc_first_fit.py --repeats {args.repeats}`: medians of "
        f"{args.repeats} alternating runs per loop in one process (kernels loaded), "
        "process CPU of the `simulate()` call (audit and tables off); seed 1.\n\n"
        + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
