"""Per-node utilization profiles on a slot grid: what node managers have promised.

Time is cut into slots of ``slot`` seconds (slot ``j`` is ``[j·slot, (j+1)·slot)``). A
reservation from ``s`` to ``e`` occupies every slot it touches, ``floor(s/slot)`` to
``ceil(e/slot) − 1``, so sums over slots bound real usage at every instant: two
reservations that fit a slot's capacity never overlap beyond it in real time. The
array keeps only slots from the current one on (a rolling window that grows on demand).
"""

from __future__ import annotations

import numpy as np

from dispatchlab.arrays import FloatArray, IntArray
from dispatchlab.numba_loader import compiled


class UsageGrid:
    """Reserved use ``up[k, n, j]`` of resource ``k`` on node ``n`` in slot ``j``."""

    def __init__(self, n_resources: int, n_nodes: int, slot: int, horizon: int = 256):
        if slot <= 0:
            raise ValueError(f"slot must be positive, got {slot}")
        self.slot = slot
        self.base = 0  # absolute index of column 0
        self.up: FloatArray = np.zeros((n_resources, n_nodes, max(horizon, 16)))

    @property
    def end(self) -> int:
        """One past the last absolute slot held."""
        return self.base + self.up.shape[2]

    def slot_of(self, t: int) -> int:
        """The slot holding time ``t``."""
        return t // self.slot

    def advance(self, now: int) -> None:
        """Drop slots wholly in the past (kept in place until half the array is past)."""
        first = now // self.slot
        drop = first - self.base
        if drop > self.up.shape[2] // 2:
            keep = self.up[:, :, drop:] if drop < self.up.shape[2] else self.up[:, :, :0]
            fresh = np.zeros_like(self.up)
            fresh[:, :, :keep.shape[2]] = keep
            self.up = fresh
            self.base = first

    def ensure(self, last: int) -> None:
        """Make absolute slot ``last − 1`` addressable (grow by doubling)."""
        if last <= self.end:
            return
        width = self.up.shape[2]
        while self.base + width < last:
            width *= 2
        fresh = np.zeros((self.up.shape[0], self.up.shape[1], width))
        fresh[:, :, :self.up.shape[2]] = self.up
        self.up = fresh

    def window(self, first: int, last: int) -> FloatArray:
        """A read-only view of absolute slots ``[first, last)`` (resources × nodes ×
        slots)."""
        self.ensure(last)
        return self.up[:, :, first - self.base:last - self.base]

    def held(self, first: int, last: int) -> tuple[FloatArray, int]:
        """The whole array, absolute slots ``[first, last)`` made addressable, and the
        column of slot ``first`` (for compiled readers that take an offset, not a
        view)."""
        self.ensure(last)
        return self.up, first - self.base

    def free_from(self, first: int) -> IntArray:
        """Per node, the absolute slot from which it holds nothing (more than 1e-9 of no
        resource) up to the end of the grid, at least ``first`` (slots before the grid's
        first held one are gone: empty)."""
        fn = compiled(_free_from, fallback=_free_from)
        out = np.empty(self.up.shape[1], dtype=np.int64)
        fn(self.up, max(first - self.base, 0), out)
        return out + self.base

    def add(self, nodes: IntArray, amounts: FloatArray, first: int, last: int,
            sign: float = 1.0) -> None:
        """Add (or with ``sign=-1`` remove) ``amounts[k, i]`` of resource ``k`` on
        ``nodes[i]`` over absolute slots ``[first, last)`` (clipped to held slots)."""
        first = max(first, self.base)
        if last <= first:
            return
        self.ensure(last)
        a, b = first - self.base, last - self.base
        self.up[:, nodes, a:b] += sign * amounts[:, :, None]


def _free_from(up: FloatArray, a: int, out: IntArray) -> None:
    """``out[v]``: one past the last column ``≥ a`` where node ``v`` holds something
    (``a`` when none), scanning back from the end."""
    n_res, n_nodes, held = up.shape
    for v in range(n_nodes):
        out[v] = a
        t = held - 1
        while t >= a:
            busy = False
            for k in range(n_res):
                if up[k, v, t] > 1e-9:
                    busy = True
                    break
            if busy:
                out[v] = t + 1
                break
            t -= 1
