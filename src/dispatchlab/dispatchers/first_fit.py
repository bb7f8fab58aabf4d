"""First-fit placement of a job's units on nodes in index order."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from dispatchlab.engine.kernels import first_fit_nodes

IntArray = npt.NDArray[np.int64]


def units_per_node(free: IntArray, req: IntArray) -> IntArray:
    """How many units asking ``req`` fit on each node given ``free`` (nodes × resources)."""
    mask = req > 0
    if int(mask.sum()) == 1:
        r = int(mask.argmax())
        q = int(req[r])
        return free[:, r] if q == 1 else free[:, r] // q
    return np.asarray((free[:, mask] // req[mask]).min(axis=1), dtype=np.int64)


def first_fit(free: IntArray, req: IntArray, units: int) -> tuple[IntArray, IntArray] | None:
    """Lowest-index nodes with room for ``units`` units, several per node when they fit.

    Returns ``(nodes, counts)`` (nodes increasing) or ``None`` when the units do not fit now.
    """
    nodes, counts = first_fit_nodes(free, req, units)
    if len(nodes) == 0:
        return None
    return nodes, counts
