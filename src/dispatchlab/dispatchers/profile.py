"""Resource-time profiles: free capacity as a step function of future time.

Breakpoints ``times[0] = now < times[1] < …``; segment ``k`` covers
``[times[k], times[k+1])`` and the last one runs forever. Jobs *take* capacity over a
window ``[t0, t1)`` and *give* it back when a reservation moves or a job ends early.
Conservative backfilling keeps every running job and every reservation in one profile.

- :class:`SlotProfile` counts interchangeable unit slots with plain Python lists (the
  common case: fast and exact when every unit asks the same resources).
- :class:`NodeProfile` keeps a nodes × resources matrix per segment (numpy) and places
  each reservation on concrete nodes with the dispatcher's allocator.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from dispatchlab.dispatchers.allocators import Allocator, Placement
from dispatchlab.platform.platform import units_fitting

IntArray = npt.NDArray[np.int64]


class Profile(Protocol):
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


class SlotProfile:
    """Free unit slots over time."""

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


class NodeProfile:
    """Free capacity per node and resource over time; reservations hold concrete nodes."""

    __slots__ = ("alloc", "free", "req", "times", "units")

    def __init__(self, capacity: IntArray, req: IntArray, units: list[int], alloc: Allocator):
        self.times: list[int] = [0]
        self.free: IntArray = capacity[None, :, :].copy()
        self.req = req
        self.units = units
        self.alloc = alloc

    def __len__(self) -> int:
        return len(self.times)

    def advance(self, now: int) -> None:
        """Drop the past: the first segment starts at ``now``."""
        k = bisect_right(self.times, now) - 1
        if k > 0:
            del self.times[:k]
            self.free = self.free[k:]
        self.times[0] = now

    def _split(self, t: int) -> int:
        times = self.times
        k = bisect_left(times, t)
        if k == len(times) or times[k] != t:
            times.insert(k, t)
            self.free = np.insert(self.free, k, self.free[k - 1], axis=0)
        return k

    def _add(self, t0: int, t1: int, placement: Placement, req: IntArray, sign: int) -> None:
        nodes, counts = placement
        a = self._split(t0)
        b = self._split(t1)
        self.free[a:b, nodes] += sign * (counts[:, None] * req)
        free, times = self.free, self.times
        drop = [k for k in (b, a) if 0 < k < len(times) and np.array_equal(free[k], free[k - 1])]
        if drop:
            for k in drop:
                del times[k]
            self.free = np.delete(free, drop, axis=0)

    def take(self, job: int, t0: int, t1: int, placement: Placement) -> None:
        """Occupy ``placement`` (nodes, counts) of job ``job`` over ``[t0, t1)``."""
        self._add(t0, t1, placement, self.req[job], -1)

    def give(self, job: int, t0: int, t1: int, placement: Placement) -> None:
        """Free ``placement`` of job ``job`` over ``[t0, t1)``."""
        self._add(t0, t1, placement, self.req[job], 1)

    def earliest(
        self, job: int, dur: int, before: int | None = None
    ) -> tuple[int, Placement] | None:
        """Earliest start ``< before`` where the job's units fit on some nodes for ``dur``.

        Units fitting per node over a window = the minimum over its segments; all candidate
        windows are checked at once with a sparse table of range minima. The placement is
        chosen by the allocator on the node-wise minimum of free capacity over the window.
        """
        req, need = self.req[job], self.units[job]
        free = self.free
        n = len(self.times)
        times = np.asarray(self.times, dtype=np.int64)
        fit = units_fitting(free.reshape(-1, free.shape[2]), req).reshape(n, -1)
        starts = np.flatnonzero(fit.sum(axis=1) >= need)
        if before is not None:
            starts = starts[times[starts] < before]
        if not len(starts):
            return None
        ends = np.searchsorted(times, times[starts] + dur)  # window = segments [start, end)
        span = ends - starts
        level = np.log2(span).astype(np.int64)  # 2**level ≤ span
        table = [fit]
        while (1 << len(table)) <= int(span.max()):
            step = 1 << (len(table) - 1)
            table.append(np.minimum(table[-1][:-step], table[-1][step:]))
        room = np.empty((len(starts), fit.shape[1]), dtype=fit.dtype)
        for k in np.unique(level).tolist():
            sel = level == k
            lo, hi = starts[sel], ends[sel] - (1 << k)
            room[sel] = np.minimum(table[k][lo], table[k][hi])
        for c in np.flatnonzero(room.sum(axis=1) >= need).tolist():
            i, e = int(starts[c]), int(ends[c])
            placed = self.alloc.place(free[i:e].min(axis=0), req, need)
            if placed is not None:
                return self.times[i], placed
        return None

    def min_free(self) -> int:
        """Smallest free amount anywhere (negative = overcommitted)."""
        return int(self.free.min())
