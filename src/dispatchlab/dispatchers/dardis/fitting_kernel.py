"""The node managers' fitting index read straight from the usage grid, compiled.

:func:`~dispatchlab.dispatchers.dardis.fitting.fitting_index` computes the index with
numpy on a window of the grid: several temporary nodes × slots arrays per resource (the
free room, the room under the profile, the blocks of the sliding minimum). On the Curie
window that was half of DARDIS's protocol time: a job's duration (up to 288 slots of
300 s) is long against its window of candidate starts (13 in the median), so nearly every
slot lies in every candidate. :func:`grid_fitting_index` computes the same figures node
by node, reading the grid and the desired-share table at an offset (no copy):

- when there are no more candidates than slots in a duration, every candidate covers the
  common core ``[m − 1, width)``; its minimum room is taken from the largest reserved
  amount of each run of equal desired share in it (``c − up`` and
  ``(c − up) − c · (1 − share)`` are monotone in ``up``, so the room at the largest amount
  *is* the smallest room, bit for bit), and each candidate adds a suffix minimum on the
  left and a prefix minimum on the right, slot by slot;
- otherwise a monotone queue gives each candidate's minimum.

Every entry is the numpy one (``tests/dardis/test_fitting_kernel.py``): the same
floating-point operations on each slot or on the slot holding the minimum. Compiled with
Numba through :mod:`dispatchlab.numba_loader` (plain Python when Numba is missing or
disabled).
"""

from __future__ import annotations

import numpy as np

from dispatchlab.arrays import BoolArray, FloatArray, IntArray
from dispatchlab.dispatchers.sliding_min import queue_window_min
from dispatchlab.numba_loader import compiled


def _window_min(room: FloatArray, n_starts: int, width: int, first_width: int,
                out: FloatArray, queue: IntArray) -> None:
    """``out[i] = min(room[i:i + width])``, candidate 0 also over slot
    ``first_width − 1`` when it is longer
    (:func:`~dispatchlab.dispatchers.dardis.fitting._window_min`)."""
    queue_window_min(room, n_starts, width, out, queue)
    if first_width > width:
        out[0] = min(out[0], room[first_width - 1])


def _largest(up: FloatArray, k: int, v: int, a: int, b: int) -> float:
    """``max(up[k, v, a:b])`` (four running maxima: the maximum is exact in any order)."""
    m0 = m1 = m2 = m3 = -np.inf
    t = a
    while t + 4 <= b:
        m0 = max(m0, up[k, v, t])
        m1 = max(m1, up[k, v, t + 1])
        m2 = max(m2, up[k, v, t + 2])
        m3 = max(m3, up[k, v, t + 3])
        t += 4
    while t < b:
        m0 = max(m0, up[k, v, t])
        t += 1
    return max(max(m0, m1), max(m2, m3))


def _core_windows(up: FloatArray, k: int, v: int, base: int, c: float, share: FloatArray,
                  sbase: int, use_share: bool, runs: IntArray, n_runs: int, m: int,
                  width: int, first_width: int, cap_win: FloatArray,
                  prof_win: FloatArray) -> None:
    """Node ``v``'s minimum room (and room under the profile) of candidates ``0 … m − 1``
    (``m ≤ width``) over slots from grid column ``base``: core runs, then left suffix and
    right prefix minima. ``runs[:n_runs + 1]``: bounds of the runs of equal share in the
    core ``[m − 1, width)``."""
    cap_core = np.inf
    prof_core = np.inf
    for r in range(n_runs):
        a, b = runs[r], runs[r + 1]
        room = c - _largest(up, k, v, base + a, base + b)
        cap_core = min(cap_core, room)
        if use_share:
            prof_core = min(prof_core, room - c * (1.0 - share[k, sbase + a]))
    cap_left = cap_core
    prof_left = prof_core
    cap_win[m - 1] = cap_core
    prof_win[m - 1] = prof_core
    for i in range(m - 2, -1, -1):
        room = c - up[k, v, base + i]
        cap_left = min(cap_left, room)
        cap_win[i] = cap_left
        if use_share:
            prof_left = min(prof_left, room - c * (1.0 - share[k, sbase + i]))
            prof_win[i] = prof_left
    cap_right = np.inf
    prof_right = np.inf
    for i in range(1, m):
        t = width + i - 1
        room = c - up[k, v, base + t]
        cap_right = min(cap_right, room)
        cap_win[i] = min(cap_win[i], cap_right)
        if use_share:
            prof_right = min(prof_right, room - c * (1.0 - share[k, sbase + t]))
            prof_win[i] = min(prof_win[i], prof_right)
    if first_width > width:
        t = first_width - 1
        room = c - up[k, v, base + t]
        cap_win[0] = min(cap_win[0], room)
        if use_share:
            prof_win[0] = min(prof_win[0], room - c * (1.0 - share[k, sbase + t]))


def _queue_windows(up: FloatArray, k: int, v: int, base: int, c: float, share: FloatArray,
                   sbase: int, use_share: bool, m: int, width: int, first_width: int,
                   room: FloatArray, queue: IntArray, cap_win: FloatArray,
                   prof_win: FloatArray) -> None:
    """As :func:`_core_windows` for any ``m``, slot by slot with a monotone queue."""
    need = m - 1 + max(width, first_width)
    for t in range(need):
        room[t] = c - up[k, v, base + t]
    _window_min(room, m, width, first_width, cap_win, queue)
    if use_share:
        for t in range(need):
            room[t] = room[t] - c * (1.0 - share[k, sbase + t])
        _window_min(room, m, width, first_width, prof_win, queue)


def _chunk_index(up: FloatArray, a0: int, share: FloatArray, s0: int, use_share: bool,
                 cap: FloatArray, req: FloatArray, alive: BoolArray, c0: int, m: int,
                 width: int, first_width: int, index: FloatArray) -> None:
    """``index[v, :m]``: fitting index of candidates ``c0 … c0 + m − 1`` on every node
    ``v`` with ``alive[v]`` (other rows untouched); candidate 0 is the window's first
    (``first_width`` applies only to it)."""
    n_res, n_nodes, _ = up.shape
    fw = first_width if c0 == 0 else width
    need = m - 1 + max(width, fw)
    base = a0 + c0
    sbase = s0 + c0
    cap_idx = np.empty((n_nodes, m))
    prof_idx = np.empty((n_nodes, m))
    cap_win = np.empty(m)
    prof_win = np.empty(m)
    room = np.empty(need)
    queue = np.empty(need, dtype=np.int64)
    runs = np.empty(width + 1, dtype=np.int64)
    first_k = True
    for k in range(n_res):
        r = req[k]
        if not r > 0:
            continue
        core = m <= width
        n_runs = 0
        if core:  # runs of equal desired share over the common core [m − 1, width)
            runs[0] = m - 1
            for t in range(m, width):
                if use_share and share[k, sbase + t] != share[k, sbase + t - 1]:
                    n_runs += 1
                    runs[n_runs] = t
            n_runs += 1
            runs[n_runs] = width
        for v in range(n_nodes):
            if not alive[v]:
                continue
            c = cap[v, k]
            if core:
                _core_windows(up, k, v, base, c, share, sbase, use_share, runs, n_runs, m,
                              width, fw, cap_win, prof_win)
            else:
                _queue_windows(up, k, v, base, c, share, sbase, use_share, m, width, fw,
                               room, queue, cap_win, prof_win)
            for i in range(m):
                x = cap_win[i] / r
                if first_k or x < cap_idx[v, i]:
                    cap_idx[v, i] = x
                if use_share:
                    y = prof_win[i] / r
                    if first_k or y < prof_idx[v, i]:
                        prof_idx[v, i] = y
        first_k = False
    for v in range(n_nodes):
        if alive[v]:
            for i in range(m):
                f = np.floor(cap_idx[v, i])
                index[v, i] = min(prof_idx[v, i], f) if use_share else f


#: the helpers the compiled kernels call (registered with Numba)
HELPERS = (queue_window_min, _window_min, _largest, _core_windows, _queue_windows, _chunk_index)


def _grid_fitting_index(up: FloatArray, a0: int, share: FloatArray, s0: int, use_share: bool,
                        cap: FloatArray, req: FloatArray, n_starts: int, width: int,
                        first_width: int) -> FloatArray:
    """Fitting index (nodes × ``n_starts``) of the candidates whose slot 0 is column ``a0``
    of ``up`` (resources × nodes × held slots) and column ``s0`` of ``share`` (resources ×
    slots, read when ``use_share``); ``cap``: nodes × resources."""
    n_nodes = up.shape[1]
    out = np.empty((n_nodes, n_starts))
    alive = np.ones(n_nodes, dtype=np.bool_)
    _chunk_index(up, a0, share, s0, use_share, cap, req, alive, 0, n_starts, width,
                 first_width, out)
    return out


def grid_fitting_index(up: FloatArray, a0: int, share: FloatArray | None, s0: int,
                       cap: FloatArray, req: FloatArray, n_starts: int, width: int,
                       first_width: int) -> FloatArray:
    """See :func:`_grid_fitting_index` (``share=None``: capacity only). ``req`` must ask
    for some resource."""
    if not (req > 0).any():
        raise ValueError("a unit must ask for some resource")
    fn = compiled(_grid_fitting_index, helpers=HELPERS, fallback=_grid_fitting_index)
    use = share is not None
    sh = share if share is not None else np.zeros((1, 1))
    return np.asarray(fn(up, a0, sh, s0, use, cap, req, n_starts, width, first_width))
