"""Alg. 5's question to the free-capacity grid, compiled: the earliest start slot
``≥ release`` where a job's units fit for its duration, and each node's room there.

The search of :class:`~dispatchlab.dispatchers.offline_plan.planner.heuristic.FreeGrid`:
candidate starts are the slots up to ``used_end`` (past it the machine is empty) at which
the machine as a whole holds the job over its window (a necessary condition); they are
examined in groups (spanning 8 slots, then twice as many each time, up to ``chunk``), per
node the units it holds over each candidate's window (``min_k free[k] // req[k]`` of the
window's least free amounts, at least 0, at most the job's units: the same as the
minimum of the slots' fits, these maps being monotone), and the first candidate whose
nodes together hold the job wins.
At ``used_end`` or later the room is the slot's fit, not capped by the units. One pass of
plain loops compiled with Numba through :mod:`dispatchlab.numba_loader` (plain Python
without it), where numpy built several temporary nodes × slots arrays per group (the
hybrid pipeline plans every day with it: a quarter of its run).
"""

from __future__ import annotations

import numpy as np

from dispatchlab.arrays import IntArray
from dispatchlab.dispatchers.sliding_min import queue_window_min
from dispatchlab.numba_loader import compiled

_BIG = np.iinfo(np.int64).max // 4


def _slot_fit(free: IntArray, req: IntArray, v: int, t: int) -> int:
    """Units of ``req`` fitting on node ``v`` in slot ``t`` (at least 0)."""
    fit = _BIG
    for k in range(free.shape[0]):
        if req[k] > 0:
            fit = min(fit, free[k, v, t] // req[k])
    return max(fit, 0)


def _free_window_min(free: IntArray, k: int, v: int, lo: int, n_win: int, width: int,
                     row: IntArray, queue: IntArray, out: IntArray) -> None:
    """``out[i] = min(free[k, v, lo + i : lo + i + width])`` for ``i < n_win``: with no
    more windows than the width, the common core ``[n_win − 1, width)`` in one plain
    minimum plus a suffix minimum on the left and a prefix minimum on the right; else a
    monotone queue."""
    if n_win <= width:
        core = free[k, v, lo + n_win - 1]
        for t in range(lo + n_win, lo + width):
            core = min(core, free[k, v, t])
        left = core
        out[n_win - 1] = core
        for i in range(n_win - 2, -1, -1):
            left = min(left, free[k, v, lo + i])
            out[i] = left
        if n_win > 1:
            right = free[k, v, lo + width]
            out[1] = min(out[1], right)
            for i in range(2, n_win):
                right = min(right, free[k, v, lo + width + i - 1])
                out[i] = min(out[i], right)
        return
    for t in range(n_win - 1 + width):
        row[t] = free[k, v, lo + t]
    queue_window_min(row, n_win, width, out, queue)


def _earliest_start(free: IntArray, pool: IntArray, used_end: int, release: int, slots: int,
                    units: int, req: IntArray, chunk: int, room: IntArray) -> int:
    """The earliest start slot (−1: none, the job exceeds the machine); ``room`` (per
    node) set to the units each node holds over the window (capped at ``units`` before
    ``used_end``). ``free``: resources × nodes × slots, ``pool``: resources × slots, both
    held to at least ``max(release + 1, used_end + slots)`` slots. Groups of candidates
    span 8 slots first, doubling up to ``chunk``."""
    n_res, n_nodes, _ = free.shape
    start = -1
    if release < used_end:
        # candidates: no slot of the window short of the job's total on the machine
        n_cand = used_end - release + 1
        cand = np.empty(n_cand, dtype=np.int64)
        found = 0
        last_bad = release - 1
        for t in range(release, used_end + slots):
            for k in range(n_res):
                if req[k] > 0 and pool[k, t] < units * req[k]:
                    last_bad = t
                    break
            s = t - slots + 1
            if s >= release and last_bad < s:
                cand[found] = s
                found += 1
        span = chunk + slots
        row = np.empty(span, dtype=np.int64)
        queue = np.empty(span, dtype=np.int64)
        win_k = np.empty(chunk + 1, dtype=np.int64)
        win = np.empty((n_nodes, chunk + 1), dtype=np.int64)
        group = min(8, chunk)
        i = 0
        while i < found and start < 0:
            lo = cand[i]
            if lo >= used_end:
                start = lo
                break
            last = i
            while last < found and cand[last] <= lo + group:
                last += 1
            group = min(2 * group, chunk)
            n_win = cand[last - 1] - lo + 1
            # the units a node holds over a window: the fit of the window's least free
            # amount of each resource (floor division and the bounds are monotone)
            for v in range(n_nodes):
                for w in range(n_win):
                    win[v, w] = _BIG
                for k in range(n_res):
                    if req[k] > 0:
                        _free_window_min(free, k, v, lo, n_win, slots, row, queue, win_k)
                        for w in range(n_win):
                            win[v, w] = min(win[v, w], win_k[w] // req[k])
                for w in range(n_win):
                    win[v, w] = min(max(win[v, w], 0), units)
            for g in range(i, last):
                col = cand[g] - lo
                total = 0
                for v in range(n_nodes):
                    total += win[v, col]
                if total >= units:
                    start = cand[g]
                    for v in range(n_nodes):
                        room[v] = win[v, col]
                    return start
            i = last
        if start < 0:
            return -1  # only when the job exceeds the empty machine
    else:
        start = release
    for v in range(n_nodes):
        room[v] = _slot_fit(free, req, v, start)
    return start


def earliest_start(free: IntArray, pool: IntArray, used_end: int, release: int, slots: int,
                   units: int, req: IntArray, chunk: int = 256) -> tuple[int, IntArray]:
    """See :func:`_earliest_start`: the start slot and the room per node."""
    fn = compiled(_earliest_start, helpers=(_slot_fit, _free_window_min, queue_window_min),
                  fallback=_earliest_start)
    room = np.empty(free.shape[1], dtype=np.int64)
    start = int(fn(free, pool, used_end, release, slots, units, req, chunk, room))
    if start < 0:
        raise ValueError(f"{units} units of {req.tolist()} exceed the machine")
    return start, room
