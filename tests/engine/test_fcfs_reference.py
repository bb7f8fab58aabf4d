"""Strict FIFO agrees with an independent, minimal FCFS simulator on real traces."""

from __future__ import annotations

import heapq

import numpy as np
import pytest

from dispatchlab import simulate
from dispatchlab.workload import SwfOptions, load_swf
from tests.conftest import shared_trace


def reference_fcfs(submit: np.ndarray, duration: np.ndarray, procs: np.ndarray,
                   total: int) -> np.ndarray:
    """Textbook FCFS over a pool of ``total`` processors: the head starts when it fits."""
    starts = np.zeros(len(submit), dtype=np.int64)
    free = total
    ends: list[tuple[int, int]] = []
    clock = 0
    for i in range(len(submit)):
        clock = max(clock, int(submit[i]))
        while ends and ends[0][0] <= clock:
            free += heapq.heappop(ends)[1]
        while free < procs[i]:
            t, p = heapq.heappop(ends)
            clock = max(clock, t)
            free += p
            while ends and ends[0][0] <= clock:
                free += heapq.heappop(ends)[1]
        starts[i] = clock
        free -= int(procs[i])
        heapq.heappush(ends, (clock + int(duration[i]), int(procs[i])))
    return starts


@pytest.mark.parametrize(
    ("trace", "limit", "platform", "total"),
    [
        ("KTH-SP2-1996-2.1-cln.swf.gz", 6000, "nodes=100,cores=1", 100),
        ("CTC-SP2-1996-3.1-cln.swf.gz", 6000, "nodes=338,cores=1", 338),
        ("HPC2N-2002-2.2-cln.swf.gz", 8000, "nodes=120,cores=2", 240),
        ("lublin-256-a.swf", 5000, "nodes=32,cores=8", 256),
    ],
)
def test_fifo_waits_match_reference(trace: str, limit: int, platform: str, total: int) -> None:
    wl = load_swf(shared_trace(trace), SwfOptions(limit=limit))
    res = simulate(wl, platform, "fifo")
    duration = np.minimum(wl.runtime, wl.walltime)
    ref = reference_fcfs(wl.submit, duration, wl.units, total)
    mism = np.flatnonzero(res.jobs["start"].to_numpy() != ref)
    assert len(mism) == 0, f"{len(mism)} mismatches, first job index {mism[:5]}"
