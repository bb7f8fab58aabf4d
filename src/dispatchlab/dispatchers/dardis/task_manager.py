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


Policy = Callable[[FloatArray, BoolArray, int, np.random.Generator], "Choice | None"]
#: A policy's own part: given the index, the offers, the hostable units and the feasible
#: starts (non-empty), the chosen start and the order its nodes are filled in.
Pick = Callable[[FloatArray, BoolArray, IntArray, IntArray, np.random.Generator],
                tuple[int, IntArray]]


def policy(pick: Pick) -> Policy:
    """A task-manager policy from its choice of start and node order: no choice when no
    start is feasible; units packed on the nodes in that order."""

    def choose(index: FloatArray, offered: BoolArray, units: int,
               rng: np.random.Generator) -> Choice | None:
        host = hostable(index, offered, units)
        ok = np.flatnonzero(host.sum(axis=0) >= units)
        if not len(ok):
            return None
        s, order = pick(index, offered, host, ok, rng)
        nodes, counts = pack(order, host[:, s], units)
        return Choice(s, nodes, counts)

    choose.__doc__ = pick.__doc__
    return choose


@policy
def min_start(index: FloatArray, offered: BoolArray, host: IntArray, ok: IntArray,
              rng: np.random.Generator) -> tuple[int, IntArray]:
    """Earliest feasible start, first-fit nodes."""
    return int(ok[0]), np.arange(host.shape[0])


@policy
def max_probability(index: FloatArray, offered: BoolArray, host: IntArray, ok: IntArray,
                    rng: np.random.Generator) -> tuple[int, IntArray]:
    """Feasible start of largest total index, nodes of largest index first."""
    score = np.where(offered[:, ok], np.maximum(index[:, ok], 0.0), 0.0).sum(axis=0)
    s = int(ok[int(np.argmax(score))])
    col = np.where(offered[:, s], index[:, s], -np.inf)
    return s, np.argsort(-col, kind="stable")


@policy
def random_choice(index: FloatArray, offered: BoolArray, host: IntArray, ok: IntArray,
                  rng: np.random.Generator) -> tuple[int, IntArray]:
    """A feasible start and node order, both uniformly at random."""
    return int(ok[int(rng.integers(len(ok)))]), rng.permutation(host.shape[0])


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
