"""One protocol round of the First generator and the Min start policy, stopping at the
earliest feasible start (thesis §5.3.2–5.3.3; DARDIS Throughput and the hybrid
pipeline's DARDIS).

With First, each node offers its ``count`` earliest starts of fitting index ≥ 1; Min
start takes the earliest start whose offering nodes host the job's units. Both only look
forward in time, so the round can stop at that start: the fitting index is computed in
chunks of candidate starts (doubling from ``max(64, duration)``), each chunk for every
usable node with the same operations as
:func:`~dispatchlab.dispatchers.dardis.fitting_kernel.grid_fitting_index`, and the chunk's
starts are walked in order with each node's running count of offers. The answer is the
start and the units per node that ``index → first() → min_start()`` give on the whole
window (``tests/dardis/test_first_min_start.py``); a job that fits early in a long window
no longer pays for the rest of it.
"""

from __future__ import annotations

import numpy as np

from dispatchlab.arrays import BoolArray, FloatArray, IntArray
from dispatchlab.dispatchers.dardis.fitting_kernel import HELPERS, _chunk_index
from dispatchlab.numba_loader import compiled

#: The first chunk's number of candidate starts (at least the duration in slots).
FIRST_CHUNK = 64


def _first_min_start(up: FloatArray, a0: int, share: FloatArray, s0: int, use_share: bool,
                     cap: FloatArray, alive: BoolArray, req: FloatArray, units: int,
                     count: int, n_starts: int, width: int, first_width: int,
                     host: IntArray) -> int:
    """The earliest candidate start (index) that the ``count`` earliest offers of every
    usable node make feasible, with ``host`` (per node) set to the units each node
    offers there; −1 when none. Arguments as
    :func:`~dispatchlab.dispatchers.dardis.fitting_kernel._grid_fitting_index`."""
    n_nodes = up.shape[1]
    chunk = max(FIRST_CHUNK, width)
    offers = np.zeros(n_nodes, dtype=np.int64)
    c0 = 0
    while c0 < n_starts:
        m = min(chunk, n_starts - c0)
        index = np.empty((n_nodes, m))
        _chunk_index(up, a0, share, s0, use_share, cap, req, alive, c0, m, width,
                     first_width, index)
        for i in range(m):
            total = 0
            for v in range(n_nodes):
                h = 0
                if alive[v] and index[v, i] >= 1:
                    offers[v] += 1
                    if offers[v] <= count:
                        h = int(min(np.floor(index[v, i]), units))
                host[v] = h
                total += h
            if total >= units:
                return c0 + i
        c0 += m
        chunk *= 2
    return -1


def first_min_start(up: FloatArray, a0: int, share: FloatArray | None, s0: int,
                    cap: FloatArray, alive: BoolArray, req: FloatArray, units: int,
                    count: int, n_starts: int, width: int, first_width: int
                    ) -> tuple[int, IntArray, IntArray] | None:
    """The round's choice: the start (index) and the nodes (increasing) × units, packed
    first-fit up to each node's offer, or ``None`` when no start is feasible."""
    if not (req > 0).any():
        raise ValueError("a unit must ask for some resource")
    fn = compiled(_first_min_start, helpers=HELPERS,
                  fallback=_first_min_start)
    host = np.zeros(up.shape[1], dtype=np.int64)
    sh = share if share is not None else np.zeros((1, 1))
    s = int(fn(up, a0, sh, s0, share is not None, cap, alive, req, units, count, n_starts,
               width, first_width, host))
    if s < 0:
        return None
    before = np.cumsum(host) - host
    take = np.clip(units - before, 0, host)
    nodes = np.flatnonzero(take > 0)
    return s, nodes, take[nodes]
