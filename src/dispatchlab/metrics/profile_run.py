"""The desired-profile block of a run's summary (``summary["profile"]``), per resource
with a desired profile: over-utilization, dissimilarity, late jobs and tardiness against
each job's latest start (:mod:`dispatchlab.metrics.profile_metrics`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from dispatchlab.engine.desired_utilization import desired_steps
from dispatchlab.engine.scenario import Scenario
from dispatchlab.metrics.job_metrics import job_arrays
from dispatchlab.metrics.profile_metrics import profile_summary
from dispatchlab.metrics.results import Results
from dispatchlab.metrics.timeseries import series_arrays


def job_lst(res: Results) -> np.ndarray:
    """Each job's latest start: its own, else arrival plus its queue's expected wait."""
    wl = res.recorder.workload if res.recorder is not None else None
    if wl is None:
        raise ValueError("these results hold no record")
    return np.where(wl.lst >= 0, wl.lst, wl.submit + wl.ewt())


def run_profile_summary(res: Results, scenario: Scenario) -> dict[str, Any]:
    """Per resource with a desired profile, the profile metrics of the run."""
    rec = res.recorder
    if rec is None:
        raise ValueError("these results hold no record")
    wl, plat = rec.workload, rec.platform
    jobs, ts = job_arrays(rec), series_arrays(rec)
    ran = jobs.ran
    first = int(wl.submit.min()) if wl.n_jobs else 0
    last_end = int(jobs.end[ran].max()) if ran.any() else first
    lst = job_lst(res)
    out: dict[str, Any] = {}
    for r, name in enumerate(plat.resources):
        t, v = desired_steps(scenario, name)
        if not len(t):
            continue
        out[name] = profile_summary(ts.time, ts.used[:, r].astype(np.float64), t, v,
                                    float(plat.total[r]), first, last_end, jobs.start, lst,
                                    ran)
    return out
