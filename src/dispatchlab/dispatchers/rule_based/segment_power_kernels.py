"""The compiled kernels of :mod:`~dispatchlab.dispatchers.rule_based.segment_power`: what a
start adds to the IT power over each availability segment, with the meter's operations in the
meter's order (plain Python when Numba is missing or disabled)."""

from __future__ import annotations

import numpy as np

from dispatchlab.arrays import FloatArray, IntArray
from dispatchlab.engine.kernels import COMPILED
from dispatchlab.platform.node_states import ON


def small_deltas(used: IntArray, nodes: IntArray, counts: IntArray, req: IntArray,
                  state: IntArray, fig: FloatArray, c: int, g: int, m: int) -> FloatArray:
    """The meter's node-by-node start delta for each segment (rows of ``used``:
    segments × placement nodes × resources), its operations in its order."""
    n_seg, n_nodes, _ = used.shape
    out = np.zeros(n_seg)
    for s in range(n_seg):
        acc = 0.0
        for i in range(n_nodes):
            node = nodes[i]
            if state[node] != ON:
                continue  # a node not on draws its state's power either way: adds 0.0
            old = used[s, i]
            new = old + counts[i] * req
            acc += _node_w(new, fig, node, c, g, m) - _node_w(old, fig, node, c, g, m)
        out[s] = acc
    return out


def _node_w(used: IntArray, fig: FloatArray, n: int, c: int, g: int, m: int) -> float:
    """``MachinePower._w`` of ON node ``n`` in node mode."""
    w = fig[0, n]
    if c >= 0 and used[c] > 0:
        w += fig[1, n] + (used[c] - 1) * fig[2, n]
    if g >= 0:
        w += used[g] * fig[3, n]
    if m >= 0:
        w += used[m] * fig[4, n]
    return float(w)


def _active_w(used: IntArray, fig: FloatArray, n: int, c: int, g: int, m: int) -> float:
    """:meth:`NodePowerTable.active` of node ``n`` with ``used`` in use."""
    w = 0.0
    if c >= 0:
        w += fig[1, n] + (used[c] - 1) * fig[2, n] if used[c] > 0 else 0.0
    if g >= 0:
        w += used[g] * fig[3, n]
    if m >= 0:
        w += used[m] * fig[4, n]
    return w


def _pairwise_sum(a: FloatArray, n: int) -> float:
    """``a[:n].sum()`` for ``n ≤ 128``, exactly as numpy adds a contiguous float64 row
    (below 8 in turn; else eight running sums, then the rest in turn)."""
    if n < 8:
        res = 0.0
        for i in range(n):
            res += a[i]
        return res
    r0, r1, r2, r3, r4, r5, r6, r7 = a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]
    i = 8
    while i < n - n % 8:
        r0 += a[i]
        r1 += a[i + 1]
        r2 += a[i + 2]
        r3 += a[i + 3]
        r4 += a[i + 4]
        r5 += a[i + 5]
        r6 += a[i + 6]
        r7 += a[i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[i]
        i += 1
    return res


def large_deltas(used: IntArray, nodes: IntArray, counts: IntArray, req: IntArray,
                  fig: FloatArray, c: int, g: int, m: int) -> FloatArray:
    """The meter's vectorised start delta (every node on, at most 128 nodes)
    for each segment: the per-node differences of the active power, summed as numpy sums
    them."""
    n_seg, n_nodes, _ = used.shape
    out = np.zeros(n_seg)
    diff = np.empty(n_nodes)
    for s in range(n_seg):
        for i in range(n_nodes):
            old = used[s, i]
            new = old + counts[i] * req
            diff[i] = (_active_w(new, fig, nodes[i], c, g, m)
                       - _active_w(old, fig, nodes[i], c, g, m))
        out[s] = _pairwise_sum(diff, n_nodes)
    return out


if COMPILED:
    import numba

    _jit = numba.njit(cache=True, nogil=True)
    # rebound in dependency order: each kernel finds the compiled ones it calls
    _node_w = _jit(_node_w)
    _active_w = _jit(_active_w)
    _pairwise_sum = _jit(_pairwise_sum)
    small_deltas = _jit(small_deltas)
    large_deltas = _jit(large_deltas)
