"""The book of conservative backfilling: every queued job's reservation in the availability.

:class:`Reservations` works over any :class:`~dispatchlab.dispatchers.availability.Availability`
(a dict of windows, a heap of starts with stale entries skipped);
:class:`~dispatchlab.dispatchers.slot_availability.SlotReservations` is the same book for a slot
availability, kept in arrays next to it and compressed in one compiled call. Both answer the same
questions with the same results.
"""

from __future__ import annotations

import heapq
from typing import Any, Protocol

from dispatchlab.dispatchers.availability import Availability, may_start_before
from dispatchlab.engine.compiled.slot_availability_ops import NEVER


class Book(Protocol):
    """What :class:`~dispatchlab.dispatchers.rule_based.selection.conservative.Conservative`
    keeps."""

    def __contains__(self, job: int) -> bool: ...

    def reserve(self, job: int, dur: int) -> int | None:
        """Reserve ``job`` for ``dur`` at its earliest fit; its start (``None``: no fit)."""
        ...

    def compress(self, order: list[int], now: int) -> tuple[list[int], list[int]]:
        """Move each reservation not due yet to its earliest fit when earlier, in the order
        of ``order``; the moved jobs and their new starts."""
        ...

    def next_due(self) -> int:
        """Earliest reservation start, :data:`NEVER` when there is none."""
        ...

    def pop_due(self, now: int) -> list[tuple[int, int, Any]]:
        """Remove the reservations starting at or before ``now``, by (start, job): each
        job, its reserved end and placement."""
        ...

    def drain(self) -> list[tuple[int, int, int, Any]]:
        """Remove every reservation: (job, start, end, placement) in job order."""
        ...


class Reservations:
    """The book over any availability: windows in a dict, starts in a heap (stale entries —
    reservations that moved or started — are skipped when they surface)."""

    __slots__ = ("_due", "_res", "availability")

    def __init__(self, availability: Availability) -> None:
        self.availability = availability
        self._res: dict[int, tuple[int, int, Any]] = {}  # job → (start, end, placement)
        self._due: list[tuple[int, int]] = []  # (start, job)

    def __contains__(self, job: int) -> bool:
        return job in self._res

    def _put(self, job: int, dur: int, before: int | None) -> int | None:
        avail = self.availability
        found = avail.earliest(job, dur, before)
        if found is None:
            return None
        t, held = found
        avail.take(job, t, t + dur, held)
        self._res[job] = (t, t + dur, held)
        heapq.heappush(self._due, (t, job))
        return t

    def reserve(self, job: int, dur: int) -> int | None:
        """Earliest fit, taken from the availability."""
        return self._put(job, dur, None)

    def compress(self, order: list[int], now: int) -> tuple[list[int], list[int]]:
        """Take each reservation out and put it back at its earliest fit before its start,
        else where it was (a reservation the availability says cannot start earlier stays
        put untouched: giving it back and taking it again would leave the availability as it
        was)."""
        avail, res = self.availability, self._res
        jobs: list[int] = []
        starts: list[int] = []
        for j in order:
            r = res.get(j)
            if r is None or r[0] <= now:
                continue
            start, end, held = r
            if not may_start_before(avail, j, start, end - start):
                continue  # no earlier start: it would be put back where it is
            avail.give(j, start, end, held)
            t = self._put(j, end - start, start)
            if t is None:
                avail.take(j, start, end, held)
            else:
                jobs.append(j)
                starts.append(t)
        return jobs, starts

    def next_due(self) -> int:
        """Earliest live start (dropping stale heap entries)."""
        due, res = self._due, self._res
        while due:
            t, j = due[0]
            r = res.get(j)
            if r is not None and r[0] == t:
                return t
            heapq.heappop(due)
        return NEVER

    def pop_due(self, now: int) -> list[tuple[int, int, Any]]:
        """Live entries up to ``now``, in heap order."""
        due, res = self._due, self._res
        out = []
        while due and due[0][0] <= now:
            t, j = heapq.heappop(due)
            r = res.get(j)
            if r is None or r[0] != t:
                continue  # stale: the reservation moved
            del res[j]
            out.append((j, r[1], r[2]))
        return out

    def drain(self) -> list[tuple[int, int, int, Any]]:
        """Everything, emptied."""
        out = [(j, *r) for j, r in sorted(self._res.items())]
        self._res, self._due = {}, []
        return out
