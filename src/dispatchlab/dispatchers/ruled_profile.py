"""Placement under operator rules: whole heterogeneous jobs, eligibility, node masks.

:func:`place_all` places a job — every component of a heterogeneous job, each on what the
previous ones left — with the dispatcher's allocator. :class:`RuledNodeProfile` is the
conservative-backfilling profile whose earliest fit also requires the job to be eligible
at its start (queue window open, queue not stopped) and to use only the nodes it may use
then (its wall-time must not run into a reservation).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Any

import numpy as np
import numpy.typing as npt

from dispatchlab.dispatchers.allocators import Allocator
from dispatchlab.dispatchers.profile import NodeProfile
from dispatchlab.engine.constraints import Constraints

IntArray = npt.NDArray[np.int64]
#: Per component of a job: (component job index, nodes, unit counts); the job comes first.
GroupPlacement = list[tuple[int, IntArray, IntArray]]

_FAR = 1 << 62
_MAX_STEPS = 100_000


def place_all(rules: Constraints, alloc: Allocator, req: IntArray, units: list[int], job: int,
              free: IntArray) -> GroupPlacement | None:
    """Place ``job`` (all its components, the most constrained first) within ``free``, or
    ``None`` when it does not fit."""
    comps = rules.components.get(job)
    if comps is None:
        placed = alloc.place(free, req[job], units[job])
        return None if placed is None else [(job, placed[0], placed[1])]
    for order in rules.placement_orders[job]:
        left = free.copy()
        out: GroupPlacement = []
        for comp in order:
            placed = alloc.place(left, req[comp], units[comp])
            if placed is None:
                break
            nodes, counts = placed
            left[nodes] -= counts[:, None] * req[comp]
            out.append((comp, nodes, counts))
        else:
            out.sort(key=lambda part: part[0] != job)  # the job itself first
            return out
    return None


class RuledNodeProfile(NodeProfile):
    """A :class:`NodeProfile` whose earliest fits honour queue rules and reservations."""

    __slots__ = ("rules",)

    def __init__(self, capacity: IntArray, req: IntArray, units: list[int], alloc: Allocator,
                 rules: Constraints):
        super().__init__(capacity, req, units, alloc)
        self.rules = rules

    def take(self, job: int, t0: int, t1: int, placement: Any) -> None:
        """Occupy a placement (a component list for a heterogeneous job)."""
        for comp, nodes, counts in _parts(job, placement):
            self._add(t0, t1, (nodes, counts), self.req[comp], -1)

    def give(self, job: int, t0: int, t1: int, placement: Any) -> None:
        """Free a placement (a component list for a heterogeneous job)."""
        for comp, nodes, counts in _parts(job, placement):
            self._add(t0, t1, (nodes, counts), self.req[comp], 1)

    def earliest(self, job: int, dur: int, before: int | None = None
                 ) -> tuple[int, Any] | None:
        """Earliest eligible start ``< before`` where the job fits its allowed nodes."""
        rules, times, free = self.rules, self.times, self.free
        t = times[0]
        for _ in range(_MAX_STEPS):
            t = rules.next_eligible(job, t)
            if t >= _FAR or (before is not None and t >= before):
                return None
            i = bisect_right(times, t) - 1
            e = max(bisect_left(times, t + dur), i + 1)
            room = free[i:e].min(axis=0)
            mask = rules.allowed_nodes(job, t)
            if mask is not None:
                room = np.where(mask[:, None], room, 0)
            placed = place_all(rules, self.alloc, self.req, self.units, job, room)
            if placed is not None:
                return t, placed
            nxt = min(times[i + 1] if i + 1 < len(times) else _FAR, rules.next_change(t))
            if nxt >= _FAR:
                return None
            t = nxt
        return None


def _parts(job: int, placement: Any) -> GroupPlacement:
    if isinstance(placement, list):
        return placement
    nodes, counts = placement
    return [(job, nodes, counts)]
