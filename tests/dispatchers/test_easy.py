"""EASY backfilling: agreement with an independent reference, and the head's guarantee."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dispatchlab import Platform, Workload, simulate
from dispatchlab.dispatchers import machine as machine_mod
from dispatchlab.dispatchers.rule_based import policy as policy_mod
from dispatchlab.dispatchers.rule_based.orderings import get_ordering
from dispatchlab.dispatchers.rule_based.policy import Policy
from dispatchlab.dispatchers.rule_based.selection import Easy
from dispatchlab.engine.simulator import map_requests
from dispatchlab.engine.state import SystemView
from dispatchlab.metrics.results import Results
from dispatchlab.workload import SwfOptions, load_swf
from tests.conftest import jobs, shared_trace
from tests.dispatchers.helpers import Recorded, Recording, reference_easy
from tests.dispatchers.strategies import instances


@pytest.mark.parametrize(
    ("trace", "skip", "limit", "total", "estimate"),
    [
        ("KTH-SP2-1996-2.1-cln.swf.gz", 0, 4000, 100, "walltime"),
        ("CTC-SP2-1996-3.1-cln.swf.gz", 20000, 4000, 338, "walltime"),
        ("HPC2N-2002-2.2-cln.swf.gz", 50000, 5000, 240, "walltime"),
        ("KTH-SP2-1996-2.1-cln.swf.gz", 10000, 3000, 100, "real"),
    ],
)
def test_easy_matches_reference_per_job(
    trace: str, skip: int, limit: int, total: int, estimate: str
) -> None:
    wl = load_swf(shared_trace(trace), SwfOptions(skip=skip, limit=limit))
    res = simulate(wl, f"nodes={total},cores=1", f"select=easy,estimate={estimate}")
    duration = np.minimum(wl.runtime, wl.walltime)
    est = np.maximum(wl.walltime if estimate == "walltime" else duration, 1)
    ref = reference_easy(wl.submit, duration, est, wl.units, total)
    got = res.jobs["start"].to_numpy()
    mism = np.flatnonzero(got != ref)
    assert len(mism) == 0, f"{len(mism)} of {len(ref)} starts differ, first at {mism[:5]}"
    # Backfilling really happened: some job started before an earlier-submitted one.
    assert (np.diff(got) < 0).any()


def test_reference_easy_backfills_by_hand() -> None:
    # 4 cores. A runs [0,10) on 3; B (4 cores) must wait for A; C (1 core, 5 s) backfills
    # because it ends by B's shadow time 10; D (1 core, 50 s) does not (no extra core).
    submit = np.array([0, 1, 2, 3])
    dur = np.array([10, 5, 5, 50])
    procs = np.array([3, 4, 1, 1])
    ref = reference_easy(submit, dur, np.array([10, 5, 5, 50]), procs, 4)
    assert ref.tolist() == [0, 10, 2, 15]


def test_easy_by_hand_with_extra_nodes() -> None:
    # 4 cores: A [0,100) on 2. B needs 3 → shadow 100, extra = 4 - 3 = 1 core.
    # C (1 core, 500 s) backfills on the extra core; D (1 core, 500 s) then cannot.
    wl = jobs((0, 100, 100, 2), (1, 10, 10, 3), (2, 500, 500, 1), (3, 500, 500, 1))
    res = simulate(wl, "nodes=4,cores=1", "easy")
    assert res.jobs["start"].tolist() == [0, 100, 2, 110]


def _check_head_promises(rec: Recording, start: dict[int, int], rank: list[int]) -> None:
    """A head's reservation holds until it starts, unless a job of higher priority
    (smaller ``rank``) starts first: EASY promises the head that no *backfilled* job
    delays it, not that better jobs arriving later will not overtake it.
    """
    promise: tuple[int, int] | None = None
    for call in rec.calls:
        for kind, j, t in call.decisions:
            if kind == "plan":
                promise = (j, t)
            elif promise is not None and promise[0] == j:
                assert start[j] <= promise[1], (j, start[j], promise)
                promise = None
            elif promise is not None and rank[j] < rank[promise[0]]:
                promise = None


def _check_fifo_plans(rec: Recording, start: dict[int, int]) -> None:
    """Under FIFO the head never changes before it starts: its first plan already holds
    and later plans only move earlier."""
    for j, plans in rec.plans_of().items():
        times = [t for _, t in plans]
        assert start[j] <= times[0], (j, start[j], plans)
        assert times == sorted(times, reverse=True), (j, plans)


def _rank(wl: Workload, plat: Platform, order: str) -> list[int]:
    """Static priority rank of every job under ``order``, ties by job index."""
    view = SystemView(wl, plat, map_requests(wl, plat))
    view._advance(wl.n_jobs)
    idx = np.arange(wl.n_jobs)
    keys = get_ordering(order).keys(view, idx)
    rank = np.empty(wl.n_jobs, dtype=np.int64)
    rank[np.lexsort((idx, *reversed(keys)))] = idx
    return rank.tolist()


def _starts(res: Results) -> dict[int, int]:
    ran = res.jobs[~res.jobs["rejected"]]
    return dict(zip(ran.index.tolist(), ran["start"].tolist(), strict=True))


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), alloc=st.sampled_from(["first-fit", "best-fit", "worst-fit", "energy"]),
       estimate=st.sampled_from(["walltime", "real"]))
def test_fifo_easy_never_delays_the_head(data: st.DataObject, alloc: str, estimate: str) -> None:
    wl, plat = data.draw(instances(max_jobs=40))
    disp = Recorded(Policy("fifo", Easy(), alloc, estimate))
    res = simulate(wl, plat, disp, on_infeasible="reject")
    _check_head_promises(disp.recording, _starts(res), list(range(wl.n_jobs)))
    _check_fifo_plans(disp.recording, _starts(res))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), order=st.sampled_from(["sjf", "ljf", "f1", "most:cores"]),
       alloc=st.sampled_from(["first-fit", "best-fit", "energy"]))
def test_easy_keeps_its_promise_to_the_current_head(
    data: st.DataObject, order: str, alloc: str
) -> None:
    wl, plat = data.draw(instances(max_jobs=40))
    disp = Recorded(Policy(order, Easy(), alloc))
    res = simulate(wl, plat, disp, on_infeasible="reject")
    _check_head_promises(disp.recording, _starts(res), _rank(wl, plat, order))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), depth=st.integers(1, 4))
def test_easy_depth_never_delays_the_head(data: st.DataObject, depth: int) -> None:
    wl, plat = data.draw(instances())
    disp = Recorded(Policy("fifo", Easy(depth=depth), "first-fit"))
    res = simulate(wl, plat, disp, on_infeasible="reject")
    _check_head_promises(disp.recording, _starts(res), list(range(wl.n_jobs)))
    _check_fifo_plans(disp.recording, _starts(res))


def test_depth_limits_backfilling() -> None:
    # 3 cores; A holds one for 100 s; B needs all three (the head, no extra core).
    # C, D, E are 5-s one-core jobs: with depth 2 only the job right behind the head is
    # considered at each decision point, so they run one after the other.
    wl = jobs((0, 100, 100, 1), (1, 10, 10, 3), (2, 5, 5, 1), (2, 5, 5, 1), (2, 5, 5, 1))
    limited = simulate(wl, "nodes=3,cores=1", "select=easy,depth=2").jobs["start"].tolist()
    full = simulate(wl, "nodes=3,cores=1", "easy").jobs["start"].tolist()
    assert full == [0, 100, 2, 2, 7]
    assert limited == [0, 100, 2, 7, 12]


@pytest.mark.parametrize(
    ("trace", "skip", "limit", "total"),
    [
        ("KTH-SP2-1996-2.1-cln.swf.gz", 5000, 2500, 100),
        ("CTC-SP2-1996-3.1-cln.swf.gz", 30000, 2500, 338),
    ],
)
def test_easy_on_node_matrices_agrees_with_slot_counts(
    monkeypatch: pytest.MonkeyPatch, trace: str, skip: int, limit: int, total: int
) -> None:
    """On one-core nodes EASY's general node-matrix path reproduces the slot-count path.

    (Conservative does not: node profiles pin each reservation to nodes for its whole
    window, as a real multi-resource scheduler must, while slot counts let any free slot
    serve; both are correct, they plan differently.)
    """
    wl = load_swf(shared_trace(trace), SwfOptions(skip=skip, limit=limit))
    plat = f"nodes={total},cores=1"
    slots = simulate(wl, plat, "easy").jobs["start"].to_numpy()
    monkeypatch.setattr(policy_mod, "make_machine",
                        lambda view, alloc, est: machine_mod.NodeMachine(view, alloc, est))
    nodes = simulate(wl, plat, "easy").jobs["start"].to_numpy()
    mism = np.flatnonzero(slots != nodes)
    assert len(mism) == 0, f"{len(mism)} starts differ, first {mism[:5]}"
