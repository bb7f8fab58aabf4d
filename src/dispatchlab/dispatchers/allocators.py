"""Allocators: which nodes host a job's units, several units per node when they fit.

Every allocator ranks the nodes with room for at least one unit and fills them in that
order, each with as many units as it can hold, until the job's units are placed. They
differ only in the ranking:

- ``first-fit``: node index order.
- ``best-fit``: least free capacity left on the node after placing the job's units
  there (as many as fit, at most the job's) first.
- ``worst-fit`` (alias ``spread``): most free capacity left first.
- ``energy``: lowest power rating first (``Platform.node_power``), then most loaded.
- ``energy-model``: least marginal power of one more unit under the platform's node power
  model first, then most loaded.

"Free capacity left" sums every resource of the node, each normalized by the largest
node capacity of that resource, so idle GPUs count as waste when a CPU-only job lands on a
GPU node. Ties always go to the lower node index, so allocations are reproducible.
"""

from __future__ import annotations

import numpy as np

from dispatchlab.arrays import FloatArray, IntArray
from dispatchlab.engine import kernels
from dispatchlab.engine.state import SystemView
from dispatchlab.errors import ConfigError
from dispatchlab.params import Parametrized
from dispatchlab.platform.platform import units_fitting

Placement = tuple[IntArray, IntArray]



def first_fit(free: IntArray, req: IntArray, units: int) -> tuple[IntArray, IntArray] | None:
    """Lowest-index nodes with room for ``units`` units, several per node when they fit:
    ``(nodes, counts)`` (nodes increasing), or ``None`` when the units do not fit now."""
    nodes, counts = kernels.first_fit_nodes(free, req, units)
    if len(nodes) == 0:
        return None
    return nodes, counts

class Allocator(Parametrized):
    """Base class: ``place(free, req, units)`` returns ``(nodes, counts)`` or ``None``."""

    name = "allocator"

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """Per-run preparation (node weights); nothing by default."""

    def place(self, free: IntArray, req: IntArray, units: int) -> Placement | None:
        """Nodes and unit counts for ``units`` units asking ``req`` each, within ``free``."""
        raise NotImplementedError


class FirstFit(Allocator):
    """Lowest node index first."""

    name = "first-fit"

    #: First-fit in index order (the function itself: one call less per start).
    place = staticmethod(first_fit)


class _Ranked(Allocator):
    """Fill nodes in the order of :meth:`_rank` (call :meth:`reset` first)."""

    def __init__(self) -> None:
        self._scale: FloatArray = np.ones(1)

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """Normalize each resource by its largest node capacity."""
        top = view.platform.capacity.max(axis=0).astype(np.float64)
        self._scale = 1.0 / np.where(top > 0, top, 1.0)

    def _left(self, free: IntArray, req: IntArray, take: IntArray) -> FloatArray:
        """Normalized free capacity each node keeps after taking ``take`` units."""
        left = free - take[:, None] * req
        return np.asarray(left @ self._scale, dtype=np.float64)

    def _rank(self, nodes: IntArray, free: IntArray, req: IntArray, take: IntArray) -> IntArray:
        """Positions of the candidate ``nodes`` (rows of ``free``) in filling order."""
        raise NotImplementedError

    def place(self, free: IntArray, req: IntArray, units: int) -> Placement | None:
        """Rank the nodes with room and fill them in rank order."""
        fit = units_fitting(free, req)
        cand = np.flatnonzero(fit)
        if int(fit[cand].sum()) < units:
            return None
        nodes = cand[self._rank(cand, free[cand], req, np.minimum(fit[cand], units))]
        return fill_in_order(nodes, fit[nodes], units)


class BestFit(_Ranked):
    """The node left with the least free capacity first (packs jobs tightly)."""

    name = "best-fit"

    def _rank(self, nodes: IntArray, free: IntArray, req: IntArray, take: IntArray) -> IntArray:
        return np.argsort(self._left(free, req, take), kind="stable")


class WorstFit(_Ranked):
    """The node left with the most free capacity first (spreads jobs out)."""

    name = "worst-fit"

    def _rank(self, nodes: IntArray, free: IntArray, req: IntArray, take: IntArray) -> IntArray:
        return np.argsort(-self._left(free, req, take), kind="stable")


class EnergyFirst(_Ranked):
    """Lowest power rating first, then the most loaded node (power paper §4)."""

    name = "energy"

    def __init__(self) -> None:
        super().__init__()
        self._power: FloatArray | None = None

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """Read the node power ratings (all equal when the platform has none)."""
        super().reset(view, rng)
        self._power = view.platform.node_power

    def _rank(self, nodes: IntArray, free: IntArray, req: IntArray, take: IntArray) -> IntArray:
        load = np.asarray(free @ self._scale, dtype=np.float64)  # free now: small = loaded
        if self._power is None:
            return np.argsort(load, kind="stable")
        return np.lexsort((load, self._power[nodes]))


class MarginalPowerFirst(EnergyFirst):
    """Node where one more unit of the job adds the least power first (the platform's node
    model: a node with busy cores spares the job the costlier first core; idle power is
    drawn either way), then the most loaded; as ``energy`` when the platform has no model."""

    name = "energy-model"

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """Read the node power model."""
        super().reset(view, rng)
        self._table = view.platform.power_table
        self._cap = view.platform.capacity

    def _rank(self, nodes: IntArray, free: IntArray, req: IntArray, take: IntArray) -> IntArray:
        if self._table is None:
            return super()._rank(nodes, free, req, take)
        load = np.asarray(free @ self._scale, dtype=np.float64)
        used = self._cap[nodes] - free
        extra = self._table.active(nodes, used + req) - self._table.active(nodes, used)
        return np.lexsort((load, np.round(extra, 9)))


def fill_in_order(nodes: IntArray, fit: IntArray, units: int) -> Placement:
    """Fill nodes in the given order until ``units`` units are placed.

    Returns the placement with nodes increasing, as the engine expects.
    """
    cum = np.cumsum(fit)
    last = int(np.searchsorted(cum, units))
    counts = fit[: last + 1].copy()
    counts[-1] -= int(cum[last]) - units
    chosen = nodes[: last + 1]
    order = np.argsort(chosen)
    return chosen[order], counts[order]


ALLOCATORS: dict[str, type[Allocator]] = {
    "first-fit": FirstFit,
    "best-fit": BestFit,
    "worst-fit": WorstFit,
    "spread": WorstFit,
    "energy": EnergyFirst,
    "energy-model": MarginalPowerFirst,
}


def get_allocator(name: str) -> Allocator:
    """A new allocator by name (see :data:`ALLOCATORS`)."""
    try:
        return ALLOCATORS[name]()
    except KeyError:
        known = ", ".join(ALLOCATORS)
        raise ConfigError(f"unknown allocator '{name}' (known: {known})", field="alloc") from None
