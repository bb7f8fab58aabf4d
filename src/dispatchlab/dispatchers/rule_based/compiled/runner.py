"""Run a compiled loop and record its outcome exactly as the general engine would."""

from __future__ import annotations

import time
from array import array
from typing import Any

import numpy as np
import numpy.typing as npt

from dispatchlab.arrays import with_zero
from dispatchlab.dispatchers.rule_based.compiled.conservative_loop import FALLBACK
from dispatchlab.dispatchers.rule_based.compiled.conservative_loop import (
    OUTLIVES as FIXED_OUTLIVES,
)
from dispatchlab.dispatchers.rule_based.compiled.conservative_scenario_loop import (
    FALLBACK as CONSERVATIVE_FALLBACK,
)
from dispatchlab.dispatchers.rule_based.compiled.conservative_scenario_loop import OUTLIVES
from dispatchlab.dispatchers.rule_based.compiled.kernel import (
    conservative_loop_kernel,
    conservative_scenario_loop_kernel,
    scenario_loop_kernel,
    slot_loop_kernel,
)
from dispatchlab.dispatchers.rule_based.compiled.slot_loop import FALLBACK as SLOT_FALLBACK
from dispatchlab.dispatchers.rule_based.compiled.slot_loop import STUCK
from dispatchlab.engine.compiled.eligibility import ScenarioRows, SlotRun
from dispatchlab.engine.core.codes import FALLBACK as SCENARIO_FALLBACK
from dispatchlab.engine.recorder import COMPLETED, KILLED, Recorder, Segments
from dispatchlab.engine.simulator import Simulator
from dispatchlab.errors import DispatchlabError


def run_plan(sim: Simulator, run: SlotRun) -> Recorder | str:
    """The policy's compiled plan run (:attr:`CompiledPlan.run
    <dispatchlab.engine.compiled.plan.CompiledPlan.run>`): the conservative loop, the loop of a
    machine whose nodes change, or the strict/EASY loop of a fixed machine; a string says
    why the general loop must run ``sim`` after all."""
    if run.vectors is not None:  # jobs asking different unit vectors, or non-strict
        from dispatchlab.dispatchers.rule_based.compiled.vector_runner import run_vectors

        return run_vectors(sim, run)
    if run.conservative and (run.scenario is not None or run.power is not None
                             or run.cap_rows is not None):
        if run.depth >= 0 or run.score_terms is not None:
            return ("conservative backfilling with a "
                    + ("depth limit" if run.depth >= 0 else "dynamic ordering")
                    + " runs compiled only on a fixed machine without a cap or scenario "
                    "rows")
        return run_conservative_changes(sim, run)
    if run.conservative:
        rec = run_conservative(sim, run)
        # pragma: no cover - never for the estimates it takes (see conservative_loop)
        return rec if rec is not None else ("a reservation was left in the past (the general "
                                            "loop rebuilds them)")
    if run.scenario is not None:
        found = run_scenario_slots(sim, run)
        return found if found is not None else "the queue is stuck (the general loop reports it)"
    found = run_slots(sim, run)
    return found if found is not None else ("an idle machine waited on cap changes too long "
                                            "(the general loop reports it)")


def run_slots(sim: Simulator, run: SlotRun) -> Recorder | None:
    """Simulate ``sim`` (which :func:`slot_run` accepted) in the compiled loop; ``None``
    when the general loop must run it to report an idle machine waiting on cap rows.

    Per-decision dispatcher time cannot be measured inside the loop: each decision point
    is charged the loop's total time divided by the number of decision points.
    """
    wl = sim.workload
    rec, skip = _prepare(sim, run)
    kernel = slot_loop_kernel()  # loaded before the clock starts, like the general engine
    if sim.progress is not None:
        sim.progress(0, wl.n_jobs)
    power, node_w, _, job_w = _power_args(rec, run)
    wall0 = time.perf_counter()
    (status, start, end, planned, offsets, nodes, counts, points, n_points, backfilled,
     bad_job, watts, _scanned, caps, order) = kernel(
        _own(wl.submit), _own(_durations(sim)), _own(wl.units),
        _own(run.estimate), _own(run.rank), skip, _own(run.slots), run.easy, run.depth,
        run.easy_power, power[0], power[1], power[2], node_w, job_w, power[3], *_cap_rows(run),
        *_score_args(run))
    loop_seconds = time.perf_counter() - wall0
    if status == SLOT_FALLBACK:
        return None
    _check(sim, status, bad_job, run)
    _power_samples(rec, run, points[:n_points, 0], watts[:n_points], caps[:n_points])
    stats: dict[str, Any] = {"backfilled": int(backfilled)} if run.easy else {}
    _record(sim, rec, (start, end, planned, offsets, nodes, counts, points, n_points),
            wall0, loop_seconds, stats, run, order)
    return rec


def run_scenario_slots(sim: Simulator, run: SlotRun) -> Recorder | None:
    """Simulate ``sim`` (strict or EASY under a node scenario that :func:`slot_run`
    accepted) on the engine core with the strict/EASY kernel (:mod:`.slot_book`); ``None``
    when the general loop must run it to raise its error (a queue stuck for good)."""
    wl = sim.workload
    rows = run.scenario
    assert rows is not None
    rec, skip = _prepare(sim, run)
    kernel = scenario_loop_kernel()
    if sim.progress is not None:
        sim.progress(0, wl.n_jobs)
    power, node_w, down_w, job_w = _power_args(rec, run)
    wall0 = time.perf_counter()
    out = kernel(
        (_own(wl.submit), _own(wl.runtime), _own(wl.walltime), _own(wl.units),
         _own(wl.checkpoint), skip, bool(sim.walltime_kill), sim.on_abort == "requeue"),
        (_own(run.slots), np.ascontiguousarray(sim.platform.capacity, np.int64),
         _own(sim.req[0])),
        (rows.time, rows.kind, rows.value, rows.offsets, rows.nodes),
        (power[0], float(power[1]), float(power[2]), node_w, down_w, job_w, *_cap_rows(run)),
        (_own(run.estimate), _own(run.rank), bool(run.easy), int(run.depth),
         bool(run.easy_power), float(power[3]), *_score_args(run)))
    loop_seconds = time.perf_counter() - wall0
    if out[0] == SCENARIO_FALLBACK:
        return None
    stats: dict[str, Any] = {"backfilled": int(out[17])} if run.easy else {}
    return record_changing(sim, rec, run, out, wall0, loop_seconds, stats)


def record_changing(sim: Simulator, rec: Recorder, run: SlotRun, out: tuple[Any, ...],
                    wall0: float, loop_seconds: float, stats: dict[str, Any]) -> Recorder:
    """Store the outcome of a loop whose nodes change (the scenario loop's tuple: segments
    in start order, node log, usable capacity per decision point) in ``rec`` exactly as the
    general engine would, ``stats`` as the dispatcher's statistics."""
    (status, seg_job, t0, t1, outcome, lost, offsets, nodes, counts, _n_seg, planned, points,
     alive, n_points, node_log, _n_log, failed, _backfilled, bad_job, watts, caps) = out[:21]
    _check(sim, status, bad_job)
    _record_changes(sim, rec, run, (seg_job, t0, t1, outcome, lost, offsets, nodes, counts,
                                    planned, points, alive, n_points, node_log, failed,
                                    watts, caps), wall0, loop_seconds, stats)
    return rec


def run_conservative_changes(sim: Simulator, run: SlotRun) -> Recorder | str:
    """Simulate ``sim`` (conservative backfilling that :func:`slot_run` accepted, with nodes
    leaving and coming back, a power cap, or both) in the compiled loop
    :mod:`.conservative_scenario_loop`; a string says why the general loop must run it (to
    raise its own error, or a job outliving its estimate)."""
    wl = sim.workload
    rows = run.scenario if run.scenario is not None else _no_rows()
    rec, skip = _prepare(sim, run)
    kernel = conservative_scenario_loop_kernel()
    if sim.progress is not None:
        sim.progress(0, wl.n_jobs)
    power, node_w, down_w, job_w = _power_args(rec, run)
    wall0 = time.perf_counter()
    (status, seg_job, t0, t1, out, lost, offsets, nodes, counts, _n_seg, planned, points,
     alive, n_points, node_log, _n_log, failed, compressions, rebuilds, moves, bad_job, watts,
     caps) = kernel(
        _own(wl.submit), _own(wl.runtime), _own(wl.walltime), sim.walltime_kill,
        _own(wl.units), _own(run.estimate), _own(run.rank), skip, _own(run.slots),
        np.ascontiguousarray(sim.platform.capacity, np.int64), _own(sim.req[0]),
        rows.time, rows.kind, rows.value, rows.offsets, rows.nodes,
        sim.on_abort == "requeue", _own(wl.checkpoint), power[0], power[1], power[2], node_w,
        down_w, job_w, *_cap_rows(run))
    loop_seconds = time.perf_counter() - wall0
    if status == OUTLIVES:
        return _outlives(sim, bad_job)
    if status == CONSERVATIVE_FALLBACK:
        return "the queue is stuck (the general loop reports it)"
    _check(sim, status, bad_job)
    stats = {"compressions": int(compressions), "rebuilds": int(rebuilds), "moves": int(moves)}
    _record_changes(sim, rec, run, (seg_job, t0, t1, out, lost, offsets, nodes, counts,
                                    planned, points, alive, n_points, node_log, failed,
                                    watts, caps), wall0, loop_seconds, stats)
    return rec


def _outlives(sim: Simulator, job: int) -> str:
    """Why a conservative run needs the general loop: ``job`` outlives its estimate."""
    return (f"job {int(sim.workload.job_id[job])} would outlive its expected end (no "
            "wall-time kill: the general loop holds it and rebuilds the book)")


def _no_rows() -> ScenarioRows:
    """An empty node scenario (a cap alone)."""
    none = np.zeros(0, np.int64)
    return ScenarioRows(none, none, none, np.zeros(1, np.int64), none)


def _record_changes(sim: Simulator, rec: Recorder, run: SlotRun, out: tuple[Any, ...],
                    wall0: float, loop_seconds: float, stats: dict[str, Any]) -> None:
    """Store the outcome of a loop of a machine that changes (segments in the order they
    started, node log, failed jobs, samples) in ``rec`` exactly as the general engine
    would."""
    (seg_job, t0, t1, out_, lost, offsets, nodes, counts, planned, points, alive, n_points,
     node_log, failed, watts, caps) = out
    wl = sim.workload
    rec.segments = Segments(
        job=seg_job, t0=t0, t1=t1, outcome=out_.astype(np.int8), lost=lost, offsets=offsets,
        nodes=nodes, counts=counts,
        power=None if run.power is None else run.power.job_w[seg_job])
    _power_samples(rec, run, points[:, 0], watts, caps)
    rec.planned = planned
    rec.node_log = array("q", np.ascontiguousarray(node_log, np.int64).tobytes())
    rec.failed = set(np.flatnonzero(failed).tolist())
    rec.decision_at = array("q", points[:, 0].tobytes())
    rec.decision_cpu = array("d", [loop_seconds / max(n_points, 1)]) * n_points
    free_total = alive - points[:, 3:4] * sim.req[0][None, :]
    rec.samples = array("q", np.ascontiguousarray(
        np.hstack((points[:, :3], free_total, alive)), dtype=np.int64).tobytes())
    sim.note_power_shed(rec)
    rec.finish(time.perf_counter() - wall0, stats)
    if sim.progress is not None:
        sim.progress(wl.n_jobs, wl.n_jobs)


def run_conservative(sim: Simulator, run: SlotRun) -> Recorder | str | None:
    """Simulate ``sim`` (conservative backfilling that :func:`slot_run` accepted) in the
    compiled conservative loop; ``None`` when the run needs the general loop after all."""
    wl = sim.workload
    rec, skip = _prepare(sim, run)
    kernel = conservative_loop_kernel()
    if sim.progress is not None:
        sim.progress(0, wl.n_jobs)
    wall0 = time.perf_counter()
    (status, start, end, planned, offsets, nodes, counts, points, n_points, compressions,
     moves, bad_job, order) = kernel(
        _own(wl.submit), _own(_durations(sim)), _own(wl.units),
        _own(run.estimate), _own(run.rank), skip, _own(run.slots), run.depth,
        *_score_args(run))
    loop_seconds = time.perf_counter() - wall0
    if status == FALLBACK:
        return None
    if status == FIXED_OUTLIVES:
        return _outlives(sim, bad_job)
    _check(sim, status, bad_job)
    stats = {"compressions": int(compressions), "rebuilds": 0, "moves": int(moves)}
    _record(sim, rec, (start, end, planned, offsets, nodes, counts, points, n_points),
            wall0, loop_seconds, stats, None, order)
    return rec


def _power_args(rec: Recorder, run: SlotRun) -> tuple[
        tuple[bool, float, float, float], npt.NDArray[np.float64], npt.NDArray[np.float64],
        npt.NDArray[np.float64]]:
    """The loops' power inputs — ``(power, cap, used, unit W)``, node W per slots in use,
    node W down, job W — and the recorder's power mode (dummies without a cap)."""
    pw = run.power
    if pw is None:
        return (False, 0.0, 0.0, 0.0), np.zeros((1, 1)), np.zeros(1), np.zeros(1)
    rec.power_mode = {"node_mode": pw.node_mode, "idle_counted": pw.idle_counted}
    return ((True, pw.cap, pw.used, pw.unit_w), np.ascontiguousarray(pw.node_w, np.float64),
            np.ascontiguousarray(pw.down_w, np.float64),
            np.ascontiguousarray(pw.job_w, np.float64))


def _score_args(run: SlotRun) -> tuple[int, npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """A dynamic ordering's code and per-job terms (:mod:`.dynamic_order`; empty for a
    static ordering)."""
    if run.score_terms is None:
        return 0, np.zeros(0), np.zeros(0)
    return run.score, run.score_terms[0], run.score_terms[1]


def _cap_rows(run: SlotRun) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """The cap's changes (times, W); empty for a fixed cap or none."""
    if run.cap_rows is None:
        return np.zeros(0, np.int64), np.zeros(0, np.float64)
    return run.cap_rows


def _power_samples(rec: Recorder, run: SlotRun, at: npt.NDArray[np.int64],
                   watts: npt.NDArray[np.float64], caps: npt.NDArray[np.float64]) -> None:
    """(time, W in use, cap) per decision point, as the engine samples (power runs)."""
    if run.power is None:
        return
    samples = np.empty((len(at), 3))
    samples[:, 0] = at
    samples[:, 1] = watts
    samples[:, 2] = caps
    rec.power_samples = array("d", samples.tobytes())


def _prepare(sim: Simulator, run: SlotRun) -> tuple[Recorder, npt.NDArray[np.bool_]]:
    """A fresh recorder and the jobs to skip (rejected as the engine would)."""
    wl = sim.workload
    rec = Recorder(wl, sim.platform, sim.req)
    rec.walltime_kill = sim.walltime_kill
    rec.engine_info = sim.engine_info()
    skip = np.zeros(wl.n_jobs, dtype=np.bool_)
    rejected: set[int] = set()
    if int(wl.units.max()) > int(run.slots.sum()):  # the engine's errors and reasons
        rejected = sim._check_feasible(rec)
    rejected |= sim.reject_over_cap(rec, rejected)  # over a fixed power cap
    skip[list(rejected)] = True
    return rec, skip


def _check(sim: Simulator, status: int, bad_job: int, run: SlotRun | None = None) -> None:
    """The general engine's error for a run that got stuck."""
    wl = sim.workload
    if status == STUCK:
        hint = ""
        pw = run.power if run is not None else None
        if pw is not None:  # the machine is idle then: it draws its idle power
            cap = pw.cap  # a varying cap: stuck means every change has passed, the last holds
            if run is not None and run.cap_rows is not None and len(run.cap_rows[1]):
                cap = float(run.cap_rows[1][-1])
            hint = (f"; the power cap of {cap:.6g} W leaves {cap - pw.used:.6g} W over "
                    f"what the machine draws now ({pw.used:.6g} W"
                    + (", idle nodes included), maybe too little for these jobs: raise the "
                       "cap, switch idle nodes off, or do not count idle power"
                       if pw.idle_counted else "), maybe too little for these jobs: raise "
                       "the cap"))
        raise DispatchlabError(
            f"dispatcher '{sim.dispatcher.name}' left job(s) queued on an idle machine with "
            f"no pending event (first job id: {int(wl.job_id[bad_job])}){hint}")
    if status != 0:  # pragma: no cover - the slot invariant rules this out
        raise DispatchlabError(f"compiled loop: slot accounting broke at job "
                               f"{int(wl.job_id[bad_job])}")


def _record(sim: Simulator, rec: Recorder, out: tuple[Any, ...], wall0: float,
            loop_seconds: float, stats: dict[str, Any], run: SlotRun | None,
            order: npt.NDArray[np.int64]) -> None:
    """Store the loop's outcome in ``rec`` exactly as the general engine would: segments in
    the order the jobs started (``order``; the loop's placements are in job order), the
    slot power table's job power (if any), the free totals from the busy slots in
    ``points``."""
    start, end, planned, offsets, nodes, counts, points, n_points = out
    wl = sim.workload
    started = order
    sizes = np.diff(offsets)[started]
    before = np.cumsum(sizes) - sizes  # each job's nodes and counts, in that order
    flat = np.repeat(offsets[started] - before, sizes) + np.arange(int(sizes.sum()))
    nodes, counts = nodes[flat], counts[flat]
    killed = (wl.runtime[started] > wl.walltime[started]) & sim.walltime_kill
    rec.segments = Segments(
        job=started.astype(np.int64), t0=start[started], t1=end[started],
        outcome=np.where(killed, KILLED, COMPLETED).astype(np.int8),
        lost=np.zeros(len(started), np.int64), offsets=with_zero(np.cumsum(sizes)),
        nodes=nodes, counts=counts,
        power=None if run is None or run.power is None else run.power.job_w[started])
    rec.planned = planned
    pts = points[:n_points]
    rec.decision_at = array("q", pts[:, 0].tobytes())
    rec.decision_cpu = array("d", [loop_seconds / max(n_points, 1)]) * n_points
    total = sim.platform.total[None, :]
    free_total = total - pts[:, 3:4] * sim.req[0][None, :]
    rec.samples = array("q", np.ascontiguousarray(
        np.hstack((pts[:, :3], free_total, np.repeat(total, n_points, axis=0))),
        dtype=np.int64).tobytes())
    sim.note_power_shed(rec)
    rec.finish(time.perf_counter() - wall0, stats)
    if sim.progress is not None:
        sim.progress(sim.workload.n_jobs, sim.workload.n_jobs)


def _durations(sim: Simulator) -> npt.NDArray[np.int64]:
    """How long each job runs once started: to its wall-time at most, unless not killed."""
    wl = sim.workload
    return np.minimum(wl.runtime, wl.walltime) if sim.walltime_kill else wl.runtime


def _own(a: npt.NDArray[Any]) -> npt.NDArray[np.int64]:
    """A writable C-contiguous int64 copy: one array type, so one compiled signature."""
    return np.array(a, dtype=np.int64, order="C")
