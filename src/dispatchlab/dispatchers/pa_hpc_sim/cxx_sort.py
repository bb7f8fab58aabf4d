"""libstdc++'s ``std::sort`` (introsort), ported step for step, for peers whose results
depend on how it orders equal keys (it is not stable).

PA-HPC-SIM sorts its resources with a ranker that scores them all equal and its queued jobs
by wall-time with ties: the order they come out in decides which nodes a job gets and which
of two equal-wall-time jobs goes first. :func:`cxx_sort` reproduces GCC's algorithm
(``__introsort_loop`` with the 16-element threshold, median-of-three pivot moved to the
first position, unguarded partition, final insertion sort); ``pa_hpc_sim_crosscheck.py``
(benchmarks) checks it against ``std::sort`` compiled with g++ before using it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")
Less = Callable[[T, T], bool]

_THRESHOLD = 16


def cxx_sort(a: list[T], less: Less[T]) -> None:
    """Sort ``a`` in place exactly as ``std::sort(a.begin(), a.end(), less)`` does."""
    n = len(a)
    if n < 2:
        return
    _introsort_loop(a, 0, n, 2 * (n.bit_length() - 1), less)
    _final_insertion_sort(a, 0, n, less)


def _introsort_loop(a: list[T], first: int, last: int, depth: int, less: Less[T]) -> None:
    while last - first > _THRESHOLD:
        if depth == 0:
            _heap_sort(a, first, last, less)
            return
        depth -= 1
        cut = _partition_pivot(a, first, last, less)
        _introsort_loop(a, cut, last, depth, less)
        last = cut


def _partition_pivot(a: list[T], first: int, last: int, less: Less[T]) -> int:
    mid = first + (last - first) // 2
    _median_to_first(a, first, first + 1, mid, last - 1, less)
    return _unguarded_partition(a, first + 1, last, first, less)


def _median_to_first(a: list[T], result: int, x: int, y: int, z: int, less: Less[T]) -> None:
    pick = _median(a, x, y, z, less) if less(a[x], a[y]) else _median(a, y, x, z, less)
    a[result], a[pick] = a[pick], a[result]


def _median(a: list[T], low: int, high: int, z: int, less: Less[T]) -> int:
    """The median of three once ``a[high]`` is known not to be below ``a[low]`` (one of
    ``__move_median_to_first``'s two mirrored branches): ``high`` if below ``z``, else ``z``
    if above ``low``, else ``low``."""
    if less(a[high], a[z]):
        return high
    if less(a[low], a[z]):
        return z
    return low


def _unguarded_partition(a: list[T], first: int, last: int, pivot: int, less: Less[T]) -> int:
    while True:
        while less(a[first], a[pivot]):
            first += 1
        last -= 1
        while less(a[pivot], a[last]):
            last -= 1
        if not first < last:
            return first
        a[first], a[last] = a[last], a[first]
        first += 1


def _final_insertion_sort(a: list[T], first: int, last: int, less: Less[T]) -> None:
    if last - first > _THRESHOLD:
        _insertion_sort(a, first, first + _THRESHOLD, less)
        for i in range(first + _THRESHOLD, last):
            _linear_insert(a, i, less)
    else:
        _insertion_sort(a, first, last, less)


def _insertion_sort(a: list[T], first: int, last: int, less: Less[T]) -> None:
    for i in range(first + 1, last):
        val = a[i]
        if less(val, a[first]):
            a[first + 1:i + 1] = a[first:i]
            a[first] = val
        else:
            _linear_insert(a, i, less)


def _linear_insert(a: list[T], last: int, less: Less[T]) -> None:
    val = a[last]
    nxt = last - 1
    while less(val, a[nxt]):
        a[last] = a[nxt]
        last = nxt
        nxt -= 1
    a[last] = val


def _heap_sort(a: list[T], first: int, last: int, less: Less[T]) -> None:
    """``std::partial_sort(first, last, last)``: make_heap then sort_heap."""
    n = last - first
    for parent in range((n - 2) // 2, -1, -1):
        _adjust_heap(a, first, parent, n, a[first + parent], less)
    while n > 1:
        n -= 1
        val = a[first + n]
        a[first + n] = a[first]
        _adjust_heap(a, first, 0, n, val, less)


def _adjust_heap(a: list[T], first: int, hole: int, n: int, val: T, less: Less[T]) -> None:
    top = hole
    child = hole
    while child < (n - 1) // 2:
        child = 2 * (child + 1)
        if less(a[first + child], a[first + child - 1]):
            child -= 1
        a[first + hole] = a[first + child]
        hole = child
    if (n & 1) == 0 and child == (n - 2) // 2:
        child = 2 * (child + 1)
        a[first + hole] = a[first + child - 1]
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > top and less(a[first + parent], val):
        a[first + hole] = a[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    a[first + hole] = val
