"""Resource-time availabilities: free capacity as a step function of future time.

Breakpoints ``times[0] = now < times[1] < …``; segment ``k`` covers
``[times[k], times[k+1])`` and the last one runs forever. Jobs *take* capacity over a
window ``[t0, t1)`` and *give* it back when a reservation moves or a job ends early.
Conservative backfilling keeps every running job and every reservation in one availability.

- :class:`~dispatchlab.dispatchers.slot_availability.SlotAvailability` (its own module, re-exported
  here) counts interchangeable unit slots (the common case: fast and exact when every unit
  asks the same resources), in arrays operated on by compiled kernels.
- :class:`NodeAvailability` keeps a nodes × resources matrix per segment (numpy, the shared
  :class:`~dispatchlab.dispatchers.capacity_timeline.CapacityTimeline`) and places each
  reservation on concrete nodes with the dispatcher's allocator, honouring operator rules
  when there are any.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from dispatchlab.arrays import BoolArray, IntArray
from dispatchlab.dispatchers.allocators import Allocator
from dispatchlab.dispatchers.availability_kernels import run_kernel
from dispatchlab.dispatchers.capacity_timeline import CapacityTimeline
from dispatchlab.dispatchers.group_placement import GroupPlacement, place_all
from dispatchlab.dispatchers.slot_availability import SlotAvailability
from dispatchlab.engine.constraints import Constraints
from dispatchlab.engine.state import SystemView


class Availability(Protocol):
    """What conservative backfilling needs; placements are opaque to it."""

    def __len__(self) -> int: ...

    def advance(self, now: int) -> None:
        """Drop the past."""

    def take(self, job: int, t0: int, t1: int, placement: Any) -> None:
        """Occupy ``placement`` over ``[t0, t1)``."""

    def give(self, job: int, t0: int, t1: int, placement: Any) -> None:
        """Free ``placement`` over ``[t0, t1)``."""

    def earliest(self, job: int, dur: int, before: int | None = None) -> tuple[int, Any] | None:
        """Earliest start before ``before`` and where."""
        ...

    def min_free(self) -> int:
        """Smallest free amount anywhere."""
        ...


def may_start_before(availability: Availability, job: int, t: int, dur: int) -> bool:
    """``False`` only when ``job`` surely has no start before ``t`` for ``dur`` seconds
    (whether its own hold, from ``t`` on, is given back or not): what the availability can
    tell at a glance (:meth:`NodeAvailability.may_start_before`); ``True`` when it cannot."""
    ask = getattr(availability, "may_start_before", None)
    return True if ask is None else bool(ask(job, t, dur))


class LiveRequests:
    """Per-unit requests of the jobs a view knows, read when asked (rows appear as jobs
    arrive), for parts built before the jobs they will plan for."""

    __slots__ = ("view",)

    def __init__(self, view: SystemView):
        self.view = view

    def __getitem__(self, job: int) -> IntArray:
        return self.view.req[job]


class NodeAvailability:
    """Free capacity per node and resource over time (a
    :class:`~dispatchlab.dispatchers.capacity_timeline.CapacityTimeline`); reservations
    hold concrete nodes, chosen by the dispatcher's allocator on the room free over the
    whole window. With operator ``rules`` a job's earliest start must also be a time it
    may start at (queue window open, queue not stopped, inside its reservation), on the
    nodes it may use then, every component of a heterogeneous job placed together."""

    __slots__ = ("_room", "_times", "alloc", "req", "rules", "timeline", "units")

    def __init__(self, capacity: IntArray, req: IntArray | LiveRequests, units: list[int],
                 alloc: Allocator, rules: Constraints | None = None):
        self.timeline = CapacityTimeline(capacity)
        self.req = req
        self.units = units
        self.alloc = alloc
        self.rules = rules
        # per request row: (timeline version, units fitting per segment and node, in all)
        self._room: dict[bytes, tuple[int, IntArray, IntArray]] = {}
        self._times: tuple[int, IntArray] | None = None

    @property
    def times(self) -> list[int]:
        """Segment starts."""
        return self.timeline.times

    @property
    def free(self) -> IntArray:
        """Free capacity per segment, node and resource."""
        return self.timeline.free

    def __len__(self) -> int:
        return len(self.timeline)

    def advance(self, now: int) -> None:
        """Drop the past: the first segment starts at ``now``."""
        self.timeline.advance(now)

    def take(self, job: int, t0: int, t1: int, placement: Any) -> None:
        """Occupy ``placement`` of ``job`` over ``[t0, t1)`` (a (nodes, counts) pair, or
        one per component of a heterogeneous job)."""
        for comp, nodes, counts in _parts(job, placement):
            self.timeline.take(t0, t1, nodes, counts, self.req[comp])

    def give(self, job: int, t0: int, t1: int, placement: Any) -> None:
        """Free ``placement`` of ``job`` over ``[t0, t1)``."""
        for comp, nodes, counts in _parts(job, placement):
            self.timeline.give(t0, t1, nodes, counts, self.req[comp])

    def earliest(self, job: int, dur: int, before: int | None = None
                 ) -> tuple[int, Any] | None:
        """Earliest start ``< before`` at which the job fits for ``dur``, and where."""
        rules = self.rules
        accept = self.acceptor(job, dur)
        if rules is None:
            req, need = self.req[job], self.units[job]

            def place_one(room: IntArray, t: int) -> Any:
                placed = self.alloc.place(room, req, need)
                return placed if placed is None or accept is None or accept(placed, t) \
                    else None

            fit, _ = self.unit_room(req)
            return self.timeline.earliest(dur, place_one, before=before, need=(req, need),
                                          fit=fit, keep=self.window_filter(job))

        def place(room: IntArray, t: int) -> GroupPlacement | None:
            mask = rules.allowed_nodes(job, t)
            if mask is not None:
                room = np.where(mask[:, None], room, 0)
            placed = place_all(rules, self.alloc, self.req, self.units, job, room)
            return placed if placed is None or accept is None or accept(placed, t) else None

        return self.timeline.earliest(dur, place, before=before,
                                      eligibility=JobEligibility(rules, job))

    def unit_room(self, req: IntArray) -> tuple[IntArray, IntArray]:
        """Units of ``req`` fitting per segment and node, and per segment in all (kept
        while the timeline does not change)."""
        key = req.tobytes()
        got = self._room.get(key)
        version = self.timeline.version
        if got is None or got[0] != version:
            if len(self._room) > 64:
                self._room.clear()
            fit = self.timeline.unit_room(req)
            got = self._room[key] = (version, fit, fit.sum(axis=1))
        return got[1], got[2]

    def segment_times(self) -> IntArray:
        """The breakpoints as an array (kept while the timeline does not change; advancing
        it to a new now within its first segment moves only the first breakpoint)."""
        version = self.timeline.version
        if self._times is None or self._times[0] != version \
                or self._times[1][0] != self.timeline.times[0]:
            self._times = (version, np.asarray(self.timeline.times, dtype=np.int64))
        return self._times[1]

    def power_room(self, job: int) -> tuple[np.ndarray, float] | None:
        """The power per segment and the most it may be for ``job`` to start there
        (``None``: no such limit); subclasses under a power cap give one."""
        return None

    def may_start_before(self, job: int, t: int, dur: int) -> bool:
        """``False`` only when ``job`` has no start before ``t``: every segment starting
        before ``t`` where its units fit in all (and the power leaves room for the least
        they add, :meth:`power_room`) begins a run of such segments too short for ``dur``
        and cut before ``t``, where the job's own hold may be given back. A window starting
        in a segment has at most the room of each segment it covers (operator rules only
        take room away), and segments before ``t`` do not hold the job's own reservation."""
        k = bisect_left(self.timeline.times, t)
        if k == 0:
            return False
        _, total = self.unit_room(self.req[job])
        limit = self.power_room(job)
        power, room = (total, math.inf) if limit is None else limit
        return bool(run_kernel()(self.segment_times(), total, power, k, self.units[job],
                                 room, dur))

    def window_filter(self, job: int) -> Callable[[IntArray, IntArray], BoolArray] | None:
        """A test of candidate windows (segment ranges) ruling out, all at once, ones where
        every placement fails :meth:`acceptor` (``None``: none); subclasses add one."""
        return None

    def acceptor(self, job: int, dur: int) -> Callable[[Any, int], bool] | None:
        """A further test of each placement found for ``job`` at a start time (``None``:
        none); subclasses add one (a power cap)."""
        return None

    def min_free(self) -> int:
        """Smallest free amount anywhere (negative = overcommitted)."""
        return self.timeline.min_free()


class JobEligibility:
    """When a job may start under the operator rules (absolute times)."""

    __slots__ = ("job", "rules")

    def __init__(self, rules: Constraints, job: int):
        self.rules = rules
        self.job = job

    def next_eligible(self, t: int) -> int:
        """The queue's next open time, or the job's reservation's."""
        return self.rules.next_eligible(self.job, t)

    def next_change(self, t: int) -> int:
        """The next rule change."""
        return self.rules.next_change(t)


def _parts(job: int, placement: Any) -> GroupPlacement:
    if isinstance(placement, list):
        return placement
    nodes, counts = placement
    return [(job, nodes, counts)]


__all__ = ["Availability", "JobEligibility", "LiveRequests", "NodeAvailability", "SlotAvailability",
           "may_start_before"]
