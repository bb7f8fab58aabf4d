"""Free capacity over time for the CP dispatchers' greedy list schedules.

The shared :class:`~dispatchlab.dispatchers.capacity_timeline.CapacityTimeline`, in times
relative to the decision (0 = now), with the CP dispatchers' own placement: best fit by
normalized free capacity left. The greedy schedule inserts jobs one by one at their
earliest feasible start — the priority list schedule that serves as CP-SAT hint, as
fallback and as optimality witness.
"""

from __future__ import annotations

import numpy as np

from dispatchlab.arrays import FloatArray, IntArray
from dispatchlab.dispatchers.capacity_timeline import CapacityTimeline


class Timeline(CapacityTimeline):
    """Per-node free capacity over time from the free capacity now (relative times)."""

    __slots__ = ("scale",)

    def __init__(self, free_now: IntArray, releases: list[tuple[int, IntArray]], scale: FloatArray):
        """``releases``: ``(time, usage)`` pairs — usage (nodes × resources) freed then."""
        super().__init__(free_now, 0, releases)
        self.scale = scale

    def reserve(
        self, start: int, duration: int, nodes: IntArray, counts: IntArray, req: IntArray
    ) -> None:
        """Take ``counts × req`` on ``nodes`` during ``[start, start + duration)``."""
        self.take(start, start + duration, nodes, counts, req)

    def earliest_fit(
        self, req: IntArray, units: int, duration: int, allowed: IntArray | None = None
    ) -> tuple[int, IntArray, IntArray]:
        """Earliest start of ``units`` units of ``req`` for ``duration``, and a best-fit
        placement ``(start, nodes, counts)`` (nodes increasing). ``allowed`` masks nodes."""

        def place(room: IntArray, t: int) -> tuple[IntArray, IntArray] | None:
            fit = fit_units(room, req)
            if allowed is not None:
                fit = fit * allowed
            if int(fit.sum()) < units:
                return None
            return best_fit(room, req, fit, units, self.scale)

        got = self.earliest(duration, place, need=(req, units))
        if got is None:
            raise ValueError("job does not fit even on the released machine")
        t, (nodes, counts) = got
        return t, nodes, counts


def fit_units(free: IntArray, req: IntArray) -> IntArray:
    """Units of ``req`` fitting on each node of ``free`` (never negative)."""
    mask = req > 0
    return np.maximum((free[:, mask] // req[mask]).min(axis=1), 0).astype(np.int64)


def best_fit(
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
