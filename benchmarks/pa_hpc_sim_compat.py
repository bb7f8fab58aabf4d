"""PA-HPC-SIM's list scheduler (``opt_type`` 0) as its online dispatcher drives it, as a
dispatchlab dispatcher, for the cross-check (``pa_hpc_sim_crosscheck.py``).

Read from the peer's code (``OnlineDispatcher.hpp``, ``ListScheduler.hpp``,
``OptimizerImpl.hpp``, ``Rankers.hpp``), each rule kept here:

- **When it dispatches.** At the first arrival; at an event where a job ended; at an
  arrival when the arriving job passes ``check_res_avail`` (its total request fits the
  pooled free capacity and each of its unit's resources fits the free capacity of some
  node, resource by resource). Nothing else triggers it: a cap change or a periodic power
  measurement is no dispatching point. It then dispatches only if some waiting job's total
  request fits the pooled free capacity (``is_schedule_needed``).
- **Job order.** The waiting jobs in the order of the problem's *stable* collection,
  sorted by wall-time with libstdc++'s ``std::sort`` (not stable: ties come out in the
  order that algorithm leaves them, :mod:`cxx_sort`), twice (``schedule`` sorts before its
  event loop and again at the current time). The collection is kept as the peer keeps it:
  a job joins the *added* collection on arrival (jobs of one instant by index), every
  collection change moves a job by swapping the collection's last job into its place, and
  when a schedule is computed the added, then modified, then removed jobs are committed
  (added and modified ones appended to the stable collection in order, removed ones
  dropped). A started job is *modified* (its start changed) until the next commit; an ended
  job is *removed*.
- **Start order.** The jobs started at one instant are handed out in the stable
  collection's order (not the ranked order): their moves to the modified collection and
  their end events (hence the order of equal end times) follow it.
- **Power.** A job may start iff the power of the running jobs plus its own predicted
  power is at most the cap (integers; no idle power).
- **Nodes.** Each unit goes to the first node, in the resource ranker's order, where it
  fits; that ranker scores every node 1, so the order is ``std::sort``'s permutation of
  the node list under an always-false comparison.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from cxx_sort import cxx_sort
from dispatchlab.dispatchers.base import BaseDispatcher
from dispatchlab.engine.decisions import Decision, Start
from dispatchlab.engine.events import Events
from dispatchlab.engine.state import SystemView

IntArray = npt.NDArray[np.int64]


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


class PaListScheduler(BaseDispatcher):
    """The peer's list scheduler and its dispatching triggers (module docstring)."""

    name = "pa-list-compat"

    def __init__(self, watts: npt.NDArray[np.float64]) -> None:
        self.watts = [int(w) for w in watts.tolist()]

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """Empty collections; the node order of the peer's resource ranker."""
        self.rng = rng
        self._stable, self._added = _Collection(), _Collection()
        self._modified: _Collection = _Collection()
        self._removed: list[int] = []
        self._where: dict[int, str] = {}
        self._running: set[int] = set()
        self._first = True
        nodes = list(range(view.platform.n_nodes))
        cxx_sort(nodes, lambda a, b: False)
        self._nodes = nodes

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
            del self._where[j]
        self._removed = []

    def decide(self, view: SystemView, events: Events) -> Sequence[Decision]:
        """Update the collections; dispatch when the peer would."""
        for j in events.finished:
            self._running.discard(j)
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
        waiting = [j for j in self._stable.items if j not in self._running]
        wall = view.jobs.walltime

        def shorter(a: int, b: int) -> bool:
            return bool(wall[a] < wall[b])

        cxx_sort(waiting, shorter)
        cxx_sort(waiting, shorter)
        assert view.budget is not None
        cap = view.budget.cap
        power = round(view.budget.used)
        free = view.free.copy()
        out: list[Decision] = []
        for j in waiting:
            if power + self.watts[j] > cap:
                continue
            placed = self._place(free, view.req[j], int(view.jobs.units[j]))
            if placed is None:
                continue
            nodes, counts = placed
            free[nodes] -= counts[:, None] * view.req[j]
            power += self.watts[j]
            out.append(Start(j, nodes, counts))
        # the peer hands the started jobs out in its stable collection's order (``nextJob``
        # walks them by start time, then collection order): their end events and their
        # moves to the modified collection follow that order
        rank = {j: k for k, j in enumerate(self._stable.items)}
        out.sort(key=lambda d: rank[d.job])  # type: ignore[attr-defined]
        for d in out:
            self._running.add(d.job)  # type: ignore[attr-defined]
            self._move(d.job, "modified")  # type: ignore[attr-defined]
        return out

    def _place(self, free: IntArray, req: IntArray, units: int
               ) -> tuple[IntArray, IntArray] | None:
        """Each unit on the first node (ranker order) with room for it."""
        room = free.copy()
        counts: dict[int, int] = {}
        for _ in range(units):
            for k in self._nodes:
                if (room[k] >= req).all():
                    room[k] -= req
                    counts[k] = counts.get(k, 0) + 1
                    break
            else:
                return None
        nodes = np.array(list(counts), dtype=np.int64)
        return nodes, np.array([counts[k] for k in counts], dtype=np.int64)

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

    def describe(self) -> dict[str, Any]:
        """Name only."""
        return {"name": self.name}
