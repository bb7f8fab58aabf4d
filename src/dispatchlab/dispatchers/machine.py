"""Capacity as selection schemes see it: free now, expected releases, one EASY reservation.

Two implementations answer the same questions:

- :class:`SlotMachine` when every job's unit asks the same resource vector (SWF traces in
  pool or whole-node mode): node ``n`` then hosts ``k_n`` units whatever runs beside them,
  so a job fits iff ``units ≤ free slots``. Every check is integer arithmetic; nodes are
  chosen (by the allocator) only for jobs that start.
- :class:`NodeMachine` otherwise (GPUs, memory, mixed jobs): fits are checked on the
  nodes × resources matrix with numpy, a pooled-total test first.

Both keep the running jobs sorted by *expected* end (start + the estimator's duration at
start) — the true end lives in the engine's future and is never read.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from typing import Any

import numpy as np
import numpy.typing as npt

from dispatchlab.dispatchers.allocators import Allocator, Placement, fill_in_order
from dispatchlab.dispatchers.profile import NodeProfile, Profile, SlotProfile
from dispatchlab.dispatchers.workspace import Workspace
from dispatchlab.engine.decisions import Start
from dispatchlab.engine.events import Events
from dispatchlab.engine.state import SystemView
from dispatchlab.errors import DispatchlabError
from dispatchlab.estimates.base import DurationEstimator
from dispatchlab.platform.platform import units_fitting

IntArray = npt.NDArray[np.int64]


class Machine:
    """Shared bookkeeping: running jobs by expected end, start times, the call's workspace.

    Per call, :meth:`begin` updates the running set from the engine's events; a selection
    scheme then asks :meth:`fits` / :meth:`start` (and the EASY or profile helpers of the
    subclasses) in priority order.
    """

    def __init__(self, view: SystemView, allocator: Allocator, estimator: DurationEstimator):
        self.view = view
        self.alloc = allocator
        self.estimator = estimator
        self.units: list[int] = view.jobs.units.tolist()
        self.now = 0
        self.ends: list[tuple[int, int]] = []  # (expected end, job), sorted
        self.end_of: dict[int, int] = {}
        self._start_of: dict[int, int] = {}
        self._ws: Workspace | None = None

    # ---- per call -------------------------------------------------------------------

    def begin(self, view: SystemView, events: Events) -> None:
        """Forget finished jobs (telling the estimator their run time); fresh scratch state."""
        now = view.now
        for j in events.finished:
            e = self.end_of.pop(j)
            del self.ends[bisect_left(self.ends, (e, j))]
            self.estimator.observe(j, now - self._start_of.pop(j))
            self._finished(j)
        self.now = now
        self._ws = None

    def _finished(self, job: int) -> None:
        """Subclass hook: a running job ended."""

    def workspace(self) -> Workspace:
        """The scratch free matrix of this call (created on first use)."""
        if self._ws is None:
            self._ws = Workspace(self.view)
        return self._ws

    def _record(self, job: int, nodes: IntArray, counts: IntArray) -> Start:
        """Commit a start now: scratch capacity, expected end, the Start decision."""
        d = self.workspace().take(job, nodes, counts)
        e = self.now + self.estimator.estimate(job)
        insort(self.ends, (e, job))
        self.end_of[job] = e
        self._start_of[job] = self.now
        return d

    def overdue(self) -> list[int]:
        """Running jobs whose expected end is not after now (estimate too short)."""
        out = []
        for e, j in self.ends:
            if e > self.now:
                break
            out.append(j)
        return out

    def postpone(self, jobs: list[int], until: int) -> None:
        """Expect running ``jobs`` to end at ``until`` instead (they outlived the estimate)."""
        for j in jobs:
            e = self.end_of[j]
            del self.ends[bisect_left(self.ends, (e, j))]
            insort(self.ends, (until, j))
            self.end_of[j] = until

    # ---- interface of the subclasses -------------------------------------------------

    def any_free(self) -> bool:
        """False when no queued job can possibly start now (nothing free)."""
        raise NotImplementedError

    def fits(self, job: int) -> bool:
        """Whether ``job`` can start now; remembers the placement for :meth:`start`."""
        raise NotImplementedError

    def start(self, job: int) -> Start:
        """Start ``job`` now (after :meth:`fits` returned true for it)."""
        raise NotImplementedError

    def reserve(self, job: int) -> int:
        """EASY: the earliest time ``job`` fits given expected ends (the shadow time).

        Remembers what stays free at that time beside the job's reservation ("extra").
        """
        raise NotImplementedError

    def fits_beside(self, job: int) -> bool:
        """EASY: fits now using only capacity that is also extra at the shadow time."""
        raise NotImplementedError

    def start_beside(self, job: int) -> Start:
        """EASY: start ``job`` (after :meth:`fits_beside`), consuming extra capacity."""
        raise NotImplementedError

    def profile(self) -> Profile:
        """An empty resource-time profile of the whole machine."""
        raise NotImplementedError

    def held(self, job: int) -> Any:
        """What running ``job`` holds, in the profile's placement type."""
        raise NotImplementedError

    def start_reserved(self, job: int, placement: Any) -> Start:
        """Start ``job`` now on the placement its profile reservation holds."""
        raise NotImplementedError


class SlotMachine(Machine):
    """All units ask one resource vector: capacity is a count of unit slots."""

    def __init__(
        self,
        view: SystemView,
        allocator: Allocator,
        estimator: DurationEstimator,
        slots_per_node: IntArray,
    ):
        super().__init__(view, allocator, estimator)
        self.total = int(slots_per_node.sum())
        self.busy = 0
        self.free = self.total
        self.extra = 0
        self._req = view.req[0] if view.jobs.n_jobs else np.zeros(0, np.int64)

    def begin(self, view: SystemView, events: Events) -> None:
        """Release the slots of finished jobs."""
        super().begin(view, events)
        self.free = self.total - self.busy

    def _finished(self, job: int) -> None:
        self.busy -= self.units[job]

    def any_free(self) -> bool:
        """Some slot is free."""
        return self.free > 0

    def fits(self, job: int) -> bool:
        """Enough free slots."""
        return self.units[job] <= self.free

    def start(self, job: int) -> Start:
        """Choose nodes with the allocator (always succeeds when the slots are free)."""
        u = self.units[job]
        placed = self.alloc.place(self.workspace().free, self._req, u)
        if placed is None:  # pragma: no cover - guarded by the slot invariant
            raise DispatchlabError(f"slot accounting broke: job {job} does not fit")
        self.free -= u
        self.busy += u
        return self._record(job, *placed)

    def reserve(self, job: int) -> int:
        """Release expected ends in order until ``job`` fits; extra = free then − need."""
        need = self.units[job]
        avail = self.free
        units = self.units
        soon = self.now + 1
        shadow = -1
        for e, j in self.ends:
            t = e if e > soon else soon
            if shadow >= 0 and t > shadow:
                break
            avail += units[j]
            if shadow < 0 and avail >= need:
                shadow = t
        if shadow < 0:  # pragma: no cover - the feasibility check rules this out
            raise DispatchlabError(f"job {job} can never fit the machine")
        self.extra = avail - need
        return shadow

    def fits_beside(self, job: int) -> bool:
        """Fits now and within the extra slots."""
        u = self.units[job]
        return u <= self.free and u <= self.extra

    def start_beside(self, job: int) -> Start:
        """Start and consume extra slots."""
        self.extra -= self.units[job]
        return self.start(job)

    def profile(self) -> SlotProfile:
        """A slot-count profile."""
        return SlotProfile(self.total, self.units)

    def held(self, job: int) -> int:
        """Slots = units."""
        return self.units[job]

    def start_reserved(self, job: int, placement: Any) -> Start:
        """Slots are interchangeable: allocate now."""
        return self.start(job)


class NodeMachine(Machine):
    """General case: fits on the nodes × resources matrix."""

    def __init__(self, view: SystemView, allocator: Allocator, estimator: DurationEstimator):
        super().__init__(view, allocator, estimator)
        self._placed: tuple[int, IntArray, IntArray] | None = None
        self._held: dict[int, Placement] = {}
        self.extra: IntArray = np.zeros_like(view.capacity)
        top = view.capacity.max(axis=0).astype(np.float64)
        self._scale = 1.0 / np.where(top > 0, top, 1.0)

    def _finished(self, job: int) -> None:
        del self._held[job]

    def any_free(self) -> bool:
        """Some resource is free somewhere."""
        return any(self.workspace().free_total)

    def _try(self, job: int, free: IntArray) -> bool:
        placed = self.alloc.place(free, self.view.req[job], self.units[job])
        if placed is None:
            return False
        self._placed = (job, *placed)
        return True

    def fits(self, job: int) -> bool:
        """Pooled totals first, then the allocator on the node matrix."""
        ws = self.workspace()
        return ws.fits_total(job) and self._try(job, ws.free)

    def start(self, job: int) -> Start:
        """Start on the placement found by the last successful check."""
        placed = self._placed
        if placed is None or placed[0] != job:
            raise DispatchlabError(f"start of job {job} without a successful fit check")
        self._placed = None
        return self.start_reserved(job, (placed[1], placed[2]))

    def reserve(self, job: int) -> int:
        """Add expected releases to the free matrix until ``job`` fits there."""
        ws = self.workspace()
        req = self.view.req
        need_req, need_units = req[job], self.units[job]
        future = ws.free.copy()
        pooled = np.asarray(ws.free_total, dtype=np.int64)
        need_total = need_units * need_req
        soon = self.now + 1
        ends, i, n = self.ends, 0, len(self.ends)
        shadow = -1
        while i < n:
            t = max(ends[i][0], soon)
            while i < n and max(ends[i][0], soon) == t:
                j = ends[i][1]
                nodes, counts = self._held[j]
                used = counts[:, None] * req[j]
                future[nodes] += used
                pooled += used.sum(axis=0)
                i += 1
            if (pooled >= need_total).all() and (
                int(units_fitting(future, need_req).sum()) >= need_units
            ):
                shadow = t
                break
        if shadow < 0:  # pragma: no cover - the feasibility check rules this out
            raise DispatchlabError(f"job {job} can never fit the machine")
        # Reserve on the nodes busiest now, leaving what is free now for backfilling.
        fit = units_fitting(future, need_req)
        cand = np.flatnonzero(fit)
        busy = np.asarray(ws.free[cand] @ self._scale)
        ranked = cand[np.argsort(busy, kind="stable")]
        nodes, counts = fill_in_order(ranked, fit[ranked], need_units)
        future[nodes] -= counts[:, None] * need_req
        self.extra = future
        return shadow

    def fits_beside(self, job: int) -> bool:
        """Place within ``min(free now, extra at the shadow time)`` per node."""
        ws = self.workspace()
        if not ws.fits_total(job):
            return False
        return self._try(job, np.minimum(ws.free, self.extra))

    def start_beside(self, job: int) -> Start:
        """Start and consume extra capacity on the chosen nodes."""
        placed = self._placed
        if placed is not None and placed[0] == job:
            self.extra[placed[1]] -= placed[2][:, None] * self.view.req[job]
        return self.start(job)

    def profile(self) -> NodeProfile:
        """A nodes × resources profile using this machine's allocator for reservations."""
        return NodeProfile(self.view.capacity, self.view.req, self.units, self.alloc)

    def held(self, job: int) -> Placement:
        """Nodes and unit counts of a running job."""
        return self._held[job]

    def start_reserved(self, job: int, placement: Any) -> Start:
        """Start on exactly the reserved (nodes, counts)."""
        nodes, counts = placement
        self._held[job] = (nodes, counts)
        return self._record(job, nodes, counts)


def make_machine(view: SystemView, allocator: Allocator, estimator: DurationEstimator) -> Machine:
    """A :class:`SlotMachine` when all units ask the same vector, else a NodeMachine;
    a :class:`~dispatchlab.dispatchers.ruled_machine.RuledMachine` when operator rules apply."""
    if view.rules is not None:
        from dispatchlab.dispatchers.ruled_machine import RuledMachine

        return RuledMachine(view, allocator, estimator)
    req = view.req
    if len(req) and (req == req[0]).all():
        return SlotMachine(view, allocator, estimator, units_fitting(view.capacity, req[0]))
    return NodeMachine(view, allocator, estimator)
