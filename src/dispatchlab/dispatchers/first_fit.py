"""First-fit placement of a job's units on nodes in index order."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]


def units_per_node(free: IntArray, req: IntArray) -> IntArray:
    """How many units asking ``req`` fit on each node given ``free`` (nodes × resources)."""
    mask = req > 0
    if int(mask.sum()) == 1:
        r = int(mask.argmax())
        return free[:, r] // req[r]
    return np.asarray((free[:, mask] // req[mask]).min(axis=1), dtype=np.int64)


def first_fit(free: IntArray, req: IntArray, units: int) -> tuple[IntArray, IntArray] | None:
    """Lowest-index nodes with room for ``units`` units, several per node when they fit.

    Returns ``(nodes, counts)`` or ``None`` when the units do not fit now.
    """
    per_node = units_per_node(free, req)
    cum = np.cumsum(per_node)
    last = int(np.searchsorted(cum, units))
    if last >= len(cum):
        return None
    nodes = np.flatnonzero(per_node[: last + 1])
    counts = per_node[nodes]
    counts[-1] -= int(cum[last]) - units
    return nodes, counts
