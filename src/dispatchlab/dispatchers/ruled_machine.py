"""The machine view of rule-based dispatchers when operator rules apply.

:class:`RuledMachine` is a :class:`~dispatchlab.dispatchers.machine.NodeMachine` that
honours ``view.rules`` (:class:`~dispatchlab.engine.constraints.Constraints`):

- a job is placed only on the nodes it may use now (its queue's nodes, minus nodes whose
  reservation its wall-time would run into; its reservation's nodes for a reservation job);
- a heterogeneous job is placed as a whole — every component on the nodes left by the
  previous ones — and started as a whole: :meth:`start` returns the first component's
  decision and queues the others in :attr:`companions`, which the policy appends;
- EASY's shadow time is the earliest time the head is eligible (window open, queue not
  stopped) *and* fits on the nodes it may use then, over expected ends and rule changes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from dispatchlab.dispatchers.allocators import Allocator
from dispatchlab.dispatchers.machine import NodeMachine
from dispatchlab.dispatchers.ruled_profile import GroupPlacement, RuledNodeProfile, place_all
from dispatchlab.engine.constraints import Constraints
from dispatchlab.engine.decisions import Start
from dispatchlab.engine.state import SystemView
from dispatchlab.errors import DispatchlabError
from dispatchlab.estimates.base import DurationEstimator

IntArray = npt.NDArray[np.int64]

_FAR = 1 << 62
_MAX_STEPS = 100_000


class RuledMachine(NodeMachine):
    """Node-wise fits restricted by queue rules, reservations and heterogeneous jobs."""

    def __init__(self, view: SystemView, allocator: Allocator, estimator: DurationEstimator):
        super().__init__(view, allocator, estimator)
        if view.rules is None:
            raise DispatchlabError("RuledMachine needs view.rules")
        self.rules: Constraints = view.rules
        self.companions: list[Start] = []
        self._group: GroupPlacement | None = None
        self._group_held: dict[int, GroupPlacement] = {}

    def take_companions(self) -> list[Start]:
        """The other components' starts decided in this call (then forgotten)."""
        out, self.companions = self.companions, []
        return out

    def _masked(self, free: IntArray, job: int, t: int) -> IntArray:
        mask = self.rules.allowed_nodes(job, t)
        if mask is None:
            return free
        return np.where(mask[:, None], free, 0)

    def _place(self, job: int, free: IntArray) -> bool:
        placed = place_all(self.rules, self.alloc, self.view.req, self.units, job, free)
        if placed is None:
            return False
        self._group = placed
        return True

    def fits(self, job: int) -> bool:
        """Eligible now and placeable on the nodes the job may use now."""
        ws = self.workspace()
        if job not in self.rules.components and not ws.fits_total(job):
            return False
        if not self.rules.eligible(job, self.now):
            return False
        return self._place(job, self._masked(ws.free, job, self.now))

    def start(self, job: int) -> Start:
        """Start every component on the placement found by the last successful check."""
        placed = self._group
        if placed is None or placed[0][0] != job:
            raise DispatchlabError(f"start of job {job} without a successful fit check")
        self._group = None
        return self.start_reserved(job, placed)

    def start_reserved(self, job: int, placement: Any) -> Start:
        """Start ``job`` (all components of a heterogeneous job) on ``placement``."""
        if isinstance(placement, list):
            first: Start | None = None
            for comp, nodes, counts in placement:
                d = super().start_reserved(comp, (nodes, counts))
                if comp == job:
                    first = d
                else:
                    self.companions.append(d)
            if first is None:  # pragma: no cover - placements always hold their leader
                raise DispatchlabError(f"placement of job {job} lacks the job itself")
            if len(placement) > 1:
                self._group_held[job] = placement
            return first
        return super().start_reserved(job, placement)

    def _finished(self, job: int) -> None:
        self._held.pop(job, None)
        self._group_held.pop(job, None)

    def held(self, job: int) -> Any:
        """A running job's placement (a component list for a heterogeneous job)."""
        return self._group_held.get(job, self._held[job])

    def fits_beside(self, job: int) -> bool:
        """EASY backfilling: eligible, and placeable within min(free now, extra)."""
        ws = self.workspace()
        if not self.rules.eligible(job, self.now):
            return False
        free = np.minimum(ws.free, self.extra)
        return self._place(job, self._masked(free, job, self.now))

    def start_beside(self, job: int) -> Start:
        """Start and consume extra capacity on the chosen nodes."""
        placed = self._group
        if placed is not None and placed[0][0] == job:
            for comp, nodes, counts in placed:
                self.extra[nodes] -= counts[:, None] * self.view.req[comp]
        return self.start(job)

    def reserve(self, job: int) -> int:
        """Earliest time the job is eligible and fits, releasing expected ends in order."""
        ws = self.workspace()
        rules, req = self.rules, self.view.req
        future = ws.free.copy()
        ends, i, n = self.ends, 0, len(self.ends)
        t = self.now + 1
        for _ in range(_MAX_STEPS):
            while i < n and max(ends[i][0], self.now + 1) <= t:
                j = ends[i][1]
                nodes, counts = self._held[j]
                future[nodes] += counts[:, None] * req[j]
                i += 1
            if rules.eligible(job, t):
                placed = place_all(rules, self.alloc, req, self.units, job,
                                   self._masked(future, job, t))
                if placed is not None:
                    for comp, nodes, counts in placed:
                        future[nodes] -= counts[:, None] * req[comp]
                    self.extra = future
                    return t
            # capacity grows at expected ends; eligibility and node sets change only when
            # a rule changes (window opening, stop end, reservation boundary)
            nxt = min(ends[i][0] if i < n else _FAR, rules.next_change(t))
            if nxt >= _FAR:
                break
            t = max(nxt, t + 1)
        raise DispatchlabError(f"job {int(self.view.jobs.job_id[job])} can never start under "
                               "the configured queue rules and reservations")

    def profile(self) -> RuledNodeProfile:
        """A node profile whose earliest fits honour the rules."""
        return RuledNodeProfile(self.view.capacity, self.view.req, self.units, self.alloc,
                                self.rules)

