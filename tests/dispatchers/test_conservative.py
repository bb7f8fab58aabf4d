"""Conservative backfilling: reservations never move later, jobs start at their reservation."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dispatchlab import Workload, simulate
from dispatchlab.dispatchers.rule_based.policy import Policy
from dispatchlab.dispatchers.rule_based.selection import Conservative
from tests.conftest import jobs
from tests.dispatchers.helpers import Recorded, Recording
from tests.dispatchers.strategies import instances


def _check_reservations(rec: Recording, start: dict[int, int]) -> None:
    """Every job was planned; plans only move earlier; the job starts at its last plan."""
    plans = rec.plans_of()
    for j, s in start.items():
        times = [t for _, t in plans[j]]
        assert times == sorted(times, reverse=True), (j, plans[j])
        assert s == times[-1], (j, s, plans[j])


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), order=st.sampled_from(["fifo", "sjf", "ljf", "most:cores"]),
       alloc=st.sampled_from(["first-fit", "best-fit", "worst-fit", "energy"]),
       estimate=st.sampled_from(["walltime", "real"]))
def test_conservative_never_delays_a_reservation(
    data: st.DataObject, order: str, alloc: str, estimate: str
) -> None:
    wl, plat = data.draw(instances(max_jobs=40))
    disp = Recorded(Policy(order, Conservative(), alloc, estimate))
    res = simulate(wl, plat, disp, on_infeasible="reject")
    ran = res.jobs[~res.jobs["rejected"]]
    _check_reservations(disp.recording, dict(zip(ran.index, ran["start"], strict=True)))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), depth=st.integers(1, 4))
def test_conservative_with_depth_keeps_its_reservations(data: st.DataObject, depth: int) -> None:
    wl, plat = data.draw(instances())
    disp = Recorded(Policy("fifo", Conservative(depth=depth)))
    res = simulate(wl, plat, disp, on_infeasible="reject")
    ran = res.jobs[~res.jobs["rejected"]]
    _check_reservations(disp.recording, dict(zip(ran.index, ran["start"], strict=True)))


def test_conservative_protects_every_reservation_where_easy_does_not() -> None:
    # 4 cores. A holds 3 until 100. B (2 cores) is the head: shadow 100, extra 2 cores.
    # C (4 cores) queues behind B. Y (1 core, 200 s) fits in the extra cores, so EASY starts
    # it at once and C must wait for Y; conservative has reserved C at 110 and puts Y after.
    wl = jobs((0, 100, 100, 3), (1, 10, 10, 2), (2, 10, 10, 4), (3, 200, 200, 1))
    easy = simulate(wl, "nodes=4,cores=1", "easy").jobs["start"].tolist()
    cons = simulate(wl, "nodes=4,cores=1", "conservative").jobs["start"].tolist()
    assert easy == [0, 100, 203, 3]
    assert cons == [0, 100, 110, 120]


def test_compression_moves_reservations_earlier() -> None:
    # A requests 100 s but ends at 20; B (all 4 cores) was reserved at 100 and starts at 20.
    wl = jobs((0, 20, 100, 4), (1, 10, 10, 4), (2, 10, 50, 2))
    disp = Recorded(Policy("fifo", "conservative"))
    res = simulate(wl, "nodes=4,cores=1", disp)
    assert res.jobs["start"].tolist() == [0, 20, 30]
    plans = disp.recording.plans_of()
    assert [t for _, t in plans[1]] == [100, 20]
    assert [t for _, t in plans[2]] == [110, 30]


def test_compression_moves_one_reservation_at_a_time() -> None:
    # All eight jobs arrive at 0 on 4 cores; job 2 requests 3 s but ends after 1.
    # Reservations at 0: j4 → 1, j5 → 1, j6 (3 cores) → 3, j7 (2 cores) → 2.
    # When j2 ends early, j6 could take [2, 3) if j7 were not there. Putting everything
    # back from scratch in FIFO order would give j6 → 2 and push j7 to 3; compressing one
    # reservation at a time (each put back no later than it was) keeps j7 at 2.
    wl = Workload.from_columns(
        submit=[0] * 8, runtime=[1, 1, 1, 2, 1, 1, 1, 1], walltime=[1, 1, 3, 2, 1, 2, 1, 1],
        units=[1, 1, 1, 1, 1, 1, 3, 2], req={"cores": [1] * 8},
    )
    disp = Recorded(Policy("fifo", "conservative"))
    res = simulate(wl, "nodes=4,cores=1", disp)
    assert res.jobs["start"].tolist() == [0, 0, 0, 0, 1, 1, 3, 2]
    plans = disp.recording.plans_of()
    assert plans[6] == [(0, 3)] and plans[7] == [(0, 2)]
