"""Conservative backfilling as it was before its slot availability moved to compiled arrays: the
reference the fast implementation must match decision for decision.

Kept verbatim from ``dispatchers/selection/conservative.py`` and the list-based
``SlotAvailability`` of ``dispatchers/availability.py`` (commit 3ba3fe2), renamed; node
availabilities are
the machine's own. One line differs (marked FIX): with a depth limit, after a rebuild the
old code looked up reservations in the dict the rebuild had replaced, so a job reserved
in the rebuild could be reserved a second time — its units held twice in the availability.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right
from typing import Any

import numpy as np

from dispatchlab.dispatchers.availability import Availability
from dispatchlab.dispatchers.machine import Machine, SlotMachine
from dispatchlab.dispatchers.rule_based.selection.base import Selection, check_depth
from dispatchlab.engine.decisions import Decision, Plan, WakeAt
from dispatchlab.engine.events import Events
from dispatchlab.engine.state import SystemView


class ReferenceSlotAvailability:
    """Free unit slots over time (the list-based availability conservative used before)."""

    __slots__ = ("free", "times", "units")

    def __init__(self, total: int, units: list[int]):
        self.times: list[int] = [0]
        self.free: list[int] = [total]
        self.units = units

    def __len__(self) -> int:
        return len(self.times)

    def advance(self, now: int) -> None:
        """Drop the past: the first segment starts at ``now``."""
        times = self.times
        k = bisect_right(times, now) - 1
        if k > 0:
            del times[:k]
            del self.free[:k]
        times[0] = now

    def _split(self, t: int) -> int:
        """Index of the segment starting at ``t``, adding a breakpoint if needed."""
        times = self.times
        k = bisect_left(times, t)
        if k == len(times) or times[k] != t:
            times.insert(k, t)
            self.free.insert(k, self.free[k - 1])
        return k

    def _add(self, t0: int, t1: int, delta: int) -> None:
        a = self._split(t0)
        b = self._split(t1)
        free, times = self.free, self.times
        for k in range(a, b):
            free[k] += delta
        if b < len(times) and free[b] == free[b - 1]:
            del times[b]
            del free[b]
        if a > 0 and free[a] == free[a - 1]:
            del times[a]
            del free[a]

    def take(self, job: int, t0: int, t1: int, placement: int) -> None:
        """Occupy ``placement`` slots over ``[t0, t1)``."""
        self._add(t0, t1, -placement)

    def give(self, job: int, t0: int, t1: int, placement: int) -> None:
        """Free ``placement`` slots over ``[t0, t1)``."""
        self._add(t0, t1, placement)

    def earliest(self, job: int, dur: int, before: int | None = None) -> tuple[int, int] | None:
        """Earliest start ``< before`` with ``units[job]`` slots free for ``dur`` seconds."""
        need = self.units[job]
        times, free = self.times, self.free
        n = len(times)
        i = 0
        while i < n:
            if free[i] < need:
                i += 1
                continue
            t = times[i]
            if before is not None and t >= before:
                return None
            end = t + dur
            j = i + 1
            while j < n and times[j] < end:
                if free[j] < need:
                    break
                j += 1
            else:
                return t, need
            i = j + 1
        return None  # pragma: no cover - the last segment always has every slot free

    def min_free(self) -> int:
        """Smallest free count anywhere (negative = overcommitted)."""
        return min(self.free)


_NEVER = 1 << 62


class ReferenceConservative(Selection):
    """Conservative backfilling as implemented before the slot kernels (unchanged)."""

    name = "conservative"
    idle_when_full = False  # early ends must still compress the availability
    plans_ahead = True

    def __init__(self, depth: int | None = None) -> None:
        self.depth = check_depth(depth)
        self._availability: Availability | None = None
        self._res: dict[int, tuple[int, int, Any]] = {}  # job → (start, end, placement)
        self._due: list[tuple[int, int]] = []  # (reserved start, job), stale entries skipped
        self._run: dict[int, tuple[int, Any]] = {}  # job → (expected end, placement)
        self._stats = {"compressions": 0, "rebuilds": 0, "moves": 0}
        self._wake = -1

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """No availability until the first call (the engine's parts reset with the view now)."""
        self._availability = None
        self._res, self._due, self._run = {}, [], {}
        self._stats = {"compressions": 0, "rebuilds": 0, "moves": 0}
        self._wake = -1

    def run_stats(self) -> dict[str, int]:
        """How often the availability was compressed or rebuilt, and reservations moved."""
        return dict(self._stats)

    def select(
        self, view: SystemView, events: Events, order: list[int], machine: Machine
    ) -> list[Decision]:
        """Update the availability, compress or rebuild reservations, start what is due now."""
        if self._availability is None:
            self._availability = (ReferenceSlotAvailability(machine.total, machine.units)
                             if isinstance(machine, SlotMachine) else machine.availability())
        avail = self._availability
        now = view.now
        avail.advance(now)
        run, res = self._run, self._res
        freed = False
        for j in events.finished:
            ran = run.pop(j, None)
            if ran is None:
                continue  # not started by this scheme (a reservation job or a component)
            end, held = ran
            if end > now:
                avail.give(j, now, end, held)
                freed = True
        out: list[Decision] = []
        estimate = machine.estimator.estimate
        overdue = [j for j in machine.overdue() if j in run]
        if overdue or self._next_due() < now:
            self._rebuild(machine, overdue, order, now, out)
            res = self._res  # FIX: the one change; the rebuild replaced the dict
        elif freed:
            self._compress(order, now, out)
        if self.depth is None:
            new = events.submitted
            if len(new) > 1:  # simultaneous arrivals get their reservations by priority
                arrived = set(new)
                new = [j for j in order if j in arrived]
            for j in new:
                self._place(j, estimate(j), None, out)
        else:
            for j in order[: self.depth]:
                if j not in res:
                    self._place(j, estimate(j), None, out)
        started = self._start_due(machine, now, out)
        if self.depth is not None and started and len(order) > self.depth:
            # Starts let more jobs into the depth window; they may be due now as well.
            gone = set(started)
            while started:
                for j in [j for j in order if j not in gone][: self.depth]:
                    if j not in res:
                        self._place(j, estimate(j), None, out)
                started = self._start_due(machine, now, out)
                gone.update(started)
        wake = self._next_due()
        if wake != self._wake and now < wake < _NEVER:
            self._wake = wake
            out.append(WakeAt(wake))
        return out

    def _next_due(self) -> int:
        """Earliest live reservation start (dropping stale heap entries), or a huge value."""
        due, res = self._due, self._res
        while due:
            t, j = due[0]
            r = res.get(j)
            if r is not None and r[0] == t:
                return t
            heapq.heappop(due)
        return _NEVER

    def _start_due(self, machine: Machine, now: int, out: list[Decision]) -> list[int]:
        """Start every job whose reservation is now."""
        due, res = self._due, self._res
        started = []
        while due and due[0][0] <= now:
            t, j = heapq.heappop(due)
            r = res.get(j)
            if r is None or r[0] != t:
                continue  # a stale heap entry: the reservation moved
            del res[j]
            out.append(machine.start_reserved(j, r[2]))
            self._run[j] = (r[1], machine.held(j))
            started.append(j)
        return started

    def _place(self, job: int, dur: int, before: int | None, out: list[Decision]) -> bool:
        """Reserve ``job`` at its earliest fit; with ``before``, only if earlier than that."""
        avail = self._availability
        assert avail is not None
        found = avail.earliest(job, dur, before)
        if found is None:
            return False
        t, held = found
        avail.take(job, t, t + dur, held)
        self._res[job] = (t, t + dur, held)
        heapq.heappush(self._due, (t, job))
        out.append(Plan(job, t))
        return True

    def _compress(self, order: list[int], now: int, out: list[Decision]) -> None:
        """Move every reservation to its earliest fit, in priority order."""
        avail = self._availability
        assert avail is not None
        res = self._res
        self._stats["compressions"] += 1
        for j in order:
            r = res.get(j)
            if r is None or r[0] <= now:
                continue
            start, end, held = r
            avail.give(j, start, end, held)
            if self._place(j, end - start, start, out):
                self._stats["moves"] += 1
            else:
                avail.take(j, start, end, held)

    def _rebuild(
        self,
        machine: Machine,
        overdue: list[int],
        order: list[int],
        now: int,
        out: list[Decision],
    ) -> None:
        """Hold overdue running jobs until ``now + 1``; re-plan every reservation."""
        avail = self._availability
        assert avail is not None
        self._stats["rebuilds"] += 1
        until = now + 1
        for j in overdue:
            _, held = self._run[j]
            avail.take(j, now, until, held)
            self._run[j] = (until, held)
        machine.postpone(overdue, until)
        old = self._res
        for j, (start, end, held) in old.items():
            if end > now:
                avail.give(j, max(start, now), end, held)
        self._res, self._due = {}, []
        for j in order:
            if j in old:
                start, end, _ = old[j]
                self._place(j, end - start, None, out)
