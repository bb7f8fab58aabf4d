"""The DARDIS experiment (thesis §5.5, Tables 5.1 and 5.2) on the Curie window of
:mod:`workload`: the randomized DARDIS setups (Profile, Balanced) over several seeds; the
deterministic ones — Throughput (First + Min start draw nothing at random) and the three
profile-aware rule-based baselines — once; under a day/night desired profile.

Usage: ``python experiments/dardis/run.py [--seeds 1 2 3] [--setups ...] [--slot 300]
[--params retries=6] [--out DIR]``; ``--params`` changes the DARDIS setups' protocol
parameters (``dardis=<setup>,<params>`` specs: ``retries=6``, ``last_resort=nodes``);
one JSON per run in ``results/`` (summary, dispatcher statistics, per-decision overhead,
hourly used cores for the figure). ``report.py`` builds the tables and the figure.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from dispatchlab import __version__
from dispatchlab.dispatchers.dardis.presets import PRESETS
from dispatchlab.dispatchers.registry import get_dispatcher
from dispatchlab.simulation import simulate
from workload import CORES, NODES, curie_workload

HERE = Path(__file__).parent
#: The desired profile (the thesis does not describe its own): 60 % of the cores from
#: 8 to 18 h local time (expensive daytime power), 100 % at night, for 400 days.
PROFILE = "gen:day-night:what=desired_utilization,day=0.6,night=1.0,day_start=8,day_end=18,days=400"
DARDIS = ("dardis-throughput", "dardis-profile", "dardis-balanced")
RANDOMIZED = ("dardis-profile", "dardis-balanced")
BASELINES = ("rb-fcfs", "rb-df", "rb-wt")


def hourly(t: np.ndarray, used: np.ndarray, end: int) -> list[float]:
    """Time-weighted mean of a step series over each hour up to ``end``."""
    edges = np.arange(0, end + 3600, 3600)
    cuts = np.union1d(edges, t[(t > 0) & (t < edges[-1])])
    idx = np.searchsorted(t, cuts[:-1], side="right") - 1
    vals = np.where(idx >= 0, used[np.maximum(idx, 0)], 0.0)
    area = vals * np.diff(cuts)
    hour = np.searchsorted(edges, cuts[:-1], side="right") - 1
    return (np.bincount(hour, weights=area, minlength=len(edges) - 1)[:len(edges) - 1]
            / 3600).tolist()


def run_one(wl, name: str, seed: int, slot: int, out: Path,  # type: ignore[no-untyped-def]
            params: str | None = None) -> dict:
    if params and name in DARDIS:
        disp = get_dispatcher(f"dardis={name},{params}")
    else:
        disp = PRESETS[name][0]()
    if hasattr(disp, "slot"):
        disp.slot = slot
    t0, c0 = time.perf_counter(), time.process_time()
    res = simulate(wl, f"nodes={NODES},cores={CORES}", disp, seed=seed, scenario=PROFILE)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    s = res.summary
    dec = np.frombuffer(res.recorder.decision_cpu, dtype=np.float64)
    ts = res.timeseries
    row = {
        "setup": name, "seed": seed, "wall_s": wall, "cpu_s": cpu,
        "load_avg_1min": os.getloadavg()[0], "version": __version__,
        "profile": PROFILE, "params": params if name in DARDIS else None,
        "slot_s": slot if hasattr(disp, "slot") else None,
        "jobs": s["jobs"], "makespan_s": s["makespan"], "mean_wait_s": s["mean_wait"],
        "total_wait_s": s["mean_wait"] * s["jobs_run"], "utilization": s["utilization"],
        "profile_metrics": s["profile"]["cores"],
        "decision_s": {"mean": float(dec.mean()), "std": float(dec.std()),
                       "max": float(dec.max()), "n": len(dec)},
        "dispatcher_stats": s.get("dispatcher_stats", {}),
        "hourly_used_cores": hourly(ts["time"].to_numpy(), ts["used_cores"].to_numpy(),
                                    int(ts["time"].max())),
    }
    (out / f"{name}-seed{seed}.json").write_text(json.dumps(row, indent=1))
    pm = row["profile_metrics"]
    print(f"{name} seed {seed}: {wall:.0f} s wall, {cpu:.0f} s CPU, "
          f"makespan {s['makespan'] / 86400:.1f} d, "
          f"late {pm['late_jobs_lst']}, over-util {pm['over_utilization'] / 3600:.0f} core-h, "
          f"diss {pm['dissimilarity']:.3f}", flush=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--setups", nargs="+", default=[*DARDIS, *BASELINES])
    ap.add_argument("--slot", type=int, default=300)
    ap.add_argument("--out", type=Path, default=HERE / "results")
    ap.add_argument("--params", default=None,
                    help="DARDIS protocol changes, e.g. retries=6 or last_resort=nodes")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    wl, win, aqt = curie_workload()
    meta = {"window_first_day": win.first_day, "jobs": win.jobs, "daily_cv": win.cv,
            "left_out_too_big": win.too_big, "average_queue_time_s": aqt,
            "profile": PROFILE, "nodes": NODES, "cores": CORES}
    (args.out / "workload.json").write_text(json.dumps(meta, indent=1))
    print(meta, flush=True)
    for name in args.setups:
        for seed in (args.seeds if name in RANDOMIZED else args.seeds[:1]):
            run_one(wl, name, seed, args.slot, args.out, args.params)


if __name__ == "__main__":
    main()
