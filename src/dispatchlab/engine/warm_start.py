"""Begin a simulation in the middle of a live system's life (the live twin's entry point).

A real machine is never empty when it is looked at: jobs run on known nodes since known
times, others wait, some nodes are down. :func:`warm_start` puts a fresh
:class:`~dispatchlab.engine.simulator.Simulator` in exactly that state at time ``now`` —
every job of the workload is known (submitted at its own time, all ≤ ``now``), the running
ones are placed through the ordinary start validator as if started at their real start
times (their requested ends follow), the down nodes are out — and then runs the first
decision point, every waiting job reported as submitted. After it the simulator goes on
as usual (``run()``), which is how shadow predictions simulate forward. The dispatcher is
reset once more on the warm state, so anything it keeps between calls starts from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dispatchlab.arrays import IntArray
from dispatchlab.engine import appliers
from dispatchlab.engine.decisions import Decision, Start
from dispatchlab.engine.events import Events
from dispatchlab.engine.execution import take_node_out
from dispatchlab.engine.simulator import Simulator
from dispatchlab.errors import DispatchlabError
from dispatchlab.platform.node_states import DOWN


@dataclass(frozen=True, slots=True)
class Placed:
    """A job already running: since ``start`` on ``nodes`` (increasing) × ``counts`` units."""

    job: int
    start: int
    nodes: IntArray
    counts: IntArray


def warm_start(sim: Simulator, now: int, placed: Sequence[Placed], down: Sequence[int] = ()
               ) -> Sequence[Decision]:
    """Start ``sim`` at ``now`` with ``placed`` jobs running and ``down`` nodes out (they
    must host no placed job); every other job of the workload waits. Runs the first
    decision point and returns the decisions applied."""
    wl = sim.workload
    late = np.flatnonzero(wl.submit > now)
    if len(late):
        j = int(late[0])
        raise DispatchlabError(f"job {int(wl.job_id[j])} is submitted at {int(wl.submit[j])}, "
                               f"after the warm start at {now}")
    sim._begin()
    view = sim.view
    sim.events = Events(now)
    n = wl.n_jobs
    sim.nxt = n
    view._advance(n)
    for p in sorted(placed, key=lambda p: p.start):
        if p.start > now:
            raise DispatchlabError(f"job {sim.jid(p.job)} started at {p.start}, after now "
                                   f"({now})")
        view.queue[p.job] = None
        view.now = p.start
        appliers.start(sim, Start(p.job, p.nodes, p.counts))
    view.now = now
    for node in down:
        if (view.free[node] != view.capacity[node]).any():
            raise DispatchlabError(f"node {sim.platform.node_names[node]} is down but hosts "
                                   "a running job")
        take_node_out(sim, node, DOWN)
    out = view.running.keys() | sim.rejected
    waiting = [j for j in range(n) if j not in out]
    view.queue.update(dict.fromkeys(waiting))
    sim.events.submitted.extend(waiting)
    # the dispatcher was reset on the empty machine: reset it again on the one it will
    # see, so state it keeps between calls (slot counts, profiles) starts from this one
    sim.dispatcher.reset(view, np.random.default_rng(sim.seed))
    return sim.decide()
