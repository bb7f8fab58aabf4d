"""Backfilling's question to a job's own nodes, answered in one pass: the earliest
candidate start at which every node hosts its units again (thesis §5.3.3).

:func:`~dispatchlab.dispatchers.dardis.fitting.common_starts` answers it for every
candidate at once with numpy over the whole span (the job's own reservation taken out of
the grid first and put back when it does not move). :func:`first_common_start` reads the
grid as it is, leaves the job's own amounts out on the fly, and walks the candidates in
order, testing each slot once and stopping at the first fit: the same answer (the same
floating-point operations on each slot; the grid holds whole amounts, so taking a
reservation out and putting it back is exact) for a fraction of the work. Compiled with
Numba when available (plain Python otherwise: the same operations).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from dispatchlab.arrays import FloatArray, IntArray
from dispatchlab.engine.kernels import COMPILED


def _first_common_start(up: FloatArray, own: FloatArray, own_lo: int, own_hi: int,
                        cap: FloatArray, share: FloatArray, use_share: bool, req: FloatArray,
                        counts: IntArray, n_starts: int, width: int, first_width: int) -> int:
    """The first candidate start (index) whose slots all host ``counts`` on every node,
    or −1. ``up``: resources × nodes × slots of the window (candidate 0's slot first),
    the job's own reservation still in it over window slots ``[own_lo, own_hi)`` with
    ``own`` (resources × nodes) per slot; ``cap``: nodes × resources; ``share``:
    resources × slots (read when ``use_share``). Candidate ``i`` covers slots
    ``[i, i + width)`` (clipped to the span), candidate 0 ``[0, first_width)``, as
    :func:`~dispatchlab.dispatchers.dardis.fitting.common_starts`."""
    n_res, n_nodes, _ = up.shape
    need = n_starts - 1 + max(width, first_width)
    last_bad = -1
    done = 0
    for i in range(n_starts):
        end = first_width if i == 0 else min(i + width, need)
        while done < end:
            t = done
            for v in range(n_nodes):
                room = math.inf
                for k in range(n_res):
                    if req[k] > 0:
                        used = up[k, v, t]
                        if own_lo <= t < own_hi:
                            used = used - own[k, v]
                        limit = cap[v, k]
                        if use_share:
                            limit = min(cap[v, k] * share[k, t], cap[v, k])
                        room = min(room, (limit - used) / req[k])
                if math.floor(room) < counts[v]:
                    last_bad = t
                    break
            done += 1
        if last_bad < i:
            return i
    return -1


_COMPILED: list[Callable[..., int]] = []


def first_common_start(up: FloatArray, own: FloatArray, own_lo: int, own_hi: int,
                       cap: FloatArray, share: FloatArray | None, req: FloatArray,
                       counts: IntArray, n_starts: int, width: int, first_width: int) -> int:
    """See :func:`_first_common_start` (``share=None``: capacity only)."""
    if not _COMPILED:
        fn: Any = _first_common_start
        if COMPILED:
            import numba

            fn = numba.njit(cache=True, nogil=True)(_first_common_start)
        _COMPILED.append(fn)
    use = share is not None
    sh = share if share is not None else np.zeros((1, 1))
    return int(_COMPILED[0](up, own, own_lo, own_hi, cap, sh, use, req, counts,
                            n_starts, width, first_width))
