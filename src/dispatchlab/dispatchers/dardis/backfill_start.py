"""Backfilling's question to a job's own nodes, answered in one pass: the earliest
candidate start at which every node hosts its units again (thesis §5.3.3), read from the
usage grid at an offset (no copy of the job's nodes' window).

:func:`~dispatchlab.dispatchers.dardis.fitting.common_starts` answers it for every
candidate at once with numpy over the whole span (the job's own reservation taken out of
the grid first and put back when it does not move). :func:`first_common_start` reads the
grid as it is, leaves the job's own amounts out on the fly, and walks the candidates in
order, testing each slot once and stopping at the first fit: the same answer (the same
floating-point operations on each slot; the grid holds whole amounts, so taking a
reservation out and putting it back is exact) for a fraction of the work. Compiled with
Numba through :mod:`dispatchlab.numba_loader` (plain Python otherwise: the same
operations).
"""

from __future__ import annotations

import math

import numpy as np

from dispatchlab.arrays import FloatArray, IntArray
from dispatchlab.numba_loader import compiled


def _first_common_start(up: FloatArray, a0: int, nodes: IntArray, own: FloatArray,
                        own_lo: int, own_hi: int, cap: FloatArray, share: FloatArray,
                        s0: int, use_share: bool, req: FloatArray, counts: IntArray,
                        n_starts: int, width: int, first_width: int) -> int:
    """The first candidate start (index) whose slots all host ``counts[i]`` on every
    ``nodes[i]``, or −1. ``up``: resources × nodes × held slots of the grid, candidate 0's
    slot at column ``a0``, the job's own reservation still in it over window slots
    ``[own_lo, own_hi)`` with ``own`` (resources × the job's nodes) per slot; ``cap``:
    nodes × resources; ``share``: resources × slots, candidate 0's slot at column ``s0``
    (read when ``use_share``). Candidate ``i`` covers slots ``[i, i + width)`` (clipped
    to the span), candidate 0 ``[0, first_width)``, as
    :func:`~dispatchlab.dispatchers.dardis.fitting.common_starts`."""
    n_res = up.shape[0]
    n_nodes = len(nodes)
    need = n_starts - 1 + max(width, first_width)
    last_bad = -1
    done = 0
    for i in range(n_starts):
        end = first_width if i == 0 else min(i + width, need)
        while done < end:
            t = done
            for v in range(n_nodes):
                node = nodes[v]
                room = math.inf
                for k in range(n_res):
                    if req[k] > 0:
                        used = up[k, node, a0 + t]
                        if own_lo <= t < own_hi:
                            used = used - own[k, v]
                        limit = cap[node, k]
                        if use_share:
                            limit = min(cap[node, k] * share[k, s0 + t], cap[node, k])
                        room = min(room, (limit - used) / req[k])
                if math.floor(room) < counts[v]:
                    last_bad = t
                    break
            done += 1
        if last_bad < i:
            return i
    return -1


def first_common_start(up: FloatArray, a0: int, nodes: IntArray, own: FloatArray,
                       own_lo: int, own_hi: int, cap: FloatArray, share: FloatArray | None,
                       s0: int, req: FloatArray, counts: IntArray, n_starts: int, width: int,
                       first_width: int) -> int:
    """See :func:`_first_common_start` (``share=None``: capacity only)."""
    fn = compiled(_first_common_start, fallback=_first_common_start)
    use = share is not None
    sh = share if share is not None else np.zeros((1, 1))
    return int(fn(up, a0, nodes, own, own_lo, own_hi, cap, sh, s0, use, req, counts,
                  n_starts, width, first_width))
