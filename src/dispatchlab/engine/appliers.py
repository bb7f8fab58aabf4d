"""One validator-and-applier per decision type (the loop looks them up by type).

Each checks the decision against the state now and applies it, or raises
:class:`~dispatchlab.errors.InvalidDecision` naming the job, node and value at fault. The
engine never fixes a dispatcher's mistake.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from dispatchlab.arrays import IntArray
from dispatchlab.engine import kernels
from dispatchlab.engine.budget import EPS, fits_cap
from dispatchlab.engine.decisions import (
    Decision,
    Kill,
    Plan,
    PowerOff,
    PowerOn,
    Reconfigure,
    Requeue,
    Start,
    WakeAt,
)
from dispatchlab.engine.events import NODE, WAKE
from dispatchlab.engine.execution import (
    bank_work,
    begin_segment,
    refresh_power,
    set_node_state,
    stop_job,
    take_budget,
)
from dispatchlab.engine.kernels import OK
from dispatchlab.engine.recorder import CANCELLED, PREEMPTED, RECONFIGURED
from dispatchlab.errors import InvalidDecision
from dispatchlab.platform.node_states import BOOTING, OFF, ON, SHUTTING_DOWN, STATE_NAMES

if TYPE_CHECKING:
    from dispatchlab.engine.simulator import Simulator



def invalid(sim: Simulator, message: str) -> InvalidDecision:
    """An InvalidDecision prefixed with the dispatcher's name."""
    return InvalidDecision(f"{sim.dispatcher.name}: {message}")


def start(sim: Simulator, d: Start) -> None:
    """Start a queued job on free resources of usable nodes, within the power cap."""
    view = sim.view
    job = d.job
    queue = view.queue
    if job not in queue:
        raise invalid(sim, f"job {sim.jid(job)} cannot start: it is {_where(sim, job)}")
    nodes, counts = d.nodes, d.counts
    own = sim.units[job]
    units = own if sim.fresh[job] else _units_of(sim, job, counts, d)
    rules, meter = sim.rules, sim.meter
    if rules is not None and len(nodes):
        why = rules.violation(job, view.now, np.asarray(nodes))
        if why is not None:
            raise invalid(sim, f"job {sim.jid(job)} cannot start: {why}")
    if meter is not None:
        _check_power(sim, job, nodes, counts, 0.0)
    req = sim.req_one  # (inlined req_of: one call less per start)
    if kernels.check_and_take(view.free, nodes, counts, sim.req[job] if req is None else req,
                              units) != OK:
        raise explain(sim, job, nodes, counts, units)
    if units == own:
        ft = view.free_total
        for r, amount in view.demand_nz[job]:
            ft[r] -= amount
    else:
        _take_total(sim, job, units, -1)
    del queue[job]
    sim.held_units[job] = units
    if meter is not None:
        take_budget(sim, job, nodes, counts)
    begin_segment(sim, job, nodes, counts, True)


def wake_at(sim: Simulator, d: WakeAt) -> None:
    """A timer for the dispatcher."""
    if d.time <= sim.view.now:
        raise invalid(sim, f"wake-up at {d.time} is not after now ({sim.view.now})")
    sim.push(d.time, WAKE, -1)


def plan(sim: Simulator, d: Plan) -> None:
    """An intended start, recorded."""
    sim.rec.plan(d.job, d.time)


def power_off(sim: Simulator, d: PowerOff) -> None:
    """Idle powered-on nodes shut down (off after their shutdown delay)."""
    view = sim.view

    def idle(node: int) -> None:
        if (view.free[node] != view.capacity[node]).any():
            raise invalid(sim, f"cannot power off node {_node(sim, node)}: jobs run on it")

    _switch(sim, d.nodes, "power off", ON, sim.platform.shutdown_time, OFF, SHUTTING_DOWN,
            idle)


def power_on(sim: Simulator, d: PowerOn) -> None:
    """Nodes that are off boot (usable after their boot delay)."""
    _switch(sim, d.nodes, "power on", OFF, sim.platform.boot_time, ON, BOOTING, None)


def _switch(sim: Simulator, nodes: Sequence[int], what: str, before: int,
            delays: IntArray | None, after: int, during: int,
            check: Callable[[int], None] | None) -> None:
    """Switch ``nodes`` from state ``before`` to ``after``, through ``during`` for each
    node's delay (a transition event ends it); ``check``: a further condition per node."""
    view = sim.view
    for node in _nodes_of(sim, nodes, what):
        if view.node_state[node] != before:
            raise invalid(sim, f"cannot {what} node {_node(sim, node)}: it is "
                               f"{STATE_NAMES[view.node_state[node]]}")
        if check is not None:
            check(node)
        delay = int(delays[node])  # type: ignore[index]
        _check_transition(sim, node, after if delay == 0 else during, what)
        if delay == 0:
            set_node_state(sim, node, after)
        else:
            set_node_state(sim, node, during)
            sim.node_seq[node] = sim.push(view.now + delay, NODE, node)


def reconfigure(sim: Simulator, d: Reconfigure) -> None:
    """A running malleable job moves to another allocation; its end is recomputed."""
    view = sim.view
    job = d.job
    run = view.running.get(job)
    if run is None:
        raise invalid(sim, f"job {sim.jid(job)} cannot be reconfigured: it is "
                           f"{_where(sim, job)}")
    n_old = int(run.counts.sum())
    n_new = _units_of(sim, job, d.counts, d)
    req = sim.req[job]
    old_power = sim.job_power.get(job, 0.0)
    _check_power(sim, job, d.nodes, d.counts, old_power)
    kernels.release(view.free, run.nodes, run.counts, req)
    if kernels.check_and_take(view.free, d.nodes, d.counts, req, n_new) != OK:
        kernels.check_and_take(view.free, run.nodes, run.counts, req, n_old)
        raise explain(sim, job, d.nodes, d.counts, n_new, moving=(run.nodes, run.counts))
    for r in np.flatnonzero(req).tolist():
        view.free_total[r] += (n_old - n_new) * int(req[r])
    if view.budget is not None:
        view.budget.used -= sim.job_power.pop(job, 0.0)
        refresh_power(sim, run.nodes)
    view.running.pop(job)
    sim.end_seq[job] = -1
    bank_work(sim, job, run, RECONFIGURED)
    take_budget(sim, job, d.nodes, d.counts)
    pause = sim.work.reconfiguration_pause(job, n_old, n_new)
    sim.held_units[job] = n_new
    begin_segment(sim, job, d.nodes, d.counts, new_run=False, pause=pause)


def kill(sim: Simulator, d: Kill) -> None:
    """A running job is stopped for good."""
    if d.job not in sim.view.running:
        raise invalid(sim, f"job {sim.jid(d.job)} cannot be killed: it is "
                           f"{_where(sim, d.job)}")
    stop_job(sim, d.job, CANCELLED)
    sim.done += 1


def requeue(sim: Simulator, d: Requeue) -> None:
    """A running job goes back to the queue (its work kept only if asked)."""
    if d.job not in sim.view.running:
        raise invalid(sim, f"job {sim.jid(d.job)} cannot be requeued: it is "
                           f"{_where(sim, d.job)}")
    stop_job(sim, d.job, PREEMPTED, keep_progress=d.keep_progress)
    sim.view.queue[d.job] = None


def check_costart(sim: Simulator, decisions: Sequence[Decision]) -> None:
    """Every component of a heterogeneous job starts in the same decision."""
    rules, view, t = sim.rules, sim.view, sim.view.now
    assert rules is not None
    for d in decisions:
        if type(d) is Start and d.job in rules.group_of:
            comps = rules.components[rules.group_of[d.job]]
            missing = [c for c in comps if c not in view.running
                       or view.running[c].start != t]
            if missing:
                gid = int(sim.workload.hetjob[d.job])
                raise invalid(sim, f"heterogeneous job {gid}: component job {sim.jid(d.job)} "
                                   f"started at {t} without component job(s) "
                                   f"{[sim.jid(c) for c in missing]}: all components start "
                                   "together")


# ---- helpers -------------------------------------------------------------------------------

def _check_transition(sim: Simulator, node: int, state: int, what: str) -> None:
    """A node's new state must not raise the power over the cap."""
    budget, meter = sim.view.budget, sim.meter
    if budget is None or meter is None:
        return
    p = meter.state_delta(node, state)
    if p > EPS and not fits_cap(budget.used, p, budget.cap):
        raise invalid(sim, f"cannot {what} node {_node(sim, node)}: it would draw {p:.6g} W "
                           f"more: power cap {budget.cap:.6g} W, {budget.used:.6g} W in use")


def _where(sim: Simulator, job: int) -> str:
    if not isinstance(job, (int, np.integer)) or not 0 <= job < sim.workload.n_jobs:
        return "not a job of this workload"
    if job in sim.view.running:
        return "running"
    if job in sim.view.queue:
        return "queued"
    if job >= sim.nxt:
        return "not submitted yet"
    return "not queued (finished or rejected)"


def _node(sim: Simulator, node: int) -> str:
    return str(sim.platform.node_names[node])


def _nodes_of(sim: Simulator, nodes: Sequence[int], what: str) -> list[int]:
    out = [int(x) for x in nodes]
    n = sim.platform.n_nodes
    bad = [x for x in out if not 0 <= x < n]
    if bad or len(set(out)) != len(out):
        raise invalid(sim, f"{what}: nodes must be distinct indices in [0, {n}), got {out}")
    return out


def _units_of(sim: Simulator, job: int, counts: IntArray, d: Start | Reconfigure) -> int:
    """The units a placement must hold: the job's own, or any in a malleable job's range."""
    w = sim.work
    lo, hi = w.min_units[job], w.max_units[job]
    if lo == hi:
        return lo
    n = int(np.asarray(counts).sum())
    if not lo <= n <= hi:
        raise invalid(sim, f"malleable job {sim.jid(job)} runs on {lo}–{hi} units, decision "
                           f"places {n} (nodes {np.asarray(d.nodes).tolist()} counts "
                           f"{np.asarray(counts).tolist()})")
    return n


def _check_power(sim: Simulator, job: int, nodes: IntArray, counts: IntArray, freed: float
                 ) -> None:
    """The job's power must fit under the cap (``freed``: power it gives back first)."""
    budget, meter = sim.view.budget, sim.meter
    if budget is None or meter is None:
        return
    p = meter.start_delta(job, nodes, counts)
    if p > EPS and not fits_cap(budget.used - freed, p, budget.cap):
        raise invalid(sim, f"job {sim.jid(job)} needs {p:.6g} W: power cap {budget.cap:.6g} W, "
                           f"{budget.used - freed:.6g} W in use")


def _take_total(sim: Simulator, job: int, units: int, sign: int) -> None:
    ft = sim.view.free_total
    if units == sim.units[job]:
        for r, amount in sim.view.demand_nz[job]:
            ft[r] += sign * amount
        return
    req = sim.req[job]
    for r in np.flatnonzero(req).tolist():
        ft[r] += sign * units * int(req[r])


def explain(sim: Simulator, job: int, nodes_in: IntArray, counts_in: IntArray, units: int,
            moving: tuple[IntArray, IntArray] | None = None) -> InvalidDecision:
    """The precise reason a placement was refused (``moving``: the job's current one,
    given back for a reconfiguration)."""
    jid = sim.jid(job)
    nodes = np.asarray(nodes_in)
    counts = np.asarray(counts_in)
    where = f"nodes {nodes.tolist()} counts {counts.tolist()}"
    if len(nodes) == 0 or len(nodes) != len(counts):
        return invalid(sim, f"job {jid}: nodes and counts must be non-empty and of equal "
                            f"length ({where})")
    if int(counts.sum()) != units or counts.min() <= 0:
        return invalid(sim, f"job {jid} needs {units} units, decision places {where}")
    if nodes.min() < 0 or nodes.max() >= sim.platform.n_nodes:
        return invalid(sim, f"job {jid}: node index out of range ({where})")
    if len(nodes) > 1 and not (nodes[1:] > nodes[:-1]).all():
        return invalid(sim, f"job {jid}: nodes must be listed in strictly increasing order "
                            f"({where})")
    state = sim.view.node_state
    off = [int(x) for x in nodes if state[x] != ON]
    if off:
        return invalid(sim, f"job {jid}: node {_node(sim, off[0])} is "
                            f"{STATE_NAMES[state[off[0]]]}, not usable")
    free = sim.view.free.copy()
    if moving is not None:
        free[moving[0]] += moving[1][:, None] * sim.req[job]
    need = counts[:, None] * sim.req[job]
    after = free[nodes] - need
    k, r = np.argwhere(after < 0)[0]
    return invalid(sim, f"job {jid} needs {need[k, r]} {sim.platform.resources[r]} on node "
                        f"{_node(sim, int(nodes[k]))}, {free[nodes[k], r]} free")


#: The validator-and-applier of each decision type (the loop looks them up by type).
APPLIERS: dict[type, Callable[[Simulator, Any], None]] = {
    Start: start,
    WakeAt: wake_at,
    Plan: plan,
    PowerOff: power_off,
    PowerOn: power_on,
    Reconfigure: reconfigure,
    Kill: kill,
    Requeue: requeue,
}
