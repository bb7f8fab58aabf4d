"""EASY with the head's reservation in power as well as nodes, against plain EASY."""

from __future__ import annotations

from dispatchlab import Platform, Workload, simulate
from dispatchlab.platform.power import NodePowerSpec

SPEC = NodePowerSpec(idle=0.0, core_first=10.0, core=0.0, off=0.0)


def case() -> tuple[Workload, Platform]:
    # 4 one-core nodes at 10 W busy, cap 20 W. A (1 node, 100 s) runs from 0; the head H
    # (2 nodes, 10 s) has nodes at 1 but no power until A ends; C (1 node, 1000 s) would
    # fit beside H's nodes.
    wl = Workload.from_columns(submit=[0, 1, 2], runtime=[100, 10, 1000],
                               walltime=[100, 10, 1000], units=[1, 2, 1],
                               req={"cores": [1, 1, 1]})
    return wl, Platform.homogeneous(4, {"cores": 1}).with_node_model(SPEC)


def test_plain_easy_lets_a_backfill_take_the_heads_power() -> None:
    wl, plat = case()
    res = simulate(wl, plat, "easy", power_cap=20.0)
    assert res.jobs["start"].tolist() == [0, 1002, 2]  # H waits for C


def test_easy_power_reserves_power_for_the_head() -> None:
    wl, plat = case()
    res = simulate(wl, plat, "easy-power", power_cap=20.0)
    # shadow: at A's end (100) 0 + 20 W fits; no extra power then, so C waits for H
    assert res.jobs["start"].tolist() == [0, 100, 110]


def test_easy_power_without_a_cap_is_easy() -> None:
    wl, plat = case()
    a = simulate(wl, plat, "easy")
    b = simulate(wl, plat, "easy-power")
    assert a.jobs["start"].tolist() == b.jobs["start"].tolist() == [0, 1, 2]


def test_easy_power_plans_with_an_announced_cap_rise() -> None:
    from dispatchlab.engine.scenario import Change, Scenario

    # 4 one-core nodes at 10 W busy; the cap is 20 W now and announced to rise to 40 W at
    # 60. A (1 node, 100 s) runs from 0; H (2 nodes, 10 s) at 1 has nodes but no power
    # (30 W). D (1 node, 200 s) at 2 would run past any shadow time.
    wl = Workload.from_columns(submit=[0, 1, 2], runtime=[100, 10, 200],
                               walltime=[100, 10, 200], units=[1, 2, 1],
                               req={"cores": [1, 1, 1]})
    plat = Platform.homogeneous(4, {"cores": 1}).with_node_model(SPEC)
    rise = Scenario([Change(60, "power_cap", 40.0)])
    res = simulate(wl, plat, "easy-power", power_cap=20.0, scenario=rise)
    # H's shadow is the rise (60): its nodes are free then and 10 + 20 W ≤ 40 W, leaving
    # 10 W and one node beside it, which D takes at once (20 W now; 40 W with H at 60).
    # Planning with today's 20 W instead, the shadow would be A's end (100) with no power
    # left over, and D would wait for H (both at 60).
    assert res.jobs["start"].tolist() == [0, 60, 2]
    assert res.summary["power"]["over_cap_seconds"] == 0.0
