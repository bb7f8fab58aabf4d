"""Run-level summary metrics (SPEC §2) from the per-job table and the time series."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from dispatchlab.engine.recorder import Recorder
from dispatchlab.metrics.timeseries import busy_integral


def summarize(rec: Recorder, jobs: pd.DataFrame, ts: pd.DataFrame) -> dict[str, Any]:
    """The summary dictionary; keys listed in the README are stable for tooling."""
    ran = jobs[~jobs["rejected"]]
    n_ran = len(ran)
    first = int(jobs["submit"].min()) if len(jobs) else 0
    last_end = int(ran["end"].max()) if n_ran else first
    span = max(last_end - first, 1)
    total = rec.platform.total
    util = {
        name: (busy_integral(ts, f"used_{name}", last_end) / (int(total[r]) * span)
               if total[r] > 0 else 0.0)
        for r, name in enumerate(rec.platform.resources)
    }
    dec = np.frombuffer(rec.decision_cpu, dtype=np.float64)
    wait = ran["wait"].to_numpy()

    def mean(col: str) -> float:
        return float(ran[col].mean()) if n_ran else 0.0

    summary: dict[str, Any] = {
        "jobs": len(jobs),
        "jobs_run": n_ran,
        "rejected": int(jobs["rejected"].sum()),
        "mean_wait": mean("wait"),
        "median_wait": float(np.median(wait)) if n_ran else 0.0,
        "p90_wait": float(np.percentile(wait, 90)) if n_ran else 0.0,
        "max_wait": int(wait.max()) if n_ran else 0,
        "mean_slowdown": mean("slowdown"),
        "mean_bounded_slowdown": mean("bounded_slowdown"),
        "max_bounded_slowdown": float(ran["bounded_slowdown"].max()) if n_ran else 0.0,
        "makespan": last_end - first,
        "utilization": util["cores"],
        "utilization_by_resource": util,
        "killed": int(ran["killed"].sum()),
        "late_jobs": int(ran["late"].sum()),
        "total_tardiness": float(ran["tardiness"].sum()),
        "weighted_queue_time": float(ran["weighted_queue_time"].sum()),
        "weighted_tardiness": float(ran["weighted_tardiness"].sum()),
        "mean_queue_length": (busy_integral(ts, "queue_length", last_end) / span),
        "max_queue_length": int(ts["queue_length"].max()) if len(ts) else 0,
        "decision_points": len(dec),
        "dispatch_time_mean_ms": float(dec.mean() * 1e3) if len(dec) else 0.0,
        "dispatch_time_max_ms": float(dec.max() * 1e3) if len(dec) else 0.0,
        "dispatch_time_total_s": float(dec.sum()),
        "dispatch_overhead_pct": float(dec.sum() / span * 100.0),
        **_groups(ran, jobs),
        **({"rules": rec.rules_info} if rec.rules_info else {}),
        "sim_seconds": rec.sim_seconds,
        "jobs_per_second": (len(jobs) / rec.sim_seconds) if rec.sim_seconds > 0 else 0.0,
    }
    if rec.dispatcher_stats:
        summary["dispatcher_stats"] = rec.dispatcher_stats
    return summary


def _groups(ran: pd.DataFrame, jobs: pd.DataFrame) -> dict[str, Any]:
    """Job arrays: how many, and their mean completion (last element's end − submit)."""
    if "array" not in jobs.columns:
        return {}
    members = ran[ran["array"] >= 0]
    per = members.groupby("array").agg(first=("submit", "min"), last=("end", "max"))
    done = per["last"] - per["first"]
    return {"job_arrays": {"count": int((jobs["array"] >= 0).groupby(jobs["array"]).any().sum()
                                        - (1 if (jobs["array"] < 0).any() else 0)),
                           "mean_completion": float(done.mean()) if len(done) else 0.0}}
