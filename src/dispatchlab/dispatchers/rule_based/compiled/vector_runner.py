"""Run the compiled loop of jobs asking different per-unit resource vectors
(:mod:`.vector_loop`) and record its outcome exactly as the general engine would."""

from __future__ import annotations

import time
from array import array
from typing import Any

import numpy as np

from dispatchlab.dispatchers.rule_based.compiled.kernel import vector_loop_kernel
from dispatchlab.dispatchers.rule_based.compiled.runner import _cap_rows, _no_rows, _own
from dispatchlab.dispatchers.rule_based.compiled.vector_loop import DONE, EASY, NONSTRICT, STRICT
from dispatchlab.engine.compiled.eligibility import SlotRun
from dispatchlab.engine.recorder import Recorder, Segments
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
                                  np.zeros(wl.n_jobs), np.zeros(n_nodes))
    else:
        rec.power_mode = {"node_mode": pw.node_mode, "idle_counted": pw.idle_counted}
        power = (True, pw.cap, pw.used, pw.mode, np.ascontiguousarray(pw.tab, np.float64),
                 _own(pw.cols), pw.count_idle, np.ascontiguousarray(pw.node_w, np.float64),
                 np.ascontiguousarray(pw.job_w, np.float64),
                 np.ascontiguousarray(pw.down_w, np.float64))
    sel = EASY if run.easy else NONSTRICT if run.nonstrict else STRICT
    rk = vec.energy
    ranking = (False, np.zeros((n_nodes, 5)), np.full(3, -1, np.int64), np.ones(
        vec.capacity.shape[1])) if rk is None else (True, rk.tab, rk.cols, rk.scale)
    rows = run.scenario if run.scenario is not None else _no_rows()
    wall0 = time.perf_counter()
    (status, seg_job, t0, t1, outcome, lost, offsets, nodes, counts, planned, points, alive,
     node_log, failed, backfilled, watts, caps) = kernel(
        _own(wl.submit), _own(wl.runtime), _own(wl.walltime), sim.walltime_kill, _own(wl.units),
        _own(run.estimate), _own(run.rank), skip, vec.req, vec.capacity, sel, run.depth,
        run.easy_power, *power, *_cap_rows(run), *ranking, rows.time, rows.kind, rows.value,
        rows.offsets, rows.nodes, sim.on_abort == "requeue", _own(wl.checkpoint))
    loop_seconds = time.perf_counter() - wall0
    if status != DONE:
        return ("the queue is stuck or an idle machine waited on cap changes too long (the "
                "general loop reports it)")
    n_points = len(points)
    if pw is not None:
        samples = np.empty((n_points, 3))
        samples[:, 0] = points[:, 0]
        samples[:, 1] = watts
        samples[:, 2] = caps
        rec.power_samples = array("d", samples.tobytes())
    rec.segments = Segments(job=seg_job, t0=t0, t1=t1, outcome=outcome.astype(np.int8),
                            lost=lost, offsets=offsets, nodes=nodes, counts=counts,
                            power=None if pw is None else pw.job_w[seg_job])
    rec.planned = planned
    if len(node_log):
        rec.node_log = array("q", np.ascontiguousarray(node_log, np.int64).tobytes())
    rec.failed = set(np.flatnonzero(failed).tolist())
    rec.decision_at = array("q", points[:, 0].tobytes())
    rec.decision_cpu = array("d", [loop_seconds / max(n_points, 1)]) * n_points
    rec.samples = array("q", np.ascontiguousarray(np.hstack((points, alive)),
                                                  dtype=np.int64).tobytes())
    sim.note_power_shed(rec)
    rec.finish(time.perf_counter() - wall0, {"backfilled": int(backfilled)} if run.easy else {})
    if sim.progress is not None:
        sim.progress(wl.n_jobs, wl.n_jobs)
    return rec
