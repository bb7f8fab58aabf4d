"""One handler per kind of timed engine event (the loop looks them up by kind).

Each takes the simulator, the event's payload (a job, a node, a scenario row) and its heap
sequence number, and records what happened in ``sim.events``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from dispatchlab.engine.budget import EPS
from dispatchlab.engine.events import RULE
from dispatchlab.engine.execution import (
    abort_job,
    bring_node_in,
    node_leaves,
    release_job,
    take_node_out,
)
from dispatchlab.engine.recorder import COMPLETED, KILLED
from dispatchlab.engine.scenario import Change
from dispatchlab.errors import DispatchlabError, InvalidDecision
from dispatchlab.platform.node_states import BOOTING, DOWN, OFF, SHUTTING_DOWN

if TYPE_CHECKING:
    from dispatchlab.engine.simulator import Simulator


def segment_end(sim: Simulator, job: int, seq: int) -> None:
    """A job's segment reaches its end: completed, or killed at its wall-time."""
    if sim.end_seq[job] != seq:
        return  # stale: the job was reconfigured, aborted or stopped since
    killed = sim.end_killed[job]
    release_job(sim, job)  # a segment that ends whole loses nothing: no work to bank
    sim.rec.close(job, sim.view.now, KILLED if killed else COMPLETED)
    ev = sim.events
    ev.finished.append(job)
    if killed:
        ev.killed.append(job)
    sim.done += 1


def node_transition(sim: Simulator, node: int, seq: int) -> None:
    """A node finished booting (it is usable now) or shutting down (it is off now)."""
    if sim.node_seq[node] != seq:
        return  # the node left the machine meanwhile
    sim.node_seq[node] = -1
    state = sim.view.node_state[node]
    if state == BOOTING:
        bring_node_in(sim, node)
    elif state == SHUTTING_DOWN:
        take_node_out(sim, node, OFF)


def scenario_change(sim: Simulator, k: int, seq: int) -> None:
    """Apply row ``k`` of the scenario."""
    assert sim.scenario is not None
    c = sim.scenario.changes[k]
    key = c.what if not c.target or c.what in ("node_down", "node_up") else \
        f"{c.what}:{c.target}"
    _CHANGES[c.what](sim, c)
    if c.what not in ("node_down", "node_up"):
        sim.view.env[key] = c.value
    sim.events.scenario.append(key)


def rule_change(sim: Simulator, payload: int, seq: int) -> None:
    """An operator rule changes now: wake the dispatcher, withdraw hopeless jobs."""
    rules = sim.rules
    assert rules is not None
    t = sim.view.now
    sim.events.woken = True
    sim.push(rules.next_change(t), RULE, -1)
    if rules.reservations:
        view = sim.view
        for job in [j for j in view.queue if rules.job_res[j] >= 0]:
            why = rules.hopeless(job, t)
            if why is not None:
                del view.queue[job]
                sim.rec.reject(job, why)
                sim.events.withdrawn.append(job)


def wake(sim: Simulator, payload: int, seq: int) -> None:
    """A timer the dispatcher asked for."""
    sim.events.woken = True


# ---- scenario kinds ------------------------------------------------------------------------

def _targets(sim: Simulator, c: Change) -> list[int]:
    return sim.platform.node_set([c.target], "target").tolist()


def _node_down(sim: Simulator, c: Change) -> None:
    for node in _targets(sim, c):
        node_leaves(sim, node)


def _node_up(sim: Simulator, c: Change) -> None:
    for node in _targets(sim, c):
        if sim.view.node_state[node] == DOWN:
            bring_node_in(sim, node)


def _alive_nodes(sim: Simulator, c: Change) -> None:
    state = sim.view.node_state
    present = np.flatnonzero(state != DOWN)
    want = int(c.value)
    if want > len(state):
        raise DispatchlabError(f"scenario: alive_nodes {want} at {c.time} exceeds the "
                               f"platform's {len(state)} nodes")
    if want < len(present):
        for node in choose_nodes(sim, present, len(present) - want, leaving=True):
            node_leaves(sim, node)
    elif want > len(present):
        down = np.flatnonzero(state == DOWN)
        for node in choose_nodes(sim, down, want - len(present), leaving=False):
            bring_node_in(sim, node)


def choose_nodes(sim: Simulator, candidates: np.ndarray, count: int, leaving: bool
                 ) -> list[int]:
    """Which ``count`` of ``candidates`` leave (or join): the dispatcher's choice when it
    has a ``choose_nodes(view, candidates, count, leaving)`` method, else the highest
    indices leave first and the lowest join first (risk order: index = risk rank)."""
    if not sim.caps.chooses_leaving_nodes:
        picked = candidates[-count:] if leaving else candidates[:count]
        return [int(x) for x in picked]
    chosen = [int(x) for x in sim.dispatcher.choose_nodes(  # type: ignore[attr-defined]
        sim.view, candidates, count, leaving)]
    allowed = set(candidates.tolist())
    if len(chosen) != count or len(set(chosen)) != count or not set(chosen) <= allowed:
        raise InvalidDecision(
            f"{sim.dispatcher.name}: choose_nodes must return {count} distinct node(s) among "
            f"{sorted(allowed)[:10]}{'…' if len(allowed) > 10 else ''}, got {chosen}")
    return chosen


def _power_cap(sim: Simulator, c: Change) -> None:
    budget = sim.view.budget
    assert budget is not None
    budget.cap = c.value
    if sim.on_over_cap != "wait" and budget.used > budget.cap + EPS:
        shed_youngest(sim, requeue=sim.on_over_cap == "requeue-youngest")


def shed_youngest(sim: Simulator, requeue: bool) -> None:
    """Stop the most recently started jobs (latest start, then highest index) until the
    power is under the cap (or nothing runs). They end ``aborted`` (seen by dispatchers in
    ``events.aborted``) and are re-queued (restarting from zero, or their last checkpoint)
    or failed."""
    view, budget = sim.view, sim.view.budget
    assert budget is not None
    order = sorted(view.running, key=lambda j: (view.running[j].start, j), reverse=True)
    for job in order:
        if budget.used <= budget.cap + EPS:
            break
        abort_job(sim, job, requeue)
        sim.power_shed += 1


def _informational(sim: Simulator, c: Change) -> None:
    """Temperature, desired utilization, energy prices, signals: ``view.env`` carries the
    value."""


_CHANGES: dict[str, Callable[[Simulator, Change], None]] = {
    "node_down": _node_down,
    "node_up": _node_up,
    "alive_nodes": _alive_nodes,
    "power_cap": _power_cap,
    "temperature": _informational,
    "desired_utilization": _informational,
    "energy_price": _informational,
    "signal": _informational,
}
