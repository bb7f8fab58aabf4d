"""Offline planner on days of the thesis's Curie workload (``gen:curie-thesis``, 300 × 32).

Per day (jobs submitted that day, planned from the day's start on an empty machine,
window = that day, run-time durations, 60 s slots, air cooling, summer profile, cheap
prices): the job-based heuristic's first solution (submission order) and its time, the
Multi-Search (22 orderings), the Delay-Search (``--delay-runs`` iterations of 60 slots),
and the Relaxation-Search (``--cp-det`` deterministic seconds of CP-SAT): profit, gain over
the first solution, time. Medians over the days; ``uptime`` load before and after.

Usage: ``python benchmarks/bench_planner.py [--level high] [--days 2 9 16] [--out FILE]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import numpy as np

from dispatchlab.dispatchers.offline_plan.planner.instance import from_workload
from dispatchlab.dispatchers.offline_plan.planner.objective import ProfitModel
from dispatchlab.dispatchers.offline_plan.planner.searches import (
    Limits,
    delay_search,
    multi_search,
    relaxation_search,
    run_heuristic,
)
from dispatchlab.energy.cooling import pue_table
from dispatchlab.energy.profit import THESIS_PRICES
from dispatchlab.engine.temperature import season_profile
from dispatchlab.platform.resolve import resolve_platform
from dispatchlab.workload.load import load_workload
from script_args import ready, runner_options


def one_day(wl, plat, day: int, args: argparse.Namespace) -> dict:
    """Plan one day; figures and times."""
    rows = np.flatnonzero(wl.submit // 86400 == day)
    inst = from_workload(wl, plat, rows, duration="runtime", origin=day * 86400, step=60)
    tt, tv = season_profile(args.season, days=day + 10, seed=0)
    pm = ProfitModel(pue_table(args.cooling), tuple(int(t) for t in tt),
                     tuple(float(v) for v in tv), day * 86400, (day + 1) * 86400,
                     THESIS_PRICES[args.prices])
    out: dict = {"day": day, "jobs": len(rows),
                 "core_hours_submitted": float((inst.duration * inst.units
                                                * inst.cores_per_unit).sum() / 3600)}
    h = run_heuristic(inst, pm)
    out["heuristic"] = {"profit": h.profit, "time_s": h.stats["time_s"]}
    m = multi_search(inst, pm)
    out["multi"] = {"profit": m.profit, "time_s": m.stats["time_s"],
                    "ordering": m.stats["ordering"]}
    d = delay_search(inst, pm, Limits(runs=args.delay_runs), start=m, delay=60)
    out["delay"] = {"profit": d.profit, "time_s": d.stats["time_s"],
                    "iterations": d.stats["iterations"], "improvements": d.stats["improvements"]}
    t0 = time.perf_counter()
    r = relaxation_search(inst, pm, Limits(cp_det_time=args.cp_det), start=m)
    out["relax"] = {"profit": r.profit, "time_s": round(time.perf_counter() - t0, 3),
                    "cp_status": r.stats["cp_status"], "cp_wall_s": r.stats["cp_wall_s"],
                    "build_s": r.stats["build_s"], "model": r.stats["model"]}
    for key in ("multi", "delay", "relax"):
        out[key]["gain_over_first_pct"] = 100 * (out[key]["profit"] / h.profit - 1)
    out["mean_pue_multi"] = m.figures["mean_pue"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--level", default="high")
    ap.add_argument("--days", type=int, nargs="+", default=[2, 9, 16])
    ap.add_argument("--season", default="summer")
    ap.add_argument("--cooling", default="air")
    ap.add_argument("--prices", default="cheap")
    ap.add_argument("--delay-runs", type=int, default=100)
    ap.add_argument("--cp-det", type=float, default=2.0)
    ap.add_argument("--out")
    runner_options(ap, out=False)
    args = ap.parse_args()
    ready(args)
    load0 = os.getloadavg()
    wl = load_workload(f"gen:curie-thesis:level={args.level}")
    plat = resolve_platform("thesis-300")
    days = [one_day(wl, plat, d, args) for d in args.days]
    for d in days:
        print(json.dumps(d))
    med = {f"{k}_{f}": statistics.median(d[k][f] for d in days)
           for k in ("heuristic", "multi", "delay", "relax") for f in ("time_s",)}
    med.update({f"{k}_gain_pct": statistics.median(d[k]["gain_over_first_pct"] for d in days)
                for k in ("multi", "delay", "relax")})
    summary = {"level": args.level, "days": args.days, "median": med,
               "load_before": load0, "load_after": os.getloadavg(), "per_day": days}
    print(json.dumps(summary["median"]), "load", load0, os.getloadavg())
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump(summary, fh, indent=1)


if __name__ == "__main__":
    main()
