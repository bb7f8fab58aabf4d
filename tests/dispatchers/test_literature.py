"""Behaviour the literature reports, on the first 5,000 jobs of three real traces.

Backfilling never lowers utilization and cuts waits and bounded slowdown well below strict
FIFO (Lifka 1995; Mu'alem & Feitelson 2001), and conservative backfilling stays close to
EASY on these workloads. Full-trace figures are in ``benchmarks/bench_dispatchers.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

from dispatchlab import simulate
from dispatchlab.workload import SwfOptions, load_swf
from tests.conftest import shared_trace

TRACES = [
    ("HPC2N-2002-2.2-cln.swf.gz", 240),
    ("CTC-SP2-1996-3.1-cln.swf.gz", 338),
    ("KTH-SP2-1996-2.1-cln.swf.gz", 100),
]


@pytest.fixture(scope="module", params=TRACES, ids=[t[0].split("-")[0] for t in TRACES])
def summaries(request: pytest.FixtureRequest) -> dict[str, dict[str, Any]]:
    name, procs = request.param
    wl = load_swf(shared_trace(name), SwfOptions(limit=5000))
    plat = f"nodes={procs},cores=1"
    return {d: simulate(wl, plat, d).summary for d in ("fifo", "easy", "conservative")}


def test_easy_beats_fifo(summaries: dict[str, dict[str, Any]]) -> None:
    fifo, easy = summaries["fifo"], summaries["easy"]
    assert easy["utilization"] >= fifo["utilization"]
    assert easy["mean_bounded_slowdown"] < 0.5 * fifo["mean_bounded_slowdown"]
    assert easy["mean_wait"] < fifo["mean_wait"]


def test_conservative_close_to_easy(summaries: dict[str, dict[str, Any]]) -> None:
    easy, cons = summaries["easy"], summaries["conservative"]
    assert cons["utilization"] >= summaries["fifo"]["utilization"]
    assert cons["mean_bounded_slowdown"] < 0.5 * summaries["fifo"]["mean_bounded_slowdown"]
    assert 0.5 < cons["mean_wait"] / easy["mean_wait"] < 2.0
