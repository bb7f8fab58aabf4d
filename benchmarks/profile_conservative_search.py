"""Where conservative backfilling's compressions spend their work on an overloaded machine:
counts of the elementary operations of every compression of a run, exactly.

The general loop runs the case (``hpc2n-30``: HPC2N's first N jobs on 30 two-core nodes,
FIFO ``conservative``; its compressions are those of the compiled loop, the same book);
before each compression of the slot book, a counting copy of the compression
(:func:`counted_compress`: the operations of
:func:`~dispatchlab.engine.compiled.slot_availability_ops.avail_compress` step for step,
each step counted) replays it on a copy of the availability and the book, then the real
one runs. Counted, summed over the run:

- ``considered``: reservations the compression looked at (queue order, one per queued job
  holding a reservation after now);
- ``walked``: availability segments the earliest-fit searches examined; ``tried``: the
  candidate starts among them (a segment with the job's slots free, where a window is
  checked; after a window fails the search resumes past the segment that failed it);
- ``moves``: reservations moved (each one a ``Plan`` to the engine);
- ``shifted``: array elements moved by inserting or deleting breakpoints (two ranges per
  move), ``ranged``: segments whose count a move changed;
- ``segments``: availability segments at each search, summed (the walk's bound);
- ``walked_moving``: the part of ``walked`` spent by searches that moved their reservation
  (the rest: searches that found nothing earlier, which the general loop's skipping of
  reservations that cannot move mostly avoids).

``--sizes`` sets N. Prints a JSON line per size. Needs /work/shared/traces (or
``DISPATCHLAB_TRACES``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
NAMES = ("considered", "walked", "tried", "moves", "shifted", "ranged", "segments",
         "compressions", "walked_moving")


def counted_compress(times: Any, free: Any, n: int, jobs: Any, count: int, start: Any,
                     end: Any, need: Any, now: int, c: Any) -> int:
    """The compression of ``avail_compress`` on these arrays (the book's heap left out: it
    does not change where reservations go), each elementary step counted into ``c``
    (indices as :data:`NAMES`); returns the new ``n``."""
    c[7] += 1
    for i in range(count):
        j = jobs[i]
        s = start[j]
        if s <= now:
            continue
        c[0] += 1
        e = end[j]
        k = need[j]
        dur = e - s
        c[6] += n
        # the earliest-fit search (avail_fit with the job's own hold lifted from s)
        t = -1
        q = 0
        walked = c[1]
        while q < n:
            c[1] += 1
            if times[q] >= s:
                break
            if free[q] < k:
                q += 1
                continue
            c[2] += 1
            stop = times[q] + dur
            r = q + 1
            ok = True
            while r < n and times[r] < stop:
                c[1] += 1
                if free[r] < (k if times[r] < s else 0):
                    ok = False
                    break
                r += 1
            if ok:
                t = times[q]
                break
            q = r + 1
        if t < 0:
            continue
        c[3] += 1
        c[8] += c[1] - walked
        n = _add(times, free, n, s, e, k, c)
        n = _add(times, free, n, t, t + dur, -k, c)
        start[j] = t
        end[j] = t + dur
    return n


def _add(times: Any, free: Any, n: int, t0: int, t1: int, delta: int, c: Any) -> int:
    """``avail_add``, counting shifted elements and updated segments."""
    a, n = _split(times, free, n, t0, c)
    b, n = _split(times, free, n, t1, c)
    for q in range(a, b):
        free[q] += delta
    c[5] += b - a
    if b < n and free[b] == free[b - 1]:
        c[4] += n - 1 - b
        for m in range(b, n - 1):
            times[m] = times[m + 1]
            free[m] = free[m + 1]
        n -= 1
    if a > 0 and free[a] == free[a - 1]:
        c[4] += n - 1 - a
        for m in range(a, n - 1):
            times[m] = times[m + 1]
            free[m] = free[m + 1]
        n -= 1
    return n


def _split(times: Any, free: Any, n: int, t: int, c: Any) -> tuple[int, int]:
    lo, hi = 0, n
    while lo < hi:
        m = (lo + hi) >> 1
        if times[m] < t:
            lo = m + 1
        else:
            hi = m
    a = lo
    if a == n or times[a] != t:
        c[4] += n - a
        for m in range(n, a, -1):
            times[m] = times[m - 1]
            free[m] = free[m - 1]
        times[a] = t
        free[a] = free[a - 1]
        n += 1
    return a, n


def run(n_jobs: int) -> dict[str, Any]:
    """The counts of ``hpc2n-30`` on its first ``n_jobs`` jobs."""
    from numba import njit

    sys.path.insert(0, str(HERE))
    from dispatchlab.dispatchers.rule_based.policy import Policy
    from dispatchlab.dispatchers.rule_based.selection import Conservative
    from dispatchlab.dispatchers.slot_availability import SlotReservations
    from dispatchlab.platform.resolve import resolve_platform
    from dispatchlab.simulation import simulate
    from dispatchlab.workload import load_swf
    from schedule_digests import HPC2N

    if not hasattr(_add, "py_func"):  # compiled once per process
        globals().update(_split=njit(_split), _add=njit(_add),
                         counted_compress=njit(counted_compress))
    counted = counted_compress
    c = np.zeros(len(NAMES), np.int64)
    real = SlotReservations.compress

    def compress(book: SlotReservations, order: list[int], now: int) -> Any:
        avail = book.availability
        avail.sync()
        size = len(avail._times) + 4 * len(order) + 8
        times = np.zeros(size, np.int64)
        free = np.zeros(size, np.int64)
        times[:avail.n] = avail._times[:avail.n]
        free[:avail.n] = avail._free[:avail.n]
        counted(times, free, avail.n, np.array(order, np.int64), len(order),
                book.start.copy(), book.end.copy(), avail.need, now, c)
        return real(book, order, now)

    SlotReservations.compress = compress  # type: ignore[method-assign]
    wl = load_swf(HPC2N)
    wl = wl.take(np.arange(min(n_jobs, wl.n_jobs), dtype=np.int64))
    sel = Conservative()
    cpu = time.process_time()
    simulate(wl, resolve_platform("nodes=30,cores=2"), Policy("fifo", sel), loop="general",
             check=False, tables=False, on_infeasible="reject")
    stats = sel.run_stats()
    assert stats["moves"] == c[3], (stats, c)  # the replay made the run's own moves
    return {"jobs": n_jobs, "cpu_s_with_replay": round(time.process_time() - cpu, 2),
            **{name: int(v) for name, v in zip(NAMES, c, strict=True)}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="*", default=[2500, 5000, 10000])
    args = ap.parse_args()
    for n in args.sizes:
        print(json.dumps(run(n)), flush=True)


if __name__ == "__main__":
    main()
