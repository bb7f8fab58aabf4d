"""Free capacity as a step function of time, for greedy list schedules.

Times are relative to the decision time (0 = now). Segment ``k`` covers
``[times[k], times[k+1])`` (the last one is open-ended) and ``free[k]`` holds the free
capacity of every node then (nodes × resources; one "node" for pooled models). The
greedy schedule inserts jobs one by one at their earliest feasible start — the priority
list schedule that serves as CP-SAT hint, as fallback and as optimality witness.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


class Timeline:
    """Per-node free capacity over time, starting from the free capacity now."""

    __slots__ = ("free", "scale", "times")

    def __init__(self, free_now: IntArray, releases: list[tuple[int, IntArray]], scale: FloatArray):
        """``releases``: ``(time, usage)`` pairs — usage (nodes × resources) freed then."""
        times = sorted({t for t, _ in releases if t > 0})
        self.times: list[int] = [0, *times]
        free = np.repeat(free_now[None, :, :], len(self.times), axis=0)
        for t, usage in releases:
            if t > 0:
                free[bisect_left(self.times, t) :] += usage
        self.free: IntArray = free
        self.scale = scale

    def _split(self, t: int) -> int:
        """Make ``t`` a breakpoint; return its segment index."""
        k = bisect_right(self.times, t) - 1
        if self.times[k] == t:
            return k
        self.times.insert(k + 1, t)
        self.free = np.insert(self.free, k + 1, self.free[k], axis=0)
        return k + 1

    def reserve(
        self, start: int, duration: int, nodes: IntArray, counts: IntArray, req: IntArray
    ) -> None:
        """Take ``counts × req`` on ``nodes`` during ``[start, start + duration)``."""
        a = self._split(start)
        b = self._split(start + duration)
        self.free[a:b, nodes, :] -= counts[:, None] * req[None, :]

    def earliest(
        self, req: IntArray, units: int, duration: int, allowed: IntArray | None = None
    ) -> tuple[int, IntArray, IntArray]:
        """Earliest start of ``units`` units of ``req`` for ``duration``, and a best-fit
        placement ``(start, nodes, counts)`` (nodes increasing). ``allowed`` masks nodes."""
        mask = req > 0
        r = req[mask]
        fits = (self.free[:, :, mask] // r).min(axis=2)  # segments × nodes
        if allowed is not None:
            fits = fits * allowed[None, :]
        totals = fits.sum(axis=1)
        times = self.times
        n_seg = len(times)
        for k in range(n_seg):
            if totals[k] < units:
                continue
            end = times[k] + duration
            last = bisect_left(times, end, lo=k + 1)
            window = fits[k:last].min(axis=0) if last > k + 1 else fits[k]
            if int(window.sum()) >= units:
                minfree = self.free[k:last].min(axis=0) if last > k + 1 else self.free[k]
                nodes, counts = _best_fit(minfree, req, window, units, self.scale)
                return times[k], nodes, counts
        raise ValueError("job does not fit even on the released machine")


def _best_fit(
    free: IntArray, req: IntArray, fit: IntArray, units: int, scale: FloatArray
) -> tuple[IntArray, IntArray]:
    """Fill the nodes left with the least normalized free capacity first."""
    cand = np.flatnonzero(fit)
    left = (free[cand] - fit[cand, None] * req[None, :]) @ scale
    nodes = cand[np.argsort(left, kind="stable")]
    cum = np.cumsum(fit[nodes])
    last = int(np.searchsorted(cum, units))
    nodes = nodes[: last + 1]
    counts = fit[nodes].astype(np.int64)
    counts[-1] -= int(cum[last]) - units
    order = np.argsort(nodes)
    return nodes[order].astype(np.int64), counts[order]
