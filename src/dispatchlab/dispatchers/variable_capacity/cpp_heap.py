"""A binary heap that pops equal keys in the order GCC's ``std::priority_queue`` does.

``std::priority_queue`` is not stable: which of two elements with equal keys comes out
first depends on the heap's layout, that is on every push and pop before. The authors'
variable-capacity simulator (``simu.cc``) breaks many ties that way (events at the same
time, type and machine; queued jobs with the same release), so reproducing it exactly
needs the same layout: these functions follow libstdc++'s ``push_heap`` (sift up) and
``pop_heap`` (``__adjust_heap``: move the hole down to a leaf along the smaller child,
the right one on ties, then sift the last element up from there).

A heap is two arrays, whole-number keys ``K`` and payloads ``P``, and its size ``n``; a
smaller key comes out first (the C++ comparator ``comp(a, b)`` is ``a.key > b.key``).
Plain functions on arrays, so that Numba compiles them inside the authors' simulation.
"""

from __future__ import annotations

from dispatchlab.arrays import IntArray


def heap_push(K: IntArray, P: IntArray, n: int, key: int, pay: int) -> int:
    """``c.push_back(x); std::push_heap(c.begin(), c.end(), comp)``; the new size.
    Raises ``IndexError`` when the arrays are full."""
    if n >= len(K):
        raise IndexError("heap full")
    _sift_up(K, P, n, 0, key, pay)
    return n + 1


def heap_pop(K: IntArray, P: IntArray, n: int) -> int:
    """``std::pop_heap(c.begin(), c.end(), comp); c.pop_back()``; the new size (read the
    top, ``K[0]``/``P[0]``, before)."""
    if n > 1:
        key, pay = K[n - 1], P[n - 1]
        K[n - 1], P[n - 1] = K[0], P[0]
        _adjust(K, P, 0, n - 1, key, pay)
    return n - 1


def _sift_up(K: IntArray, P: IntArray, hole: int, top: int, key: int, pay: int) -> None:
    """libstdc++ ``__push_heap``: move parents down while ``comp(parent, value)``."""
    parent = (hole - 1) // 2
    while hole > top and K[parent] > key:
        K[hole] = K[parent]
        P[hole] = P[parent]
        hole = parent
        parent = (hole - 1) // 2
    K[hole] = key
    P[hole] = pay


def _adjust(K: IntArray, P: IntArray, hole: int, length: int, key: int, pay: int) -> None:
    """libstdc++ ``__adjust_heap`` on the first ``length`` elements, placing ``key``."""
    top = hole
    child = hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if K[child] > K[child - 1]:
            child -= 1
        K[hole] = K[child]
        P[hole] = P[child]
        hole = child
    if length & 1 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        K[hole] = K[child - 1]
        P[hole] = P[child - 1]
        hole = child - 1
    _sift_up(K, P, hole, top, key, pay)
