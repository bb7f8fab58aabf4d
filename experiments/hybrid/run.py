"""Thesis ch. 7 experiment (§7.6, Table 7.1, Figs. 7.2–7.4): the hybrid pipeline with
DARDIS100 / 70 / 50 against the best of six rule-based setups, on the three Curie
workloads, in four scenarios (summer / winter × air / hybrid cooling).

No dispatcher here reads the temperature or the cooling model (Alg. 8 works on
utilization only), so each (workload, dispatcher) is simulated once and its record is
priced in the four scenarios (``dispatchlab.energy.profit.run_profit``), which is what
``run-experiment`` with four cooling entries per workload would compute four times.

    .venv/bin/python experiments/hybrid/workload.py            # data/*.parquet
    .venv/bin/python experiments/hybrid/run.py --days 10       # reduced: first 10 days
    .venv/bin/python experiments/hybrid/run.py                 # full
"""

from __future__ import annotations

import argparse
import json
import platform as pyplatform
import subprocess
import time
from pathlib import Path
from typing import Any

import numpy as np

from dispatchlab import __version__
from dispatchlab.energy.profit import cooling_setup, run_profit
from dispatchlab.platform.resolve import resolve_platform
from dispatchlab.simulation import simulate
from dispatchlab.workload.load import load_workload

HERE = Path(__file__).resolve().parent
WORKLOADS = ("low", "medium", "high")
#: Thesis §6.3's rules EST and WT, strict and non-strict; its third rule (profit /
#: cost) is not in the catalogue yet, so EASY backfilling of both orders stands in.
RULE_BASED = ("fifo", "fifo-nonstrict", "easy", "sjf", "order=sjf,select=nonstrict",
              "easy-sjf")
HYBRID = ("hybrid-dardis100", "hybrid-dardis70", "hybrid-dardis50")
SCENARIOS = {f"{season}-{cool}": (season, cool) for season in ("summer", "winter")
             for cool in ("air", "hybrid")}
PRICES = "cheap"


def run_one(workload: str, dispatcher: str, days: int | None, seed: int,
            retries: int | None = None) -> dict:
    """Simulate once, price in every scenario; the figures of one run (``retries``: the
    hybrid presets with that many DARDIS retry windows instead of the thesis's 3)."""
    wl = load_workload(f"gen:curie-thesis:level=ch7-{workload},seed=0")
    if days is not None:
        wl = wl.take(np.flatnonzero(wl.submit < days * 86_400))
    plat = resolve_platform(str(HERE / "thesis300-power.toml"))
    t0 = time.perf_counter()
    disp: Any = dispatcher
    if retries is not None and dispatcher in HYBRID:
        from dispatchlab.hybrid.pipeline import HybridDardis

        off = {"hybrid-dardis100": 0.0, "hybrid-dardis70": 0.3, "hybrid-dardis50": 0.5}
        disp = HybridDardis(off[dispatcher], retries=retries, name=f"{dispatcher}-r{retries}")
    res = simulate(wl, plat, disp, seed=seed, engine="general")
    wall = time.perf_counter() - t0
    s = res.summary
    st = s.get("dispatcher_stats", {})
    span_days = int(np.ceil((int(res.recorder.segments.t1.max()) + 1) / 86_400)) + 1
    profit = {}
    for name, (season, cool) in SCENARIOS.items():
        setup = cooling_setup(cool, f"gen:temperature:season={season},days={span_days},"
                              f"seed={seed}", PRICES, "nodes")
        p = run_profit(res.recorder, setup).summary
        profit[name] = {k: p[k] for k in ("profit", "core_hours", "it_kwh", "cooling_kwh",
                                          "mean_pue")}
    n = max(s["jobs_run"], 1)
    return {
        "workload": workload, "dispatcher": dispatcher, "seed": seed, "days": days,
        "retries": retries if dispatcher in HYBRID else None,
        "jobs": s["jobs_run"], "audited": s["audited"], "makespan_s": s["makespan"],
        "mean_wait_s": s["mean_wait"], "energy_kwh": s["energy"]["total_j"] / 3.6e6,
        "overhead_per_job_s": s["dispatch_time_total_s"] / n,
        "decision_time_total_s": s["dispatch_time_total_s"], "wall_s": wall,
        "power_offs": st.get("power_offs"), "power_ons": st.get("power_ons"),
        "released_for_jobs": st.get("released_for_jobs"),
        "pipeline_total_s": st.get("pipeline_total_s"),
        "profile_mean": (float(np.mean([d["profile_mean"] for d in st["pipeline_days"]]))
                         if st.get("pipeline_days") else None),
        "profit": profit,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--days", type=int, default=None, help="first DAYS days of submissions")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workloads", nargs="*", default=list(WORKLOADS))
    ap.add_argument("--dispatchers", nargs="*", default=[*RULE_BASED, *HYBRID])
    ap.add_argument("--retries", type=int, default=None,
                    help="DARDIS retry windows of the hybrid presets (thesis: 3)")
    args = ap.parse_args()
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                            cwd=HERE).stdout.strip()
    tag = f"days{args.days}" if args.days else "full"
    for w in args.workloads:
        for d in args.dispatchers:
            row = run_one(w, d, args.days, args.seed, args.retries)
            row.update({"dispatchlab": __version__, "commit": commit,
                        "python": pyplatform.python_version(), "prices": PRICES})
            r = f"-r{args.retries}" if args.retries is not None and d in HYBRID else ""
            name = f"{tag}_{w}_{d.replace('=', '-').replace(',', '_')}{r}_s{args.seed}.json"
            (out / name).write_text(json.dumps(row, indent=1))
            print(f"{w:7s} {d:28s} wall {row['wall_s']:7.1f} s  makespan "
                  f"{row['makespan_s'] / 86_400:6.2f} d  profit(summer-air) "
                  f"{row['profit']['summer-air']['profit']:10.1f}", flush=True)


if __name__ == "__main__":
    main()
