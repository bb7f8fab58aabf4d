"""The hybrid pipeline's day planner: Alg. 5 in arrival order against the profit-driven
searches, on the first days of the thesis ch. 7 medium Curie workload.

For each planner, ``hybrid-dardis70`` is simulated once (general engine, the
``thesis300-power`` platform, the planner's profit model: air cooling, cheap prices, the
summer profile of ``--seed``), and the run is priced as ``run-experiment`` prices a run
prices it (summer, air, cheap, the nodes' IT power). Per day: the planner's time, the
profit of its plan of the day, the arrival-order plan's profit on the same instance
(Multi-Search's ``est:inc``), the planned utilization and the profile mean.

    .venv/bin/python benchmarks/bench_hybrid_search.py --days 10 \
        --out benchmarks/results/hybrid_search.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform as pyplatform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from dispatchlab import __version__
from dispatchlab.dispatchers.hybrid.pipeline import HybridDardis
from dispatchlab.energy.profit import cooling_setup, run_profit
from dispatchlab.platform.resolve import resolve_platform
from dispatchlab.simulation import simulate
from script_args import ready, runner_options

ROOT = Path(__file__).resolve().parent.parent
HYBRID = ROOT / "experiments" / "hybrid"


def run(planner: str, days: int, seed: int, budget: int | None,
        last_resort: str = "machine", power_seed: int = 0) -> dict[str, Any]:
    """One simulation of hybrid-dardis70 with ``planner``; its figures."""
    sys.path.insert(0, str(HYBRID))
    from workload import build  # type: ignore[import-not-found]

    wl = build("medium", seed=power_seed)
    wl = wl.take(np.flatnonzero(wl.submit < days * 86_400))
    plat = resolve_platform(str(HYBRID / "thesis300-power.toml"))
    disp = HybridDardis(0.3, planner=planner, cooling="air", temperature="summer",
                        prices="cheap", budget=budget if planner != "alg5" else None,
                        seed=seed, last_resort=last_resort,
                        name=f"hybrid-dardis70,planner={planner}")
    t0 = time.perf_counter()
    res = simulate(wl, plat, disp, seed=seed, loop="general")
    wall = time.perf_counter() - t0
    s = res.summary
    span = int(np.ceil((int(res.recorder.segments.t1.max()) + 1) / 86_400)) + 1
    setup = cooling_setup("air", f"gen:temperature:season=summer,days={span},seed={seed}",
                          "cheap", "nodes")
    profit = run_profit(res.recorder, setup).summary
    st = s["dispatcher_stats"]
    return {"planner": planner, "jobs": s["jobs_run"], "audited": s["audited"],
            "makespan_d": s["makespan"] / 86_400, "mean_wait_h": s["mean_wait"] / 3600,
            "profit_summer_air": profit["profit"],
            "profit_at_last_submission": profit["at_last_submission"]["profit"],
            "power_offs": st.get("power_offs"), "pipeline_total_s": st["pipeline_total_s"],
            "wall_s": wall, "days": st["pipeline_days"]}


def report(rows: list[dict[str, Any]], days: int, seed: int, load: str,
           last_resort: str, power_seed: int) -> str:
    """Markdown tables of the runs and of their days."""
    out = [f"# Hybrid pipeline day planner: Alg. 5 vs the searches (ch. 7 medium, first "
           f"{days} days, job power seed {power_seed})", "",
           f"hybrid-dardis70 (last_resort={last_resort}), general engine, thesis300-power, "
           f"planner profit model air / "
           f"cheap / summer seed {seed}; run priced summer-air-cheap on the nodes' power "
           f"(as run-experiment prices a run). dispatchlab {__version__}, Python "
           f"{pyplatform.python_version()}, load before: {load}.", "",
           "| planner | jobs | makespan (d) | mean wait (h) | profit summer-air (€) | "
           "at last submission (€) | power-offs | planning total (s) | wall (s) |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['planner']} | {r['jobs']:,} | {r['makespan_d']:.2f} | "
                   f"{r['mean_wait_h']:.2f} | {r['profit_summer_air']:,.1f} | "
                   f"{r['profit_at_last_submission']:,.1f} | {r['power_offs']:,} | "
                   f"{r['pipeline_total_s']:.1f} | {r['wall_s']:.1f} |")
    for r in rows:
        out += ["", f"## Days of planner={r['planner']}", "",
                "| day | forecast + waiting jobs | plan (s) | plan profit (€) | "
                "arrival-order profit (€) | gain (€) | best ordering | planned util. | "
                "profile mean |", "|---|---|---|---|---|---|---|---|---|"]
        for d in r["days"]:
            ps = d.get("plan_search") or {}
            a5 = ps.get("alg5_profit", d["plan_profit"])
            gain = (d["plan_profit"] - a5) if d["plan_profit"] is not None else None
            out.append(
                f"| {d['day_start'] // 86_400} | {d['forecast_jobs']} + {d['waiting_jobs']} "
                f"| {d['plan_s']:.2f} | {_f(d['plan_profit'])} | {_f(a5)} | {_f(gain)} | "
                f"{ps.get('ordering', 'est:inc')} | {d['planned_utilization']:.3f} | "
                f"{d['profile_mean']:.3f} |")
        plan_s = [d["plan_s"] for d in r["days"]]
        means = [d["profile_mean"] for d in r["days"]]
        out += ["", f"plan time per day: median {np.median(plan_s):.2f} s, max "
                f"{max(plan_s):.2f} s; profile mean over days {np.mean(means):.3f}"]
    return "\n".join(out) + "\n"


def _f(x: float | None) -> str:
    return "–" if x is None else f"{x:,.2f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--days", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--budget", type=int, default=None,
                    help="per-day Limits.runs of the searches (default: all 22 "
                    "orderings; Delay-Search 500 iterations)")
    ap.add_argument("--planners", nargs="*", default=["alg5", "multi"])
    ap.add_argument("--last-resort", default="machine", choices=["machine", "nodes"])
    ap.add_argument("--power-seed", type=int, default=0,
                    help="seed of the workload's job power draw (experiments' default 0)")
    ap.add_argument("--out", type=Path, default=None)
    runner_options(ap, out=False)
    args = ap.parse_args()
    ready(args, HYBRID)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    rows = []
    for p in args.planners:
        rows.append(run(p, args.days, args.seed, args.budget, args.last_resort,
                        args.power_seed))
        r = rows[-1]
        print(f"{p}: makespan {r['makespan_d']:.2f} d profit {r['profit_summer_air']:,.1f} "
              f"planning {r['pipeline_total_s']:.1f} s wall {r['wall_s']:.1f} s", flush=True)
    text = report(rows, args.days, args.seed, load, args.last_resort, args.power_seed)
    if args.out is not None:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True,
                                text=True, cwd=ROOT).stdout.strip()
        args.out.write_text(text + f"\nCommit {commit}.\n")
        args.out.with_suffix(".json").write_text(json.dumps(
            {"commit": commit, "load": load, "runs": rows}, indent=1, default=float))
    print(text)


if __name__ == "__main__":
    main()
