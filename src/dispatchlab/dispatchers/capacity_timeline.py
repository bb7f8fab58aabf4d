"""Free capacity per node and resource as a step function of time — the one implementation
behind conservative backfilling's node availability, operator-rule-aware earliest starts, and the
CP dispatchers' greedy list schedules.

Breakpoints ``times[0] < times[1] < …``; segment ``k`` covers ``[times[k], times[k+1])``
(the last one runs forever) and ``free[k]`` is the nodes × resources matrix free then. Jobs
*take* capacity over a window and *give* it back; adjacent equal segments are merged, which
never changes an earliest start (a start fitting at a removed breakpoint fits at the one
before it, on at least as much room).

:meth:`CapacityTimeline.earliest` finds the earliest start at which a caller-supplied
placement succeeds on the room free over the job's whole window: at segment starts, or —
with an :class:`Eligibility` (queue windows, stops, reservations, CP start domains) — at the
times the job may start, stepping to the next segment or rule change when it cannot.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable
from typing import Protocol, TypeVar

import numpy as np

from dispatchlab.arrays import BoolArray, IntArray
from dispatchlab.platform.platform import units_fitting

P = TypeVar("P")

_FAR = 1 << 62
_MAX_STEPS = 100_000


class Eligibility(Protocol):
    """When a job may start, in the timeline's time base."""

    def next_eligible(self, t: int) -> int:
        """The first time ``≥ t`` at which the job may start (huge: never)."""
        ...

    def next_change(self, t: int) -> int:
        """The next time after ``t`` at which where or whether it may start changes."""
        ...


class CapacityTimeline:
    """Free capacity per node and resource over time."""

    __slots__ = ("free", "times", "version")

    def __init__(self, free_now: IntArray, start: int = 0,
                 releases: Iterable[tuple[int, IntArray]] = ()):
        """``releases``: ``(time, usage)`` pairs — capacity (nodes × resources) that becomes
        free at that time (negative usage: capacity taken from then on)."""
        rel = [(t, u) for t, u in releases if t > start]
        self.times: list[int] = [start, *sorted({t for t, _ in rel})]
        free = np.repeat(np.asarray(free_now, dtype=np.int64)[None, :, :], len(self.times),
                         axis=0)
        for t, usage in rel:
            free[bisect_left(self.times, t):] += usage
        self.free: IntArray = free
        #: Counts the changes (of breakpoints or free capacity): figures derived from the
        #: timeline stay valid while it is unchanged.
        self.version = 0

    def __len__(self) -> int:
        return len(self.times)

    def advance(self, now: int) -> None:
        """Drop the past: the first segment starts at ``now``."""
        k = bisect_right(self.times, now) - 1
        if k > 0:
            del self.times[:k]
            self.free = self.free[k:]
            self.version += 1
        self.times[0] = now

    def _split(self, t: int) -> int:
        """Index of the segment starting at ``t``, adding a breakpoint if needed."""
        times = self.times
        k = bisect_left(times, t)
        if k == len(times) or times[k] != t:
            times.insert(k, t)
            self.free = np.insert(self.free, k, self.free[k - 1], axis=0)
            self.version += 1
        return k

    def add(self, t0: int, t1: int, nodes: IntArray, usage: IntArray) -> None:
        """Add ``usage`` (one row per node of ``nodes``) to the free capacity over
        ``[t0, t1)`` (negative: take it)."""
        a = self._split(t0)
        b = self._split(t1)
        self.free[a:b, nodes] += usage
        self.version += 1
        free, times = self.free, self.times
        drop = [k for k in (b, a) if 0 < k < len(times) and np.array_equal(free[k], free[k - 1])]
        if drop:
            for k in drop:
                del times[k]
            self.free = np.delete(free, drop, axis=0)

    def take(self, t0: int, t1: int, nodes: IntArray, counts: IntArray, req: IntArray) -> None:
        """Occupy ``counts`` units of ``req`` on ``nodes`` over ``[t0, t1)``."""
        self.add(t0, t1, nodes, -(counts[:, None] * req))

    def give(self, t0: int, t1: int, nodes: IntArray, counts: IntArray, req: IntArray) -> None:
        """Free ``counts`` units of ``req`` on ``nodes`` over ``[t0, t1)``."""
        self.add(t0, t1, nodes, counts[:, None] * req)

    def room(self, i: int, e: int) -> IntArray:
        """Free capacity over segments ``[i, e)``: the minimum per node and resource."""
        return self.free[i] if e <= i + 1 else self.free[i:e].min(axis=0)

    def window(self, t: int, dur: int) -> tuple[int, int]:
        """Segments covering ``[t, t + dur)``."""
        i = bisect_right(self.times, t) - 1
        return i, max(bisect_left(self.times, t + dur), i + 1)

    def earliest(self, dur: int, place: Callable[[IntArray, int], P | None], *,
                 before: int | None = None, need: tuple[IntArray, int] | None = None,
                 eligibility: Eligibility | None = None, far: int = _FAR,
                 max_steps: int = _MAX_STEPS, fit: IntArray | None = None,
                 keep: Callable[[IntArray, IntArray], BoolArray] | None = None
                 ) -> tuple[int, P] | None:
        """Earliest start ``< before`` where ``place(room, start)`` succeeds, ``room`` being
        the capacity free over ``[start, start + dur)``.

        ``need = (req, units)`` says the placement needs ``units`` units of ``req`` in all:
        starts whose room cannot hold that many are skipped without calling ``place``
        (those where some segment of the window holds too few units in all at once, the
        others when reached). Without ``eligibility`` starts are segment starts; with it,
        the times the job may start (never at or after ``far``). With ``need``: ``fit``
        is :meth:`unit_room` of ``req`` when the caller has it, and ``keep(starts, ends)``
        (segment indices of the candidate windows) may rule out more candidates at once —
        only ones where ``place`` would fail.
        """
        if eligibility is not None:
            return self._earliest_eligible(dur, place, before, eligibility, far, max_steps)
        times = self.times
        units = 0
        if need is None:
            starts = range(len(times))
            ends = [self.window(t, dur)[1] for t in times]
        else:
            req, units = need
            if fit is None:
                fit = self.unit_room(req)
            starts_a, ends_a = self._candidates(dur, units, before, fit)
            if keep is not None and len(starts_a):
                ok = keep(starts_a, ends_a)
                starts_a, ends_a = starts_a[ok], ends_a[ok]
            starts, ends = starts_a.tolist(), ends_a.tolist()
        for i, e in zip(starts, ends, strict=True):
            t = times[i]
            if before is not None and t >= before:
                return None
            if fit is not None and e > i + 1 and int(fit[i:e].min(axis=0).sum()) < units:
                continue  # the nodes together hold too few units over the whole window
            placed = place(self.room(i, e), t)
            if placed is not None:
                return t, placed
        return None

    def unit_room(self, req: IntArray) -> IntArray:
        """Units of ``req`` fitting per segment and node (segments × nodes)."""
        free = self.free
        return units_fitting(free.reshape(-1, free.shape[2]), req).reshape(len(free), -1)

    def _candidates(self, dur: int, units: int, before: int | None, fit: IntArray
                    ) -> tuple[IntArray, IntArray]:
        """Segment starts whose window has ``units`` units fitting (``fit``: per segment and
        node) in all in every segment, with the end of each window."""
        times = np.asarray(self.times, dtype=np.int64)
        enough = fit.sum(axis=1) >= units
        starts = np.flatnonzero(enough)
        if before is not None:
            starts = starts[times[starts] < before]
        if not len(starts):
            return starts, starts
        ends = np.maximum(np.searchsorted(times, times[starts] + dur), starts + 1)
        short = np.concatenate(([0], np.cumsum(~enough)))
        ok = short[ends] == short[starts]  # no segment with too few units in the window
        return starts[ok], ends[ok]

    def _earliest_eligible(self, dur: int, place: Callable[[IntArray, int], P | None],
                           before: int | None, elig: Eligibility, far: int,
                           max_steps: int) -> tuple[int, P] | None:
        times = self.times
        t = times[0]
        for _ in range(max_steps):
            t = elig.next_eligible(t)
            if t >= far or (before is not None and t >= before):
                return None
            i, e = self.window(t, dur)
            placed = place(self.room(i, e), t)
            if placed is not None:
                return t, placed
            nxt = min(times[i + 1] if i + 1 < len(times) else _FAR, elig.next_change(t))
            if nxt >= far:
                return None
            t = max(nxt, t + 1)
        return None

    def min_free(self) -> int:
        """Smallest free amount anywhere (negative = overcommitted)."""
        return int(self.free.min())
