"""EASY's queue index: the queued jobs by rank in a segment tree holding, per subtree, the
fewest units, the shortest estimate and the least power any of its jobs asks, so a backfill
scan jumps from one job that may start to the next (near-linear on long, blocked queues).

Plain functions on arrays, compiled into the loops (:mod:`.start_scan`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dispatchlab.engine.compiled.slot_availability_ops import bisect_left

#: Tolerance of the power cap check (W), as :data:`dispatchlab.engine.budget.EPS`.
EPS = 1e-6


#: The queue index's value for a rank with no queued job.
ABSENT = 1 << 62


def idx_new(n: int, indexed: bool, power: bool) -> Any:
    """An empty queue index for ``n`` jobs (arrays of length 0 when not ``indexed``; the
    power minima only with ``power``): ``(size, units, estimates, power)``."""
    size = 1
    while size < n:
        size *= 2
    t_u = np.full(2 * size if indexed else 0, ABSENT, np.int64)
    t_e = np.full(2 * size if indexed else 0, ABSENT, np.int64)
    t_p = np.full(2 * size if indexed and power else 0, np.inf, np.float64)
    return size, t_u, t_e, t_p


def idx_put(tu: Any, te: Any, tp: Any, size: int, r: int, u: int, e: int, p: float) -> None:
    """Queue index: the job of rank ``r`` (``u`` units, estimate ``e``, least power ``p``)
    is queued (``u = ABSENT``: it left); every ancestor's minima follow."""
    v = r + size
    tu[v] = u
    te[v] = e
    if tp.shape[0]:
        tp[v] = p
    v >>= 1
    while v >= 1:
        a, b = 2 * v, 2 * v + 1
        tu[v] = tu[a] if tu[a] < tu[b] else tu[b]
        te[v] = te[a] if te[a] < te[b] else te[b]
        if tp.shape[0]:
            tp[v] = tp[a] if tp[a] < tp[b] else tp[b]
        v >>= 1


def idx_next(tu: Any, te: Any, tp: Any, size: int, r: int, free: int, left: float,
             extra: int, horizon: int) -> int:
    """Queue index: the lowest rank ≥ ``r`` whose queued job may start in EASY's backfill —
    at most ``free`` units, power within ``left`` (as the scan's lower bound), and ending
    by ``horizon`` s from now or at most ``extra`` units — or ``-1``. Subtrees whose minima
    rule every job out are skipped whole."""
    if r >= size:
        return -1
    v = r + size
    while True:
        ok = tu[v] <= free and (te[v] <= horizon or tu[v] <= extra)
        if ok and tp.shape[0]:
            ok = not tp[v] - 1e-3 > left + EPS
        if ok:
            if v >= size:
                return v - size
            v = 2 * v  # the left child first; its right sibling next
            continue
        while v & 1:  # the next subtree to the right
            v >>= 1
        if v == 0:
            return -1
        v += 1


def idx_jump(tu: Any, te: Any, tp: Any, size: int, q_rank: Any, qn: int, r: int, free: int,
          left: float, extra: int, horizon: int) -> int:
    """The queue position of the next job from rank ``r`` on that may start (``qn``: none)."""
    found = idx_next(tu, te, tp, size, r, free, left, extra, horizon)
    return qn if found < 0 else bisect_left(q_rank, qn, found)
