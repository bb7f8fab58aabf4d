"""Run-level summary metrics (SPEC §2), computed from numpy arrays alone.

Utilization is measured against the capacity that was alive: ``∫ used dt / ∫ alive dt``
from the first submission to the last end (with a fixed machine, ``alive = total``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dispatchlab.arrays import one_of, quantile
from dispatchlab.engine.recorder import ABORTED, PREEMPTED, Recorder
from dispatchlab.metrics.job_metrics import JobArrays
from dispatchlab.metrics.schedule_digest import schedule_digest
from dispatchlab.metrics.timeseries import SeriesArrays, step_integral


def summarize(rec: Recorder, jobs: JobArrays, ts: SeriesArrays) -> dict[str, Any]:
    """The summary dictionary; keys listed in the README are stable for tooling."""
    wl = rec.workload
    ran = jobs.ran
    n_ran = int(ran.sum())
    first = int(wl.submit.min()) if wl.n_jobs else 0
    last_end = int(jobs.end[ran].max()) if n_ran else first
    span = max(last_end - first, 1)
    util = {}
    total = rec.platform.total
    for r, name in enumerate(rec.platform.resources):
        alive = _alive_integral(ts, r, first, last_end, int(total[r]), span)
        util[name] = step_integral(ts.time, ts.used[:, r], last_end) / alive if alive > 0 \
            else 0.0
    dec = np.frombuffer(rec.decision_cpu, dtype=np.float64)
    wait = jobs.wait[ran]

    def mean(values: np.ndarray) -> float:
        return float(values[ran].mean()) if n_ran else 0.0

    seg = rec.segments
    summary: dict[str, Any] = {
        "jobs": wl.n_jobs,
        "jobs_run": n_ran,
        "rejected": int((jobs.outcome < 0).sum()),
        "mean_wait": mean(jobs.wait),
        "median_wait": quantile(np.sort(wait), 0.5) if n_ran else 0.0,
        "p90_wait": quantile(np.sort(wait), 0.9) if n_ran else 0.0,
        "max_wait": int(wait.max()) if n_ran else 0,
        "mean_slowdown": mean(jobs.slowdown),
        "mean_bounded_slowdown": mean(jobs.bounded_slowdown),
        "max_bounded_slowdown": float(jobs.bounded_slowdown[ran].max()) if n_ran else 0.0,
        "makespan": last_end - first,
        "utilization": util["cores"],
        "utilization_by_resource": util,
        "killed": int(jobs.killed.sum()),
        "late_jobs": int(jobs.late.sum()),
        "total_tardiness": float(jobs.tardiness[ran].sum()),
        "weighted_queue_time": float(np.nansum(jobs.weighted_queue_time[ran])),
        "mean_weighted_queue_time": _nanmean(jobs.weighted_queue_time[ran]),
        "weighted_tardiness": float(np.nansum(jobs.weighted_tardiness[ran])),
        "mean_queue_length": step_integral(ts.time, ts.queue_length, last_end) / span,
        "max_queue_length": int(ts.queue_length.max()) if len(ts.time) else 0,
        "decision_points": len(dec),
        "dispatch_time_mean_ms": float(dec.mean() * 1e3) if len(dec) else 0.0,
        "dispatch_time_max_ms": float(dec.max() * 1e3) if len(dec) else 0.0,
        "dispatch_time_total_s": float(dec.sum()),
        "dispatch_overhead_pct": float(dec.sum() / span * 100.0),
        **_groups(rec, jobs),
        **({"rules": rec.rules_info} if rec.rules_info else {}),
        "schedule_digest": schedule_digest(rec, canonical=True, points=False),
        "sim_seconds": rec.sim_seconds,
        "jobs_per_second": (wl.n_jobs / rec.sim_seconds) if rec.sim_seconds > 0 else 0.0,
    }
    stopped = one_of(seg.outcome, (ABORTED, PREEMPTED))
    if stopped.any() or rec.failed:
        summary.update(
            aborted_segments=int((seg.outcome == ABORTED).sum()),
            preempted_segments=int((seg.outcome == PREEMPTED).sum()),
            restarts=int(jobs.restarts.sum()),
            failed=len(rec.failed),
            lost_work_core_seconds=int(jobs.lost_work.sum()))
    if ts.power_used is not None and ts.power_cap is not None:
        over = ts.power_used > ts.power_cap + 1e-6
        summary["power"] = {
            "peak_w": float(ts.power_used.max()) if len(ts.time) else 0.0,
            "mean_w": step_integral(ts.time, ts.power_used, last_end) / span,
            "over_cap_seconds": step_integral(ts.time, over.astype(np.float64), last_end),
            **_cap_figures(ts.time, ts.power_cap, last_end),
        }
    if rec.engine_info.get("oracle"):
        summary["oracle"] = True
    if rec.dispatcher_stats:
        summary["dispatcher_stats"] = rec.dispatcher_stats
        if rec.dispatcher_stats.get("reproducible") is False:
            # a wall clock shaped some decisions: the same run may give other numbers
            summary["reproducible"] = False
            summary["wall_limit_hits"] = int(rec.dispatcher_stats.get("wall_limit_hits", 0))
    return summary


def _cap_figures(t: np.ndarray, cap: np.ndarray, last_end: int) -> dict[str, float]:
    """The cap in force over the run: least, largest and time-weighted mean (W) of its
    finite stretches (``cap_mean_w`` is the cap itself when it is fixed), and how long the
    run was under a cap and without one (``capped_seconds``, ``uncapped_seconds``: a cap
    of 9 kW for a tenth of the run is not a 9 kW run)."""
    finite = np.isfinite(cap)
    if not len(t) or not finite.any():
        return {}
    dt = np.diff(np.append(t, max(last_end, int(t[-1])))).astype(np.float64)
    w = dt[finite]
    vals = cap[finite]
    mean = float((vals * w).sum() / w.sum()) if w.sum() > 0 else float(vals[-1])
    return {"cap_min_w": float(vals.min()), "cap_max_w": float(vals.max()), "cap_mean_w": mean,
            "capped_seconds": int(w.sum()), "uncapped_seconds": int(dt[~finite].sum())}


def _nanmean(values: np.ndarray) -> float:
    """Mean of the finite values (0 when there is none): the mean weighted queue time in
    EWT units of Borghesi et al. (2015) §6.1 — each job's wait ÷ its queue's expected
    wait, averaged over the jobs that ran (jobs of a queue without an EWT left out)."""
    finite = values[np.isfinite(values)]
    return float(finite.mean()) if len(finite) else 0.0


def _alive_integral(ts: SeriesArrays, r: int, first: int, last_end: int, total: int,
                    span: int) -> float:
    """∫ alive capacity of resource ``r`` over ``[first, last_end]`` (``total × span`` on a
    fixed machine, also when the run is shorter than a second)."""
    alive = ts.alive[:, r]
    if not len(alive) or (alive == total).all():
        return float(total * span)
    if last_end <= first:
        return float(alive[-1])
    return step_integral(np.clip(ts.time, first, last_end), alive, last_end)


def _groups(rec: Recorder, jobs: JobArrays) -> dict[str, Any]:
    """Job arrays: how many, and their mean completion (last element's end − submit)."""
    arr = rec.workload.array
    member = arr >= 0
    if not member.any():
        return {}
    ids, inv = np.unique(arr[member], return_inverse=True)
    done = member.copy()
    done[member] = jobs.ran[member]
    sel = done[member]
    first = np.full(len(ids), np.iinfo(np.int64).max)
    last = np.full(len(ids), -1, np.int64)
    np.minimum.at(first, inv[sel], rec.workload.submit[member][sel])
    np.maximum.at(last, inv[sel], jobs.end[member][sel])
    ok = last >= 0
    return {"job_arrays": {"count": len(ids),
                           "mean_completion": float((last[ok] - first[ok]).mean())
                           if ok.any() else 0.0}}
