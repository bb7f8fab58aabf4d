"""The first-fit strategies' compiled plan: which runs their loop reproduces exactly.

Every job one unit of at least one core and nothing but cores (the strategies' rule: one
machine per job; the general loop reports any other job when it meets it); the engine adds
its own checks (:mod:`dispatchlab.engine.compiled.own_placement`: no power cap, no operator
rules, scenario rows of nodes only).
"""

from __future__ import annotations

import numpy as np

from dispatchlab.engine.compiled.plan import OWN_PLACEMENT, CompiledPlan
from dispatchlab.engine.state import SystemView
from dispatchlab.workload.workload import Workload


def first_fit_plan(aware: bool, workload: Workload, view: SystemView) -> CompiledPlan | str:
    """The plan of ``FirstFitVC(aware)`` for ``workload`` (the queue: by job index, the
    release order), or why the general loop must run it."""
    from dispatchlab.dispatchers.variable_capacity.compiled.runner import run_first_fit

    if workload.n_jobs and (workload.units != 1).any():
        return "a job of several units (the general loop reports it)"
    req = view.req
    ridx = view.platform.resources.index("cores")
    others = np.delete(req, ridx, axis=1)
    if others.size and (others != 0).any():
        return "a job asks resources other than cores"
    if (req[:, ridx] < 1).any():
        return "a job asks no cores"
    n = workload.n_jobs
    return CompiledPlan(OWN_PLACEMENT, -1, np.maximum(workload.walltime, 1).astype(np.int64),
                        lambda: np.arange(n, dtype=np.int64),
                        lambda sim, run: run_first_fit(sim, run, aware))
