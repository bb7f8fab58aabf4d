"""Placing a whole job — every component of a heterogeneous job, each on what the previous
ones left — with the dispatcher's allocator, as operator rules require."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dispatchlab.arrays import IntArray
from dispatchlab.dispatchers.allocators import Allocator
from dispatchlab.engine.constraints import Constraints

if TYPE_CHECKING:
    from dispatchlab.dispatchers.availability import LiveRequests

#: Per component of a job: (component job index, nodes, unit counts); the job comes first.
GroupPlacement = list[tuple[int, IntArray, IntArray]]


def place_all(rules: Constraints, alloc: Allocator, req: IntArray | LiveRequests | Any,
              units: list[int], job: int, free: IntArray) -> GroupPlacement | None:
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
