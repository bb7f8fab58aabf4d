"""Task-manager policies: pick one start offered by enough nodes, and the nodes
(thesis §5.3.2–5.3.5, SPEC §5).

The node managers' answers are a mask ``offered`` (nodes × candidate starts) with the
fitting index ``I`` beside it; node ``n`` can host ``floor(I[n, s])`` units at start
``s``. A start is *feasible* when the units its offering nodes can host sum to the job's
``u``. Policies:

- **Min start**: the earliest feasible start; nodes in index order (first-fit).
- **Max probability**: the feasible start with the largest ``Σ_n I[n, s]`` over offering
  nodes; nodes by decreasing ``I[n, s]``.
- **Random**: a feasible start drawn uniformly; nodes in random order.

Units are packed on the chosen nodes up to ``floor(I)`` each.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dispatchlab.arrays import BoolArray, FloatArray, IntArray


@dataclass(frozen=True, slots=True)
class Choice:
    """A candidate start (its column) and the placement: nodes (increasing) × units."""

    start: int
    nodes: IntArray
    counts: IntArray


def hostable(index: FloatArray, offered: BoolArray, units: int) -> IntArray:
    """Units each node can host at each start it offered (0 elsewhere)."""
    return np.where(offered, np.clip(np.floor(index), 0, units), 0).astype(np.int64)


def pack(order: IntArray, host: IntArray, units: int) -> tuple[IntArray, IntArray]:
    """Fill nodes in ``order`` up to ``host`` units each until ``units`` are placed."""
    cap = host[order]
    keep = cap > 0
    order, cap = order[keep], cap[keep]
    before = np.cumsum(cap) - cap
    take = np.clip(units - before, 0, cap)
    used = take > 0
    nodes, counts = order[used], take[used]
    perm = np.argsort(nodes)
    return nodes[perm], counts[perm]


def _feasible(host: IntArray, units: int) -> IntArray:
    return np.flatnonzero(host.sum(axis=0) >= units)


def min_start(index: FloatArray, offered: BoolArray, units: int,
              rng: np.random.Generator) -> Choice | None:
    """Earliest feasible start, first-fit nodes."""
    host = hostable(index, offered, units)
    ok = _feasible(host, units)
    if not len(ok):
        return None
    s = int(ok[0])
    nodes, counts = pack(np.arange(host.shape[0]), host[:, s], units)
    return Choice(s, nodes, counts)


def max_probability(index: FloatArray, offered: BoolArray, units: int,
                    rng: np.random.Generator) -> Choice | None:
    """Feasible start of largest total index, nodes of largest index first."""
    host = hostable(index, offered, units)
    ok = _feasible(host, units)
    if not len(ok):
        return None
    score = np.where(offered[:, ok], np.maximum(index[:, ok], 0.0), 0.0).sum(axis=0)
    s = int(ok[int(np.argmax(score))])
    col = np.where(offered[:, s], index[:, s], -np.inf)
    order = np.argsort(-col, kind="stable")
    nodes, counts = pack(order, host[:, s], units)
    return Choice(s, nodes, counts)


def random_choice(index: FloatArray, offered: BoolArray, units: int,
                  rng: np.random.Generator) -> Choice | None:
    """A feasible start and node order, both uniformly at random."""
    host = hostable(index, offered, units)
    ok = _feasible(host, units)
    if not len(ok):
        return None
    s = int(ok[int(rng.integers(len(ok)))])
    nodes, counts = pack(rng.permutation(host.shape[0]), host[:, s], units)
    return Choice(s, nodes, counts)


Policy = Callable[[FloatArray, BoolArray, int, np.random.Generator], "Choice | None"]
POLICIES: dict[str, Policy] = {
    "min-start": min_start,
    "max-probability": max_probability,
    "random": random_choice,
}


def get_policy(name: str) -> Policy:
    """A task-manager policy by name."""
    if name not in POLICIES:
        raise ValueError(f"unknown task-manager policy '{name}' (known: {', '.join(POLICIES)})")
    return POLICIES[name]
