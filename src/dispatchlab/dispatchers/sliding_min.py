"""The minimum of every window of a row, with a monotone queue: ``O(len)`` for any window
width, plain Python that Numba compiles into its callers (the DARDIS fitting index, the
offline planner's earliest start)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from dispatchlab.arrays import IntArray


def queue_window_min(row: npt.NDArray[np.generic], n: int, width: int,
                     out: npt.NDArray[np.generic], queue: IntArray) -> None:
    """``out[i] = min(row[i:i + width])`` for ``i < n`` (``row`` holds at least
    ``n − 1 + width`` values; ``queue`` as many slots)."""
    head = 0
    tail = 0
    for t in range(n - 1 + width):
        x = row[t]
        while tail > head and row[queue[tail - 1]] >= x:
            tail -= 1
        queue[tail] = t
        tail += 1
        i = t - width + 1
        if i >= 0:
            while queue[head] < i:
                head += 1
            out[i] = row[queue[head]]
