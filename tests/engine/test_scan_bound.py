"""EASY's backfill scan in the compiled loop does not grow with the square of the queue.

An overloaded machine keeps a long queue of jobs that cannot start; a scan that examines
every one of them at every decision point costs queue × events. The loop indexes the queue
by rank (minima of units, estimate and least power per subtree) and jumps from one job
that may start to the next: the entries it examines stay near-linear in the jobs, with the
same schedule as the general loop.
"""

from __future__ import annotations

import numpy as np
import pytest

from dispatchlab.dispatchers.rule_based.compiled.kernel import AVAILABLE, slot_loop_kernel
from dispatchlab.workload.workload import Workload
from tests.conftest import jobs
from tests.engine.test_fastpath import assert_same

pytestmark = pytest.mark.skipif(not AVAILABLE, reason="Numba disabled")


def overloaded(n: int, short_every: int = 0) -> list[tuple[int, int, int, int]]:
    """One long job holding 9 of 10 slots, then ``n`` jobs of 2 units (none fits the one
    slot left while it runs); with ``short_every``, every such job is a short 1-unit one
    instead (it backfills at once)."""
    rows = [(0, 10 * n, 10 * n, 9)]
    for k in range(1, n + 1):
        if short_every and k % short_every == 0:
            rows.append((k, 5, 5, 1))
        else:
            rows.append((k, 100, 100, 2))
    return rows


def scanned(rows: list[tuple[int, int, int, int]]) -> int:
    """Queue entries EASY's backfill scans examined (the compiled loop's own count)."""
    submit, runtime, walltime, units = (np.array(c, np.int64) for c in zip(*rows, strict=True))
    one = np.ones(1)
    out = slot_loop_kernel()(
        submit, np.minimum(runtime, walltime), units, np.maximum(walltime, 1),
        np.arange(len(rows), dtype=np.int64), np.zeros(len(rows), np.bool_),
        np.ones(10, np.int64), True, -1, False, False, 0.0, 0.0, np.zeros((1, 1)), one, 0.0,
        np.zeros(0, np.int64), np.zeros(0), 0, np.zeros(0), np.zeros(0))
    assert out[0] == 0  # done
    return int(out[12])


def test_scan_skips_a_queue_where_nothing_fits() -> None:
    # a full scan at every submission would examine about n²/2 = 8,000,000 entries: every
    # queued job asks 2 units, 1 is free; the queue index rules them all out at once
    n = 4000
    assert scanned(overloaded(n)) <= n


def test_scan_jumps_to_the_jobs_that_can_start() -> None:
    # a short job at the tail is reached (it starts) without examining the blocked jobs
    # before it: the entries examined grow linearly with the jobs
    n = 4000
    count = scanned(overloaded(n, short_every=50))
    assert count <= 2 * n, count
    doubled = scanned(overloaded(2 * n, short_every=50))
    assert doubled <= 2.5 * count + 100, (count, doubled)


def test_overloaded_queue_same_schedule_as_general_loop() -> None:
    wl: Workload = jobs(*overloaded(300))
    assert_same(wl, "nodes=10,cores=1", "easy")
    assert_same(wl, "nodes=10,cores=1", "easy-sjf")
