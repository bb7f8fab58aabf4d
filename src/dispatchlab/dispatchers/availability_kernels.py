"""The compiled test behind :meth:`NodeAvailability.may_start_before
<dispatchlab.dispatchers.availability.NodeAvailability.may_start_before>` (plain Python when
Numba is missing or disabled): a compression asks it of every queued reservation."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dispatchlab.numba_loader import compiled


def run_before(times: Any, total: Any, power: Any, k: int, units: int, room: float,
               dur: int) -> bool:
    """Whether some segment before ``k`` holding ``units`` units in all (``total``) with
    its ``power`` at most ``room`` begins a run of such segments lasting ``dur`` seconds
    or reaching segment ``k``."""
    first = -1  # first segment of the current run (-1: not in one)
    for j in range(k):
        if total[j] >= units and power[j] <= room:
            if first < 0:
                first = j
        elif first >= 0:
            if times[j] - times[first] >= dur:
                return True
            first = -1
    return first >= 0


def _warm(fn: Callable[..., Any]) -> None:
    """Compile ``fn`` now for both power kinds (unit counts, watts)."""
    one = np.ones(1, np.int64)
    fn(one, one, one, 1, 1, np.inf, 1)
    fn(one, one, np.ones(1), 1, 1, 1.0, 1)


def run_kernel() -> Callable[..., Any]:
    """:func:`run_before`, compiled when Numba is available."""
    return compiled(run_before, warm=_warm, fallback=run_before)
