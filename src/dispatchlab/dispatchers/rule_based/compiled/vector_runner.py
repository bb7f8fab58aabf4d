"""Run the compiled loop of jobs asking different per-unit resource vectors
(:mod:`.vector_loop`) and record its outcome exactly as the general engine would."""

from __future__ import annotations

import time
from array import array
from typing import Any

import numpy as np

from dispatchlab.dispatchers.rule_based.compiled.kernel import vector_loop_kernel
from dispatchlab.dispatchers.rule_based.compiled.runner import _cap_rows, _durations, _own, _record
from dispatchlab.dispatchers.rule_based.compiled.vector_loop import DONE, EASY, NONSTRICT, STRICT
from dispatchlab.engine.compiled.eligibility import SlotRun
from dispatchlab.engine.recorder import Recorder
from dispatchlab.engine.simulator import Simulator


def run_vectors(sim: Simulator, run: SlotRun) -> Recorder | str:
    """Simulate ``sim`` (which :func:`slot_run` sent to the vector loop); a string says why
    the general loop must run it after all (to report a queue stuck for good)."""
    vec = run.vectors
    assert vec is not None
    wl = sim.workload
    rec = Recorder(wl, sim.platform, sim.req)
    rec.walltime_kill = sim.walltime_kill
    rec.engine_info = sim.engine_info()
    rejected = sim._check_feasible(rec)  # the engine's errors and reasons
    rejected |= sim.reject_over_cap(rec, rejected)
    skip = np.zeros(wl.n_jobs, dtype=np.bool_)
    skip[list(rejected)] = True
    kernel = vector_loop_kernel()
    if sim.progress is not None:
        sim.progress(0, wl.n_jobs)
    pw = vec.power
    n_nodes = vec.capacity.shape[0]
    if pw is None:
        power: tuple[Any, ...] = (False, 0.0, 0.0, 0, np.zeros((n_nodes, 5)),
                                  np.full(3, -1, np.int64), False, np.zeros(n_nodes),
                                  np.zeros(wl.n_jobs))
    else:
        rec.power_mode = {"node_mode": pw.node_mode, "idle_counted": pw.idle_counted}
        power = (True, pw.cap, pw.used, pw.mode, np.ascontiguousarray(pw.tab, np.float64),
                 _own(pw.cols), pw.count_idle, np.ascontiguousarray(pw.node_w, np.float64),
                 np.ascontiguousarray(pw.job_w, np.float64))
    sel = EASY if run.easy else NONSTRICT if run.nonstrict else STRICT
    rk = vec.energy
    ranking = (False, np.zeros((n_nodes, 5)), np.full(3, -1, np.int64), np.ones(
        vec.capacity.shape[1])) if rk is None else (True, rk.tab, rk.cols, rk.scale)
    wall0 = time.perf_counter()
    (status, start, end, planned, offsets, nodes, counts, points, n_points, backfilled,
     watts, caps, order) = kernel(
        _own(wl.submit), _own(_durations(sim)), _own(wl.units), _own(run.estimate),
        _own(run.rank), skip, vec.req, vec.capacity, sel, run.depth, run.easy_power, *power,
        *_cap_rows(run), *ranking)
    loop_seconds = time.perf_counter() - wall0
    if status != DONE:
        return ("the queue is stuck or an idle machine waited on cap changes too long (the "
                "general loop reports it)")
    pts = points[:n_points]
    if pw is not None:
        samples = np.empty((n_points, 3))
        samples[:, 0] = pts[:, 0]
        samples[:, 1] = watts[:n_points]
        samples[:, 2] = caps[:n_points]
        rec.power_samples = array("d", samples.tobytes())
    stats: dict[str, Any] = {"backfilled": int(backfilled)} if run.easy else {}
    _record(sim, rec, (start, end, planned, offsets, nodes, counts, points, n_points), wall0,
            loop_seconds, stats, run, order, free_total=pts[:, 3:],
            job_w=None if pw is None else pw.job_w)
    return rec
