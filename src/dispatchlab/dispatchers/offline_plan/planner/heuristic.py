"""The job-based heuristic (thesis Alg. 5): jobs in a given order, each at its earliest
feasible start (≥ its submission) given the jobs already fixed.

Alg. 5 walks a job's start lower bound up one instant at a time until its units fit; here
the same earliest start is found on a time-indexed free-capacity grid
(:class:`FreeGrid`, resources × nodes × slots): for a window of candidate starts it
computes per slot and node how many units fit, takes the minimum over the job's duration
with a sliding-window minimum, and picks the first start where the nodes together hold
the job's units (compiled: :mod:`.earliest_kernel`). Units are placed first-fit in node
order (lowest nodes first). Past the last slot anything is placed on, the machine is
empty, so the search always ends.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dispatchlab.arrays import IntArray
from dispatchlab.dispatchers.offline_plan.planner.earliest_kernel import earliest_start
from dispatchlab.dispatchers.offline_plan.planner.instance import PlanInstance
from dispatchlab.dispatchers.offline_plan.planner.plan import Alloc, Plan


class FreeGrid:
    """Free capacity per slot, node and resource; slots past ``used_end`` are empty."""

    def __init__(self, capacity: IntArray, busy: Sequence[tuple[int, int, IntArray]] = (),
                 origin: int = 0, step: int = 60, length: int = 1024):
        self.capacity = np.asarray(capacity, dtype=np.int64)
        self.total = self.capacity.sum(axis=0)
        # resources × nodes × slots: time innermost, so window minima run on contiguous rows
        self.free = np.repeat(self.capacity.T[:, :, None], max(length, 1), axis=2)
        self.pool = np.repeat(self.total[:, None], max(length, 1), axis=1)  # resources × slots
        self.used_end = 0  # slots ≥ used_end are untouched (full capacity)
        for since, until, usage in busy:
            a, b = busy_slots(since, until, origin, step)
            if b > a:
                self.take(a, b - a, np.asarray(usage, dtype=np.int64))

    def ensure(self, length: int) -> None:
        """Grow the grid to at least ``length`` slots."""
        have = self.free.shape[2]
        if length > have:
            size = max(length, 2 * have)
            free = np.empty((*self.free.shape[:2], size), dtype=self.free.dtype)
            free[:, :, :have] = self.free
            free[:, :, have:] = self.capacity.T[:, :, None]
            pool = np.empty((self.pool.shape[0], size), dtype=self.pool.dtype)
            pool[:, :have] = self.pool
            pool[:, have:] = self.total[:, None]
            self.free, self.pool = free, pool

    def copy(self) -> FreeGrid:
        """An independent copy."""
        g = FreeGrid.__new__(FreeGrid)
        g.capacity, g.total = self.capacity, self.total
        g.free, g.pool, g.used_end = self.free.copy(), self.pool.copy(), self.used_end
        return g

    def take(self, start: int, slots: int, usage: IntArray) -> None:
        """Take ``usage`` (nodes × resources) over ``[start, start + slots)``."""
        self.ensure(start + slots)
        nodes = np.flatnonzero(usage.any(axis=1))
        if len(nodes) * 2 < len(usage):  # only the rows that change
            self.free[:, nodes, start:start + slots] -= usage[nodes].T[:, :, None]
        else:
            self.free[:, :, start:start + slots] -= usage.T[:, :, None]
        self.pool[:, start:start + slots] -= usage.sum(axis=0)[:, None]
        self.used_end = max(self.used_end, start + slots)

    def fits_per_node(self, lo: int, hi: int, req: IntArray) -> IntArray:
        """Units of ``req`` fitting per node and slot of ``[lo, hi)`` (nodes × slots)."""
        self.ensure(hi)
        cols = np.flatnonzero(req > 0)
        q = int(req[cols[0]])
        fit = self.free[cols[0], :, lo:hi] // q if q > 1 else self.free[cols[0], :, lo:hi].copy()
        for c in cols[1:]:
            np.minimum(fit, self.free[c, :, lo:hi] // req[c], out=fit)
        # busy windows rounded outwards to slots may overlap (e.g. a running job's end and
        # the planned start after it): an over-full slot holds no unit, not a negative count
        np.maximum(fit, 0, out=fit)
        return fit

    def earliest(self, release: int, slots: int, units: int, req: IntArray,
                 chunk: int = 256) -> tuple[int, IntArray]:
        """Earliest slot ``≥ release`` where ``units`` of ``req`` fit for ``slots`` slots,
        and how many units each node can hold over that window
        (:func:`~dispatchlab.dispatchers.offline_plan.planner.earliest_kernel.
        earliest_start`)."""
        self.ensure(max(release + 1, self.used_end + slots))
        return earliest_start(self.free, self.pool, self.used_end, release, slots, units,
                              np.asarray(req, dtype=np.int64), chunk)

    def place(self, start: int, slots: int, units: int, req: IntArray,
              room: IntArray) -> Alloc:
        """Put ``units`` first-fit on nodes with ``room`` and take their capacity."""
        room = np.minimum(room, units)
        before = np.cumsum(room) - room
        counts = np.clip(units - before, 0, room)
        nodes = np.flatnonzero(counts)
        usage = np.zeros_like(self.capacity)
        usage[nodes] = counts[nodes, None] * req[None, :]
        self.take(start, slots, usage)
        return tuple((int(n), int(counts[n])) for n in nodes)

    def fits_at(self, start: int, slots: int, units: int, req: IntArray) -> IntArray | None:
        """Per-node room when ``units`` fit at exactly ``start``, else ``None``."""
        fit = self.fits_per_node(start, start + slots, req).min(axis=1)
        fit = np.minimum(fit, units)
        return fit if int(fit.sum()) >= units else None


@dataclass
class Schedule:
    """A heuristic or CP solution in slots: start slot and allocation per instance job."""

    start: IntArray
    alloc: list[Alloc]

    def to_plan(self, inst: PlanInstance, objective: float | None = None,
                stats: dict | None = None) -> Plan:
        """The schedule as a :class:`Plan` in seconds."""
        return Plan(job_ids=inst.job_ids, rows=inst.rows,
                    starts=inst.origin + self.start * inst.step, duration=inst.duration,
                    alloc=tuple(self.alloc), cores_per_unit=inst.cores_per_unit,
                    total_cores=inst.total_cores, power=inst.power, objective=objective,
                    stats=stats or {}, meta=dict(inst.meta))


def busy_slots(since: int, until: int, origin: int, step: int) -> tuple[int, int]:
    """Slots ``[a, b)`` covering the seconds ``[since, until)`` (outward rounding)."""
    a = max((since - origin) // step, 0)
    b = max(-(-(until - origin) // step), 0)
    return int(a), int(b)


def heuristic(inst: PlanInstance, order: Sequence[int] | IntArray,
              min_start: IntArray | None = None,
              fixed_start: IntArray | None = None,
              grid: FreeGrid | None = None) -> Schedule | None:
    """Alg. 5 on ``inst`` with jobs taken in ``order`` (instance positions).

    ``min_start`` (slots, per job) raises a job's lower bound above its release
    (Delay-Search); ``fixed_start`` (slots, −1 = free) pins jobs to a start, placed before
    the others in start order as the CP solver would propagate them. Returns ``None`` when a
    pinned job cannot be placed at its start. ``grid``: place into this (empty) grid, which
    is left holding the schedule; jobs not in ``order`` and not pinned stay unplaced
    (start −1)."""
    n = len(inst)
    release = inst.release_slot
    if min_start is not None:
        release = np.maximum(release, min_start)
    slots = inst.slots
    if grid is None:
        grid = FreeGrid(inst.capacity, inst.busy, inst.origin, inst.step,
                        length=int(release.max(initial=0) + slots.max(initial=1)) + 16)
    start = np.full(n, -1, dtype=np.int64)
    alloc: list[Alloc] = [()] * n
    pinned = [] if fixed_start is None else np.flatnonzero(fixed_start >= 0).tolist()
    assert fixed_start is not None or not pinned
    for j in sorted(pinned, key=lambda j: (int(fixed_start[j]), j)):  # type: ignore[index]
        s = int(fixed_start[j])  # type: ignore[index]
        room = grid.fits_at(s, int(slots[j]), int(inst.units[j]), inst.req[j])
        if room is None:
            return None
        alloc[j] = grid.place(s, int(slots[j]), int(inst.units[j]), inst.req[j], room)
        start[j] = s
    for j in order:
        j = int(j)
        if start[j] >= 0:
            continue
        s, room = grid.earliest(int(release[j]), int(slots[j]), int(inst.units[j]), inst.req[j])
        alloc[j] = grid.place(s, int(slots[j]), int(inst.units[j]), inst.req[j], room)
        start[j] = s
    return Schedule(start, alloc)
