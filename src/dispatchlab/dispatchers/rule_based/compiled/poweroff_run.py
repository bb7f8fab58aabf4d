"""Run the compiled loop of ``<policy>+poweroff`` (:mod:`.poweroff_loop`) and record its
outcome as the general engine would: the wrapper's compiled plan's ``run``."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import numpy.typing as npt

from dispatchlab.dispatchers.rule_based.compiled.kernel import poweroff_loop_kernel
from dispatchlab.dispatchers.rule_based.compiled.poweroff_loop import FALLBACK
from dispatchlab.dispatchers.rule_based.compiled.runner import (
    _cap_rows,
    _no_rows,
    _own,
    _power_args,
    _prepare,
    _score_args,
    record_changing,
)
from dispatchlab.engine.budget import JobColumnPower
from dispatchlab.engine.compiled.eligibility import INFO_KINDS, SlotRun
from dispatchlab.engine.power_meter import MachinePower
from dispatchlab.engine.recorder import Recorder
from dispatchlab.engine.simulator import Simulator
from dispatchlab.engine.state import SystemView
from dispatchlab.platform.node_states import BOOTING, OFF, SHUTTING_DOWN


def refused(sim: Simulator, run: SlotRun) -> str | None:
    """Why the power-off loop cannot take ``run`` (``None``: it can)."""
    if run.conservative:
        return "+poweroff: the compiled loop takes strict and EASY selection only"
    if sim.scenario is not None and sim.scenario.kinds() & INFO_KINDS:
        return "+poweroff with informational scenario rows runs in the general loop"
    return None


def run_poweroff(sim: Simulator, run: SlotRun) -> Recorder | str:
    """Simulate ``sim`` (a policy wrapped in ``+poweroff``: with or without a power cap,
    fixed or varying, and nodes leaving and coming back) in the compiled loop; a string
    says why the general loop must run it (a stuck queue, or a switch the engine refuses:
    the general loop raises its error)."""
    why = refused(sim, run)
    if why is not None:
        return why
    wl, plat = sim.workload, sim.platform
    rows = run.scenario if run.scenario is not None else _no_rows()
    rec, skip = _prepare(sim, run)
    kernel = poweroff_loop_kernel()  # loaded before the clock starts, like the general engine
    if sim.progress is not None:
        sim.progress(0, wl.n_jobs)
    boot, down = _own(plat.boot_time), _own(plat.shutdown_time)  # type: ignore[arg-type]
    nodes = np.arange(plat.n_nodes)
    boot_order = _own(nodes[np.lexsort((nodes, boot))])
    power, node_w, down_w, job_w = _power_args(rec, run)
    wall0 = time.perf_counter()
    out = kernel(
        _own(wl.submit), _own(wl.runtime), _own(wl.walltime), sim.walltime_kill,
        _own(wl.units), _own(run.estimate), _own(run.rank), skip, _own(run.slots), run.easy,
        run.depth, run.easy_power, np.ascontiguousarray(plat.capacity, np.int64),
        _own(sim.req[0]), boot, down, boot_order, run.power_off,
        rows.time, rows.kind, rows.value, rows.offsets, rows.nodes,
        sim.on_abort == "requeue", _own(wl.checkpoint), power[0], power[1], power[2], node_w,
        down_w, job_w, power[3], _state_power(sim, run), *_cap_rows(run), *_score_args(run))
    loop_seconds = time.perf_counter() - wall0
    if out[0] == FALLBACK:
        return "the queue is stuck (the general loop reports it)"
    stats: dict[str, Any] = {"backfilled": int(out[17])} if run.easy else {}
    stats |= {"power_offs": int(out[21]), "power_ons": int(out[22])}
    return record_changing(sim, rec, run, out, wall0, loop_seconds, stats)


def _state_power(sim: Simulator, run: SlotRun) -> npt.NDArray[np.float64]:
    """What each node draws in each state (columns by state; the ``on`` column unused)
    under a cap, as the engine's meter reads it; zeros without one."""
    plat = sim.platform
    out = np.zeros((plat.n_nodes, 4), np.float64)
    if run.power is None:
        return out
    jobs = sim.power_model
    if jobs is None and plat.power_table is None:
        jobs = JobColumnPower(sim.workload)  # the engine's default
    meter = MachinePower(SystemView(sim.workload, plat, sim.req), sim.req, plat.power_table,
                         jobs, sim.count_idle)
    none = np.zeros(len(plat.resources), np.int64)
    for nd in range(plat.n_nodes):
        for state in (OFF, BOOTING, SHUTTING_DOWN):
            out[nd, state] = meter._w(nd, state, none)
    return out
