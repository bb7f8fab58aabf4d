"""Eurora runs (jobs asking different per-unit resource vectors) in the general loop and in
the compiled vector loop: CPU seconds of the ``simulate()`` call, the loop's own seconds,
and whether the two runs recorded the same schedule (digest of everything recorded,
``schedule_digests.digest_recorder``).

Cases: the power-capping study's instances (``experiments/power_capping/instances``, every
job at time 0, the node model, idle power counted, a cap from a ``power_cap`` row): the
first 1,000 jobs of the 32-node base pool under half the full-machine power, and one
50-job 8-node instance; and the 1,000 jobs with a node walk (between 24 and 32 of the 32
nodes alive, a step every 15 minutes: jobs on a leaving node aborted and re-queued) beside
the cap; and PRB-ordered EASY with the ``energy-model`` allocator. Each run in a fresh
process, the loops alternating; medians.

Usage: ``python benchmarks/bench_vectors.py [--repeat 3] [--out results.json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from script_args import ready, runner_options

HERE = Path(__file__).resolve().parent
INSTANCES = HERE.parent / "experiments" / "power_capping" / "instances"

#: name → (instance file, skip, limit, platform, dispatcher, cap W)
CASES: dict[str, tuple[str, int, int, str, str, float]] = {
    "eurora32-base1000-easy": ("eurora-32/base_100.csv", 0, 1000, "eurora-32", "easy", 5400.0),
    "eurora32-base1000-easypower": ("eurora-32/base_100.csv", 0, 1000, "eurora-32",
                                    "easy-power", 5400.0),
    "eurora32-base1000-nonstrict": ("eurora-32/base_100.csv", 0, 1000, "eurora-32",
                                    "fifo-nonstrict", 5400.0),
    "eurora32-base1000-prbpower": ("eurora-32/base_100.csv", 0, 1000, "eurora-32",
                                   "prb-power", 5400.0),
    "eurora8-highload50-easy": ("eurora-8/highLoad_50.csv", 200, 50, "eurora-8", "easy",
                                1620.0),
    "eurora8-highload50-easypower": ("eurora-8/highLoad_50.csv", 200, 50, "eurora-8",
                                     "easy-power", 1620.0),
    "eurora32-base1000-easy-nodewalk": ("eurora-32/base_100.csv", 0, 1000, "eurora-32",
                                        "easy", 5400.0),
    "eurora32-base1000-easypower-nodewalk": ("eurora-32/base_100.csv", 0, 1000, "eurora-32",
                                             "easy-power", 5400.0),
    "eurora32-base1000-prbpower-nodewalk": ("eurora-32/base_100.csv", 0, 1000, "eurora-32",
                                            "prb-power", 5400.0),
    "eurora32-base1000-prbeasy-energy": ("eurora-32/base_100.csv", 0, 1000, "eurora-32",
                                         "order=prb,select=easy,alloc=energy-model", 5400.0),
}
#: Nodes leaving and coming back beside the cap (cases whose name ends in ``-nodewalk``).
NODE_WALK = ("gen:random-walk:what=alive_nodes,mean=28,range=4,step=2,period=900,"
             "until=4000000,seed=3")


def run_one(name: str, loop: str) -> dict[str, Any]:
    """One simulation of case ``name`` on ``loop``, in this process."""
    sys.path.insert(0, str(HERE))
    from dispatchlab.simulation import simulate
    from dispatchlab.workload.load import load_workload
    from schedule_digests import digest_recorder

    path, skip, limit, plat, disp, cap = CASES[name]
    wl = load_workload(INSTANCES / path, skip=skip, limit=limit)
    scenario: list[str] = [f"gen:constant:what=power_cap,value={cap:g}"]
    if name.endswith("-nodewalk"):
        scenario.append(NODE_WALK)
    c0 = time.process_time()
    res = simulate(wl, plat, disp, loop=loop, check=False, tables=False, scenario=scenario)
    cpu = time.process_time() - c0
    assert res.recorder is not None
    return {"loop": res.summary["loop"], "call_cpu_s": cpu,
            "sim_s": float(res.summary["sim_seconds"]), "jobs": int(wl.n_jobs),
            "digest": digest_recorder(res.recorder)}


def fresh(name: str, loop: str) -> dict[str, Any]:
    """:func:`run_one` in a fresh process."""
    out = subprocess.run([sys.executable, __file__, "--one", name, loop], check=True,
                         capture_output=True, text=True).stdout
    return dict(json.loads(out.strip().splitlines()[-1]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--general-repeat", type=int, default=1)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--one", nargs=2, default=None, help=argparse.SUPPRESS)
    runner_options(ap, out=False)
    args = ap.parse_args()
    ready(args, INSTANCES)
    if args.one:
        print(json.dumps(run_one(*args.one)))
        return
    table: dict[str, Any] = {}
    for name in CASES:
        if args.only is not None and not any(s in name for s in args.only):
            continue
        runs: dict[str, list[dict[str, Any]]] = {"general": [], "auto": []}
        loads = []
        for k in range(max(args.repeat, args.general_repeat)):
            for loop in ("general", "auto"):
                if k < (args.general_repeat if loop == "general" else args.repeat):
                    runs[loop].append(fresh(name, loop))
                    loads.append(os.getloadavg()[0])
        gen, comp = runs["general"], runs["auto"]
        row = {
            "jobs": comp[0]["jobs"], "loop": comp[0]["loop"],
            "general_cpu_s": statistics.median(r["call_cpu_s"] for r in gen),
            "general_sim_s": statistics.median(r["sim_s"] for r in gen),
            "compiled_cpu_s": statistics.median(r["call_cpu_s"] for r in comp),
            "compiled_sim_s": statistics.median(r["sim_s"] for r in comp),
            "same_schedule": len({r["digest"] for r in gen + comp}) == 1,
            "load": [round(min(loads), 2), round(max(loads), 2)],
        }
        row["cpu_ratio"] = row["general_cpu_s"] / row["compiled_cpu_s"]
        row["sim_ratio"] = row["general_sim_s"] / row["compiled_sim_s"]
        table[name] = row
        print(f"{name:30s} {row['loop']:9s} general {row['general_cpu_s']:7.2f} s CPU "
              f"(loop {row['general_sim_s']:7.3f} s)  compiled {row['compiled_cpu_s']:6.2f} s "
              f"(loop {row['compiled_sim_s']:6.3f} s)  {row['cpu_ratio']:5.1f}x / "
              f"{row['sim_ratio']:6.1f}x  same {row['same_schedule']}  load "
              f"{row['load'][0]}-{row['load'][1]}", flush=True)
        if args.out:
            args.out.write_text(json.dumps(table, indent=1) + "\n")


if __name__ == "__main__":
    main()
