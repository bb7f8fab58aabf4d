"""Conservative backfilling with every reservation in power as well as nodes, against plain
conservative under the same cap."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dispatchlab import Platform, Workload, simulate
from dispatchlab.metrics.power_audit import it_power
from dispatchlab.platform.power import NodePowerSpec
from tests.dispatchers.helpers import Recorded
from tests.power.capped_workloads import draw_jobs, hungriest_job_w

SPEC = NodePowerSpec(idle=0.0, core_first=10.0, core=0.0, off=0.0)


def case() -> tuple[Workload, Platform]:
    # 4 one-core nodes at 10 W busy, cap 20 W. A (1 node, 100 s) runs from 0; H (2 nodes,
    # 10 s) has nodes at 1 but no power until A ends; C (1 node, 1000 s) has a node at 2;
    # D (1 node, 5 s) at 3 ends long before H's reservation.
    wl = Workload.from_columns(submit=[0, 1, 2, 3], runtime=[100, 10, 1000, 5],
                               walltime=[100, 10, 1000, 5], units=[1, 2, 1, 1],
                               req={"cores": [1, 1, 1, 1]})
    return wl, Platform.homogeneous(4, {"cores": 1}).with_node_model(SPEC)


def test_plain_conservative_makes_a_reserved_job_wait_for_power() -> None:
    wl, plat = case()
    res = simulate(wl, plat, "conservative", power_cap=20.0)
    # H's node-only reservation (at 1) finds no power (A's 10 W + 20 W); C takes the last
    # 10 W at 2; D (at 3) has a node but no power beside A and C until A ends at 100; H,
    # reserved again and again on nodes only, waits for C's end at 1002.
    assert res.jobs["start"].tolist() == [0, 1002, 2, 100]


def test_conservative_power_reserves_power_for_every_job() -> None:
    wl, plat = case()
    disp = Recorded(_policy())
    res = simulate(wl, plat, disp, power_cap=20.0)
    # H: at 1, A's 10 W + 20 W > 20 W; at A's expected end (100) 0 + 20 W fits → H at 100.
    # C: from 2 its 1000 s window meets H's [100, 110) (30 W); from 110 it is alone → 110.
    # D: [3, 8) beside A only (20 W) → starts at once.
    assert res.jobs["start"].tolist() == [0, 100, 110, 3]
    plans = disp.recording.plans_of()
    assert [t for _, t in plans[1]] == [100]
    assert [t for _, t in plans[2]] == [110]


def test_conservative_power_without_a_cap_is_conservative() -> None:
    wl, plat = case()
    a = simulate(wl, plat, "conservative").jobs["start"].tolist()
    b = simulate(wl, plat, "conservative-power").jobs["start"].tolist()
    assert a == b == [0, 1, 2, 11]  # D waits for H's end (all 4 nodes busy)


def _policy() -> object:
    from dispatchlab.dispatchers.rule_based.presets import build_preset
    return build_preset("conservative-power")


@st.composite
def capped(draw: st.DrawFn) -> tuple[Workload, Platform, float]:
    """Small random workloads on a node-model platform, run times equal to requests."""
    n_nodes = draw(st.integers(2, 4))
    cores = draw(st.sampled_from([1, 2, 4]))
    spec = NodePowerSpec(idle=draw(st.sampled_from([0.0, 10.0, 50.0])),
                         core_first=draw(st.sampled_from([5.0, 30.0])),
                         core=draw(st.sampled_from([0.0, 2.0, 7.5])), off=0.0)
    plat = Platform.homogeneous(n_nodes, {"cores": cores}).with_node_model(spec)
    wl = draw_jobs(draw, n_nodes, cores, 14, runtimes=(1, 60), extra_walltime=None,
                   max_submit=80)
    need = hungriest_job_w(wl, spec)
    cap = n_nodes * spec.idle + need + draw(st.floats(0.0, 150.0))
    return wl, plat, cap


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=capped(), alloc=st.sampled_from(["first-fit", "best-fit", "energy-model"]))
def test_no_job_starts_after_its_first_reservation_and_power_stays_under_the_cap(
        case: tuple[Workload, Platform, float], alloc: str) -> None:
    from dispatchlab.dispatchers.rule_based.policy import Policy
    from dispatchlab.dispatchers.rule_based.selection import ConservativePower

    wl, plat, cap = case
    disp = Recorded(Policy("fifo", ConservativePower(), alloc))
    res = simulate(wl, plat, disp, power_cap=cap, loop="general")
    starts = res.jobs["start"].tolist()
    assert all(s >= 0 for s in starts)
    plans = disp.recording.plans_of()
    for j, s in enumerate(starts):
        times = [t for _, t in plans.get(j, [])]
        assert times, (j, s)  # every job held a reservation
        assert times == sorted(times, reverse=True), (j, times)  # only ever moved earlier
        assert s <= times[0], (j, s, times)
        assert s == times[-1], (j, s, times)
    _, watts = it_power(res.recorder)
    assert watts.max() <= cap + 1e-6
    assert res.summary["power"]["over_cap_seconds"] == 0.0


@pytest.mark.slow
def test_conservative_power_plans_with_an_announced_cap_rise() -> None:
    from dispatchlab.engine.scenario import Change, Scenario

    # 4 one-core nodes at 10 W busy; the cap is 20 W now and announced to rise to 40 W at
    # 60. A (1 node, 100 s) runs from 0; H (2 nodes, 10 s) at 1: 30 W over [1, 11) > 20 W,
    # but over [60, 70) 30 W ≤ 40 W → reserved at the rise. D (1 node, 200 s) at 2: 20 W
    # before 60, 40 W beside A and H, then less → starts at once.
    wl = Workload.from_columns(submit=[0, 1, 2], runtime=[100, 10, 200],
                               walltime=[100, 10, 200], units=[1, 2, 1],
                               req={"cores": [1, 1, 1]})
    _, plat = case()
    disp = Recorded(_policy())
    rise = Scenario([Change(60, "power_cap", 40.0)])
    res = simulate(wl, plat, disp, power_cap=20.0, scenario=rise)
    assert res.jobs["start"].tolist() == [0, 60, 2]
    assert [t for _, t in disp.recording.plans_of()[1]] == [60]
    assert res.summary["power"]["over_cap_seconds"] == 0.0


def test_conservative_power_keeps_a_window_under_an_announced_drop() -> None:
    from dispatchlab.engine.scenario import Change, Scenario

    # cap 30 W now, announced 10 W from 50 to 200, then 30 W. A (1 node, 100 s) at 0
    # (alone, at the cap during the drop). B (1 node, 20 s) at 1 ends before the drop:
    # 20 W ≤ 30 W → at once. C (1 node, 100 s) at 2: [2, 102) meets the drop beside A
    # (20 W > 10 W) → from A's end (100) alone at 10 W → reserved at 100. Plain
    # conservative starts C at 2 and the machine is over the cap from 50 to 100.
    wl = Workload.from_columns(submit=[0, 1, 2], runtime=[100, 20, 100],
                               walltime=[100, 20, 100], units=[1, 1, 1],
                               req={"cores": [1, 1, 1]})
    _, plat = case()
    drop = Scenario([Change(50, "power_cap", 10.0), Change(200, "power_cap", 30.0)])
    res = simulate(wl, plat, "conservative-power", power_cap=30.0, scenario=drop)
    assert res.jobs["start"].tolist() == [0, 1, 100]
    assert res.summary["power"]["over_cap_seconds"] == 0.0
