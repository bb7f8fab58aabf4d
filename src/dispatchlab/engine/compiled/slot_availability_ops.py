"""Operations on a slot availability held in plain arrays, for conservative backfilling.

One source for the compiled kernels (:mod:`~dispatchlab.engine.compiled.compiled_ops` compiles
these functions ahead of time or with Numba's JIT, and the compiled loops compile them in)
and for the pure-Python fallback, which runs them as they are — so both give the same
availability, step by step. The array helpers at the end (:func:`grown`, :func:`shift_in`)
serve every compiled part that keeps sorted or growing arrays.

An availability is ``times[:n]`` (strictly increasing breakpoints, ``times[0]`` = now) and
``free[:n]`` (free unit slots over ``[times[k], times[k + 1])``; the last segment runs
forever). The arrays (or lists) have spare room past ``n``; no function allocates, and each
returns the new ``n``. Adjacent segments never hold equal counts, so the representation is a
function of the step function alone.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: Returned by the search when no start qualifies; the start of "no reservation".
NONE = -(1 << 62)
#: Later than any simulated time ("no limit", "never due").
NEVER = 1 << 62


def avail_advance(times: Any, free: Any, n: int, now: int) -> int:
    """Drop the past: the first segment starts at ``now``."""
    k = 0
    while k + 1 < n and times[k + 1] <= now:
        k += 1
    if k > 0:
        n -= k
        for m in range(n):
            times[m] = times[m + k]
            free[m] = free[m + k]
    times[0] = now
    return n


def bisect_left(a: Any, n: int, x: int) -> int:
    """The first position of sorted ``a[:n]`` holding at least ``x``."""
    lo, hi = 0, n
    while lo < hi:
        m = (lo + hi) >> 1
        if a[m] < x:
            lo = m + 1
        else:
            hi = m
    return lo


def avail_split(times: Any, free: Any, n: int, t: int) -> tuple[int, int]:
    """Index of the segment starting at ``t`` (a breakpoint added when missing), and ``n``."""
    a = bisect_left(times, n, t)
    if a == n or times[a] != t:
        for m in range(n, a, -1):
            times[m] = times[m - 1]
            free[m] = free[m - 1]
        times[a] = t
        free[a] = free[a - 1]
        n += 1
    return a, n


def avail_remove(times: Any, free: Any, n: int, k: int) -> int:
    """Delete breakpoint ``k`` (its segment joins the previous one)."""
    n -= 1
    for m in range(k, n):
        times[m] = times[m + 1]
        free[m] = free[m + 1]
    return n


def avail_add(times: Any, free: Any, n: int, t0: int, t1: int, delta: int) -> int:
    """Add ``delta`` free slots over ``[t0, t1)`` (``now ≤ t0 < t1``); needs room for two
    more breakpoints."""
    a, n = avail_split(times, free, n, t0)
    b, n = avail_split(times, free, n, t1)
    for k in range(a, b):
        free[k] += delta
    if b < n and free[b] == free[b - 1]:
        n = avail_remove(times, free, n, b)
    if a > 0 and free[a] == free[a - 1]:
        n = avail_remove(times, free, n, a)
    return n


def avail_fit(times: Any, free: Any, n: int, need: int, dur: int, before: int,
             lifted: int) -> int:
    """Earliest start ``< before`` with ``need`` slots free for ``dur`` seconds, or NONE.

    From ``lifted`` on (:data:`NEVER`: nowhere) the job's own hold is counted as lifted
    without lifting it: a segment starting there needs only no overcommitment
    (``free ≥ 0``), one reaching back before it needs ``need``. The earliest start is
    always a breakpoint: scan them, and after a segment that is too full resume past it
    (every window starting before it overlaps it).
    """
    i = 0
    while i < n:
        t = times[i]
        if t >= before:
            return NONE
        if free[i] < need:
            i += 1
            continue
        stop = t + dur
        j = i + 1
        while j < n and times[j] < stop:
            if free[j] < (need if times[j] < lifted else 0):
                break
            j += 1
        else:
            return t
        i = j + 1
    return NONE


def avail_compress(times: Any, free: Any, n: int, jobs: Any, first: int, count: int,
                  start: Any, end: Any, need: Any, now: int, key: Any, heap: Any, pos: Any,
                  moved: Any) -> tuple[int, int, int]:
    """Move reservations earlier, one at a time in the order of ``jobs[first:count]``.

    Job ``j`` holds ``need[j]`` slots over ``[start[j], end[j])`` (no reservation, or one
    due now, when ``start[j] ≤ now``: skipped). Each moves to its earliest fit with its own
    hold lifted, when that is earlier (a window starting before ``start[j]`` ends before
    ``end[j]``, so lifting the hold only relaxes the segments from ``start[j]`` on):
    ``start``/``end`` and its place in the book's heap follow, and the job is appended to
    ``moved``. Stops early when the arrays have no room for four more breakpoints.
    Returns ``(n, number moved, index reached)``.
    """
    room = len(times) - 4
    n_moved = 0
    i = first
    while i < count:
        if n > room:
            break
        j = jobs[i]
        s = start[j]
        if s > now:
            e = end[j]
            k = need[j]
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
        i += 1
    return n, n_moved, i


def avail_reserve(times: Any, free: Any, n: int, job: int, need: int, dur: int, before: int,
                 start: Any, end: Any, key: Any, heap: Any, pos: Any,
                 hn: int) -> tuple[int, int, int]:
    """Reserve ``need`` slots for ``job`` at its earliest fit before ``before`` (taking them
    from the availability, entering the job in the book); needs room for two more breakpoints.
    Returns ``(n, hn, start)``, the start NONE (nothing changed) when there is no fit."""
    t = avail_fit(times, free, n, need, dur, before, NEVER)
    if t == NONE:
        return n, hn, t
    n = avail_add(times, free, n, t, t + dur, -need)
    start[job] = t
    end[job] = t + dur
    return n, heap_push(key, heap, pos, hn, t, job), t


# ---- a binary heap of ids by (key, id), the keys kept by heap position (no indirection in
# the hot loops); ``pos[id]`` is the id's place (-1: none) when ``pos`` is not empty. The
# book of reservations (jobs by start, moved earlier by ``heap_fix``) and the compiled loops'
# end events (numbered in push order, by time) are this heap. ----


def heap_fix(key: Any, ids: Any, pos: Any, hn: int, k: int) -> None:
    """Restore the order of the heap of ``hn`` entries after the key at position ``k``
    changed: the entry moves towards the root while its parent comes after it, else
    towards the leaves while its first child comes before it. (The heap's functions never
    assign to a parameter: Numba copies them into their callers.)"""
    i = k
    kk = key[i]
    j = ids[i]
    track = len(pos) > 0
    up = i > 0
    while True:
        if up:  # the parent
            c = (i - 1) >> 1
            kc = key[c]
            a = ids[c]
            ahead = kc > kk or (kc == kk and a > j)
        else:  # the first of the children
            c = 2 * i + 1
            if c >= hn:
                break
            kc = key[c]
            a = ids[c]
            if c + 1 < hn:
                kb = key[c + 1]
                b = ids[c + 1]
                if kb < kc or (kb == kc and b < a):
                    c += 1
                    kc = kb
                    a = b
            ahead = kc < kk or (kc == kk and a < j)
        if ahead:  # it takes the entry's place
            key[i] = kc
            ids[i] = a
            if track:
                pos[a] = i
            i = c
            if up and i == 0:
                break
        elif up and i == k:
            up = False  # it did not move up: down, maybe
        else:
            break
    key[i] = kk
    ids[i] = j
    if track:
        pos[j] = i


def heap_push(key: Any, ids: Any, pos: Any, hn: int, value: int, j: int) -> int:
    """Enter ``j`` with key ``value``; returns the heap's new size."""
    key[hn] = value
    ids[hn] = j
    heap_fix(key, ids, pos, hn + 1, hn)
    return hn + 1


def heap_pop(key: Any, ids: Any, pos: Any, hn: int) -> int:
    """Remove the root (``ids[0]``, key ``key[0]``); returns the heap's new size."""
    if len(pos) > 0:
        pos[ids[0]] = -1
    m = hn - 1
    if m > 0:
        key[0] = key[m]
        ids[0] = ids[m]
        heap_fix(key, ids, pos, m, 0)
    return m


def book_pop_due(start: Any, key: Any, heap: Any, pos: Any, hn: int, now: int,
                 out: Any) -> tuple[int, int]:
    """Take every reservation starting at or before ``now`` out of the book (the heap
    ``key``/``heap``/``pos`` of jobs by start), by (start, job), into ``out``. Returns
    ``(hn, number taken)``."""
    count = 0
    while hn > 0 and key[0] <= now:
        j = heap[0]
        out[count] = j
        count += 1
        hn = heap_pop(key, heap, pos, hn)
        start[j] = NONE
    return hn, count


def grown(a: Any, size: int) -> Any:
    """``a`` copied into a new array of ``size`` elements (compiled code only)."""
    out = np.empty(size, a.dtype)
    out[: a.shape[0]] = a
    return out


def avail_min_free(free: Any, n: int) -> int:
    """Smallest free count (negative = overcommitted)."""
    low = free[0]
    for k in range(1, n):
        if free[k] < low:
            low = free[k]
    return int(low)


def shift_in(keys: Any, vals: Any, n: int, k: int, key: int, val: float) -> int:
    """Insert ``(key, val)`` at position ``k`` of the ``n`` sorted pairs; returns ``n + 1``."""
    for m in range(n, k, -1):
        keys[m] = keys[m - 1]
        vals[m] = vals[m - 1]
    keys[k] = key
    vals[k] = val
    return n + 1
