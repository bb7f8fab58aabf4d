"""Run the first-fit loop and record its outcome exactly as the general engine would."""

from __future__ import annotations

import time
from array import array

import numpy as np

from dispatchlab.arrays import IntArray
from dispatchlab.dispatchers.variable_capacity.common import chosen_nodes
from dispatchlab.dispatchers.variable_capacity.compiled.first_fit_loop import FALLBACK
from dispatchlab.dispatchers.variable_capacity.compiled.kernel import first_fit_loop_kernel
from dispatchlab.dispatchers.variable_capacity.compiled.scenario_choice import resolve_rows
from dispatchlab.engine.compiled.eligibility import SlotRun
from dispatchlab.engine.recorder import Recorder, Segments
from dispatchlab.engine.simulator import Simulator


def run_first_fit(sim: Simulator, run: SlotRun, aware: bool) -> Recorder | str:
    """The first-fit plan's run (:attr:`CompiledPlan.run
    <dispatchlab.engine.compiled.plan.CompiledPlan.run>`): ``sim`` in the compiled loop, or
    why the general loop must run it (to raise its own error for a queue stuck for good).

    Per-decision dispatcher time cannot be measured inside the loop: each decision point is
    charged the loop's total time divided by the number of decision points.
    """
    wl, plat = sim.workload, sim.platform
    rec = Recorder(wl, plat, sim.req)
    rec.walltime_kill = sim.walltime_kill
    rec.engine_info = sim.engine_info()
    skip = np.zeros(wl.n_jobs, dtype=np.bool_)
    skip[list(sim._check_feasible(rec))] = True  # the engine's errors and reasons
    ridx = plat.resources.index("cores")
    cores = _own(sim.req[:, ridx])
    sizes, size_of = np.unique(cores, return_inverse=True)
    size_room = np.bincount(size_of[~skip], minlength=len(sizes))
    rng = np.random.default_rng(sim.seed)  # as the engine seeds the dispatcher's

    def choose(candidates: IntArray, count: int, leaving: bool) -> list[int]:
        return chosen_nodes(aware, rng, candidates, count, leaving)

    if run.scenario is not None:
        s_time, s_leave, s_off, s_nodes = resolve_rows(run.scenario, plat.n_nodes, choose)
    else:
        none = np.zeros(0, np.int64)
        s_time, s_leave, s_off, s_nodes = none, np.zeros(0, np.bool_), np.zeros(1, np.int64), none
    kernel = first_fit_loop_kernel()  # loaded before the clock starts, like the general engine
    if sim.progress is not None:
        sim.progress(0, wl.n_jobs)
    wall0 = time.perf_counter()
    (status, seg_job, t0, t1, out, lost, seg_node, points, alive, node_log, failed) = kernel(
        _own(wl.submit), _own(wl.runtime), _own(wl.walltime), sim.walltime_kill, cores,
        _own(size_of), _own(sizes), _own(size_room), skip, _own(run.slots),
        np.ascontiguousarray(plat.capacity, np.int64), s_time, s_leave, s_off, s_nodes,
        sim.on_abort == "requeue", _own(wl.checkpoint))
    loop_seconds = time.perf_counter() - wall0
    if status == FALLBACK:
        return "the queue is stuck (the general loop reports it)"
    n_seg = len(seg_job)
    rec.segments = Segments(
        job=seg_job, t0=t0, t1=t1, outcome=out.astype(np.int8), lost=lost,
        offsets=np.arange(n_seg + 1, dtype=np.int64), nodes=seg_node.astype(np.int32),
        counts=np.ones(n_seg, np.int32))
    rec.node_log = array("q", np.ascontiguousarray(node_log, np.int64).tobytes())
    rec.failed = set(np.flatnonzero(failed).tolist())
    n_points = len(points)
    rec.decision_at = array("q", np.ascontiguousarray(points[:, 0]).tobytes())
    rec.decision_cpu = array("d", [loop_seconds / max(n_points, 1)]) * n_points
    free_total = alive.copy()
    free_total[:, ridx] -= points[:, 3]
    rec.samples = array("q", np.ascontiguousarray(
        np.hstack((points[:, :3], free_total, alive)), dtype=np.int64).tobytes())
    rec.finish(time.perf_counter() - wall0, {"starts": n_seg})
    if sim.progress is not None:
        sim.progress(wl.n_jobs, wl.n_jobs)
    return rec


def _own(a: np.ndarray) -> IntArray:
    """A writable C-contiguous int64 copy: one array type, so one compiled signature."""
    return np.array(a, dtype=np.int64, order="C")
