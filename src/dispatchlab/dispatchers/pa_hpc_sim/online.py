"""What PA-HPC-SIM's schedulers share: when its online dispatcher calls them, the job
collections whose order they see, the node order and the placement of units.

Read from the peer's code (``OnlineDispatcher.hpp``, ``OptimizerImpl.hpp``,
``Rankers.hpp``); each rule kept here:

- **When it dispatches.** At the first arrival; at an event where a job ended; at an
  arrival when the arriving job passes ``check_res_avail`` (its total request fits the
  pooled free capacity and each of its unit's resources fits the free capacity of some
  node, resource by resource). Nothing else triggers it: a cap change or a periodic power
  measurement is no dispatching point. It then dispatches only if some waiting job's total
  request fits the pooled free capacity (``is_schedule_needed``).
- **Collections.** A job joins the *added* collection on arrival (jobs of one instant by
  index); every collection change moves a job by swapping the collection's last job into
  its place; when a schedule is computed the added, then modified, then removed jobs are
  committed (added and modified ones appended to the *stable* collection in order, removed
  ones dropped). A started job is *modified* until the next commit; an ended job is
  *removed*. The schedulers see the waiting jobs in the stable collection's order.
- **Start order.** The jobs started at one instant are handed out in the stable
  collection's order: their moves to the modified collection follow it.
- **Nodes.** Each unit goes to the first node, in the resource ranker's order, where it
  fits; that ranker scores every node 1, so the order is ``std::sort``'s permutation of the
  node list under an always-false comparison (48, 33, …, 47, 32, 49, … on 64 nodes). The
  decision lists the nodes in increasing order (the engine's rule); the choice is the
  peer's.
- **Power.** A job may start iff the power in use plus what it adds is at most the cap.
  The peer adds its predicted power and counts no idle power; here what it adds is the
  engine's figure (:meth:`SystemView.power_of`), which is the peer's under
  ``--job-power pa-hpc-sim --no-idle-power``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dispatchlab.arrays import IntArray
from dispatchlab.dispatchers.base import BaseDispatcher
from dispatchlab.dispatchers.pa_hpc_sim.cxx_sort import cxx_sort
from dispatchlab.engine.budget import fits_cap
from dispatchlab.engine.capabilities import Capabilities
from dispatchlab.engine.decisions import Decision, Start
from dispatchlab.engine.events import Events
from dispatchlab.engine.state import SystemView


class _Collection:
    """A vector of jobs whose removal swaps the last job into the hole (the peer's)."""

    def __init__(self) -> None:
        self.items: list[int] = []

    def push(self, job: int) -> None:
        self.items.append(job)

    def remove(self, job: int) -> None:
        items = self.items
        k = items.index(job)
        items[k] = items[-1]
        items.pop()


class Planned:
    """The starts of one call and the free capacity and power they leave."""

    def __init__(self, view: SystemView) -> None:
        self.view = view
        self.free: IntArray = view.free.copy()
        budget = view.budget
        self.cap = float("inf") if budget is None else float(budget.cap)
        self.power = 0.0 if budget is None else float(budget.used)
        self.starts: list[Start] = []
        self.added: dict[int, float] = {}

    def try_start(self, job: int, nodes_order: Sequence[int]) -> bool:
        """Start ``job`` now if its units fit (peer's placement) and its power fits."""
        view = self.view
        placed = place(self.free, view.req[job], int(view.jobs.units[job]), nodes_order)
        if placed is None:
            return False
        nodes, counts = placed
        watts = view.power_of(job, nodes, counts, self.free) if view.budget else 0.0
        if not fits_cap(self.power, watts, self.cap):
            return False
        self.free[nodes] -= counts[:, None] * view.req[job]
        self.power += watts
        self.added[job] = watts
        self.starts.append(Start(job, nodes, counts))
        return True


def place(free: IntArray, req: IntArray, units: int, order: Sequence[int]
          ) -> tuple[IntArray, IntArray] | None:
    """Each unit on the first node (in ``order``) with room for it; nodes increasing."""
    room = free.copy()
    counts: dict[int, int] = {}
    for _ in range(units):
        for k in order:
            if (room[k] >= req).all():
                room[k] -= req
                counts[k] = counts.get(k, 0) + 1
                break
        else:
            return None
    nodes = sorted(counts)
    return (np.array(nodes, dtype=np.int64),
            np.array([counts[k] for k in nodes], dtype=np.int64))


class PaOnline(BaseDispatcher):
    """The peer's online dispatcher around one of its schedulers (:meth:`schedule`)."""

    name = "pa-online"
    #: the peer ranks every node of the machine once: nodes that leave are not modelled
    capabilities = Capabilities(family="pa-hpc-sim", nodes_leaving=False)

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """Empty collections; the node order of the peer's resource ranker."""
        self.rng = rng
        self._stable, self._added = _Collection(), _Collection()
        self._modified = _Collection()
        self._removed: list[int] = []
        self._where: dict[int, str] = {}
        self._started: set[int] = set()
        self._first = True
        nodes = list(range(view.platform.n_nodes))
        cxx_sort(nodes, lambda a, b: False)
        self._nodes = nodes

    def schedule(self, view: SystemView, waiting: list[int]) -> list[Start]:
        """The starts now, for the waiting jobs in stable-collection order."""
        raise NotImplementedError

    def decide(self, view: SystemView, events: Events) -> Sequence[Decision]:
        """Update the collections; dispatch when the peer would."""
        for j in events.finished:
            self._started.discard(j)
            self._move(j, "removed")
        for j in sorted(events.submitted):
            self._added.push(j)
            self._where[j] = "added"
        trigger = self._first or bool(events.finished) or any(
            self._res_avail(view, j) for j in events.submitted)
        self._first = False
        if not trigger or not self._needed(view):
            return []
        self._commit()
        waiting = [j for j in self._stable.items if j not in self._started]
        out = self.schedule(view, waiting)
        rank = {j: k for k, j in enumerate(self._stable.items)}
        out.sort(key=lambda d: rank[d.job])
        for d in out:
            self._started.add(d.job)
            self._move(d.job, "modified")
        return out

    def _move(self, job: int, to: str) -> None:
        where = self._where.get(job)
        if where == "stable":
            self._stable.remove(job)
        elif where == "modified":
            self._modified.remove(job)
        elif where == "added":
            self._added.remove(job)
        if to == "modified":
            self._modified.push(job)
        elif to == "removed":
            self._removed.append(job)
        self._where[job] = to

    def _commit(self) -> None:
        for clc in (self._added, self._modified):
            for j in clc.items:
                self._stable.push(j)
                self._where[j] = "stable"
            clc.items = []
        for j in self._removed:
            self._where.pop(j, None)
        self._removed = []

    @staticmethod
    def _res_avail(view: SystemView, job: int) -> bool:
        """The peer's ``check_res_avail``: pooled totals, then each resource of a unit on
        some node (resource by resource)."""
        req = view.req[job]
        total = req * int(view.jobs.units[job])
        if (total > np.asarray(view.free_total)).any():
            return False
        return bool((view.free >= req).any(axis=0).all())

    @staticmethod
    def _needed(view: SystemView) -> bool:
        """The peer's ``is_schedule_needed``: some waiting job fits the pooled totals."""
        pooled = np.asarray(view.free_total)
        return any(bool((view.req[j] * int(view.jobs.units[j]) <= pooled).all())
                   for j in view.queue)
