"""The job-based heuristic (thesis Alg. 5): jobs in a given order, each at its earliest
feasible start (≥ its submission) given the jobs already fixed.

Alg. 5 walks a job's start lower bound up one instant at a time until its units fit; here
the same earliest start is found on a time-indexed free-capacity grid
(:class:`FreeGrid`, slots × nodes × resources, numpy): for a window of candidate starts it
computes per slot and node how many units fit, takes the minimum over the job's duration
with a sliding-window minimum, and picks the first start where the nodes together hold
the job's units. Units are placed first-fit in node order (lowest nodes first). Past the
last slot anything is placed on, the machine is empty, so the search always ends.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.ndimage import minimum_filter1d

from dispatchlab.planning.instance import PlanInstance
from dispatchlab.planning.plan import Alloc, Plan

IntArray = npt.NDArray[np.int64]

_BIG = np.iinfo(np.int64).max // 4


class FreeGrid:
    """Free capacity per slot, node and resource; slots past ``used_end`` are empty."""

    def __init__(self, capacity: IntArray, busy: Sequence[tuple[int, IntArray]] = (),
                 origin: int = 0, step: int = 60, length: int = 1024):
        self.capacity = np.asarray(capacity, dtype=np.int64)
        self.free = np.repeat(self.capacity[None], max(length, 1), axis=0)
        self.used_end = 0  # slots ≥ used_end are untouched (full capacity)
        for until, usage in busy:
            n = -(-(until - origin) // step)
            if n > 0:
                self.take(0, int(n), np.asarray(usage, dtype=np.int64))

    def ensure(self, length: int) -> None:
        """Grow the grid to at least ``length`` slots."""
        if length > len(self.free):
            grow = max(length, 2 * len(self.free)) - len(self.free)
            self.free = np.concatenate([self.free, np.repeat(self.capacity[None], grow, 0)])

    def take(self, start: int, slots: int, usage: IntArray) -> None:
        """Take ``usage`` (nodes × resources) over ``[start, start + slots)``."""
        self.ensure(start + slots)
        self.free[start:start + slots] -= usage
        self.used_end = max(self.used_end, start + slots)

    def fits_per_node(self, lo: int, hi: int, req: IntArray) -> IntArray:
        """Units of ``req`` fitting per slot of ``[lo, hi)`` and node (slots × nodes)."""
        self.ensure(hi)
        block = self.free[lo:hi]
        mask = req > 0
        cols = np.flatnonzero(mask)
        fit = block[:, :, cols[0]] // req[cols[0]]
        for c in cols[1:]:
            np.minimum(fit, block[:, :, c] // req[c], out=fit)
        return fit

    def earliest(self, release: int, slots: int, units: int, req: IntArray,
                 chunk: int = 256) -> tuple[int, IntArray]:
        """Earliest slot ``≥ release`` where ``units`` of ``req`` fit for ``slots`` slots,
        and how many units each node can hold over that window."""
        t = release
        while True:
            if t >= self.used_end:  # an empty machine from here on
                window = self.fits_per_node(t, t + 1, req)[0]
                return t, window
            span = max(chunk, slots)
            lo, hi = t, min(t + span, self.used_end) + slots
            fit = np.minimum(self.fits_per_node(lo, hi, req), units)
            if slots > 1:
                # forward window minimum: win[i] = min(fit[i : i + slots])
                win = minimum_filter1d(fit, size=slots, axis=0, mode="nearest",
                                       origin=-(slots // 2))[: hi - lo - slots + 1]
            else:
                win = fit
            ok = np.flatnonzero(win.sum(axis=1) >= units)
            if ok.size:
                k = int(ok[0])
                return lo + k, win[k]
            t = lo + len(win)

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
        fit = self.fits_per_node(start, start + slots, req).min(axis=0)
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


def heuristic(inst: PlanInstance, order: Sequence[int] | IntArray,
              min_start: IntArray | None = None,
              fixed_start: IntArray | None = None) -> Schedule | None:
    """Alg. 5 on ``inst`` with jobs taken in ``order`` (instance positions).

    ``min_start`` (slots, per job) raises a job's lower bound above its release
    (Delay-Search); ``fixed_start`` (slots, −1 = free) pins jobs to a start, placed before
    the others in start order as the CP solver would propagate them. Returns ``None`` when a
    pinned job cannot be placed at its start."""
    n = len(inst)
    release = inst.release_slot
    if min_start is not None:
        release = np.maximum(release, min_start)
    slots = inst.slots
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


def timed_heuristic(inst: PlanInstance, order: Sequence[int] | IntArray
                    ) -> tuple[Schedule, float]:
    """:func:`heuristic` and its wall time in seconds."""
    t0 = time.perf_counter()
    sched = heuristic(inst, order)
    assert sched is not None  # nothing pinned: always a schedule
    return sched, time.perf_counter() - t0
