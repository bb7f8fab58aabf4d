"""First-fit placement of a job's units on nodes in index order."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from dispatchlab.engine import kernels

IntArray = npt.NDArray[np.int64]


def first_fit(free: IntArray, req: IntArray, units: int) -> tuple[IntArray, IntArray] | None:
    """Lowest-index nodes with room for ``units`` units, several per node when they fit.

    Returns ``(nodes, counts)`` (nodes increasing) or ``None`` when the units do not fit now.
    """
    nodes, counts = kernels.first_fit_nodes(free, req, units)
    if len(nodes) == 0:
        return None
    return nodes, counts
