"""Compiled operations on conservative backfilling's slot book beyond those of
:mod:`~dispatchlab.engine.compiled.slot_availability_ops`: a compression that does not
search where no reservation can move, and a rebuild of every reservation in one call.

A compression moves each reservation, in priority order, to its earliest fit before its
start (:func:`~dispatchlab.engine.compiled.slot_availability_ops.avail_compress`). The
search for that fit walks the availability up to the reservation's start; on an
overloaded machine every one of thousands of queued reservations is searched at every
early end, and each search walks thousands of segments — queue × segments per event.

:func:`compress_skipping` does the same compression but first asks, in ``O(log
segments)``, whether the job can move at all: a start before ``s`` (the reservation's
start) needs a run of consecutive segments with ``need`` slots free that either reaches
``s`` (from there the job's own hold is lifted) or lasts ``dur`` seconds. Per need value
the longest such run ending by each segment is tabulated once (:func:`fit_runs`) and kept
until a reservation moves; a job without such a run is passed over, and the searches
left are those of jobs that move (or nearly). The moves, the availability and the book
are exactly those of ``avail_compress``: a job passed over would have found no earlier
fit (``tests/dispatchers/test_slot_book_ops.py`` compares both on random books).

:func:`rebuild_book` re-places every reservation in priority order, as
:meth:`Conservative._rebuild
<dispatchlab.dispatchers.rule_based.selection.conservative.Conservative._rebuild>` does one
by one in Python when a reservation fell due unstarted (a power cap refusing its start):
an overloaded machine under a binding cap rebuilds a long book at most events.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dispatchlab.engine.compiled.slot_availability_ops import (
    NEVER,
    NONE,
    avail_add,
    avail_fit,
    avail_reserve,
    bisect_left,
    heap_fix,
)
from dispatchlab.numba_loader import NUMBA, compiled

#: Need values whose run tables are kept at once (a need's slot: ``need % TABLES``).
TABLES = 16


def fit_runs(times: Any, free: Any, n: int, need: int, best: Any) -> None:
    """``best[j]`` (``j < n``): the longest maximal run (seconds) of segments with at least
    ``need`` slots free that ended at or before segment ``j`` (its first segment with
    fewer); -1 when none did."""
    longest = -1
    first = -1  # first segment of the current run (-1: not in one)
    for j in range(n):
        if free[j] >= need:
            if first < 0:
                first = j
        elif first >= 0:
            length = times[j] - times[first]
            if length > longest:
                longest = length
            first = -1
        best[j] = longest


def may_move(times: Any, free: Any, n: int, need: int, dur: int, start: int, best: Any,
             cached: Any) -> bool:
    """Whether a job holding ``need`` slots from ``start`` may fit for ``dur`` seconds
    earlier: a segment before ``start`` with ``need`` free continues into a run that
    reaches ``start`` or lasts ``dur`` (``False``: :func:`avail_fit` would find nothing).
    ``best``/``cached``: the run tables by need slot and the need each holds (-1: none)."""
    k = bisect_left(times, n, start)
    if k == 0:
        return False
    if free[k - 1] >= need:
        return True  # the run holding the last segment before the start reaches it
    c = need % TABLES
    row = best[c]
    if cached[c] != need:
        fit_runs(times, free, n, need, row)
        cached[c] = need
    return bool(row[k - 1] >= dur)


def compress_skipping(times: Any, free: Any, n: int, jobs: Any, first: int, count: int,
                      start: Any, end: Any, need: Any, now: int, key: Any, heap: Any,
                      pos: Any, moved: Any, best: Any, cached: Any
                      ) -> tuple[int, int, int, int]:
    """:func:`~dispatchlab.engine.compiled.slot_availability_ops.avail_compress`, searching
    only the jobs :func:`may_move` lets through. ``best``: a ``TABLES × len(times)`` scratch
    array; ``cached``: ``TABLES`` integers. Returns ``(n, number moved, index reached,
    number of searches)``."""
    room = len(times) - 4
    for c in range(TABLES):
        cached[c] = -1
    n_moved = 0
    searched = 0
    i = first
    while i < count:
        if n > room:
            break
        j = jobs[i]
        s = start[j]
        if s > now:
            e = end[j]
            k = need[j]
            if may_move(times, free, n, k, e - s, s, best, cached):
                searched += 1
                t = avail_fit(times, free, n, k, e - s, s, s)
                if t != NONE:
                    n = avail_add(times, free, n, s, e, k)
                    n = avail_add(times, free, n, t, t + e - s, -k)
                    start[j] = t
                    end[j] = t + e - s
                    key[pos[j]] = t
                    p = pos[j]  # its key fell: it moves up only (no child in view)
                    heap_fix(key, heap, pos, p + 1, p)
                    moved[n_moved] = j
                    n_moved += 1
                    for c in range(TABLES):
                        cached[c] = -1  # the availability changed
        i += 1
    return n, n_moved, i, searched


def rebuild_book(times: Any, free: Any, n: int, jobs: Any, count: int, start: Any, end: Any,
                 need: Any, now: int, key: Any, heap: Any, pos: Any, hn: int, was: Any,
                 placed: Any) -> tuple[int, int, int]:
    """Give every reservation back (from ``now`` on), empty the book, and reserve each job
    that held one again at its earliest fit for the same duration, in the order of
    ``jobs[:count]`` (a job without a fit drops out). ``was``: per job, scratch; the jobs
    reserved again go to ``placed``, in order. Needs room for ``4 × hn`` more breakpoints.
    Returns ``(n, hn, number placed)``."""
    for h in range(hn):
        j = heap[h]
        s = start[j]
        e = end[j]
        if e > now:
            n = avail_add(times, free, n, max(s, now), e, need[j])
        was[j] = s
        pos[j] = -2  # held a reservation (-1 again once re-placed or dropped)
    n_placed = 0
    size = 0
    for i in range(count):
        j = jobs[i]
        if pos[j] != -2:
            continue
        s = was[j]
        pos[j] = -1
        n, size, t = avail_reserve(times, free, n, j, need[j], end[j] - s, NEVER, start, end,
                                   key, heap, pos, size)
        if t == NONE:
            start[j] = end[j] = NONE
        else:
            placed[n_placed] = j
            n_placed += 1
    return n, size, n_placed


def _warm(fn: Callable[..., Any]) -> None:
    """Compile ``fn`` now on a tiny book."""
    one = np.ones(1, np.int64)
    times, free = np.zeros(8, np.int64), np.zeros(8, np.int64)
    fn(times, free, 1, one - 1, 0, 1, one, one + 1, one, 0, one, one - 1, one - 1, one - 1,
       np.zeros((TABLES, 8), np.int64), np.zeros(TABLES, np.int64))


def _warm_rebuild(fn: Callable[..., Any]) -> None:
    """Compile ``fn`` now on a tiny book."""
    one = np.ones(1, np.int64)
    times, free = np.zeros(8, np.int64), np.ones(8, np.int64)
    fn(times, free, 1, one - 1, 1, one, one + 1, one, 0, one, one - 1, one - 1, 1, one - 1,
       one - 1)


def _helpers() -> list[Callable[..., Any]]:
    from dispatchlab.engine.compiled.compiled_ops import availability_helpers

    return [*availability_helpers(), fit_runs, may_move]


def compress_kernel(use_compiled: bool) -> Callable[..., Any]:
    """:func:`compress_skipping`, compiled when ``use_compiled`` and Numba is available."""
    if not (use_compiled and NUMBA):
        return compress_skipping
    from dispatchlab.engine.compiled.compiled_ops import heap_inlined

    return compiled(compress_skipping, helpers=_helpers(), inline=heap_inlined(), warm=_warm,
                    what="the slot compression")


def rebuild_kernel(use_compiled: bool) -> Callable[..., Any]:
    """:func:`rebuild_book`, compiled when ``use_compiled`` and Numba is available."""
    if not (use_compiled and NUMBA):
        return rebuild_book
    from dispatchlab.engine.compiled.compiled_ops import heap_inlined

    return compiled(rebuild_book, helpers=_helpers(), inline=heap_inlined(), warm=_warm_rebuild,
                    what="the slot book rebuild")
