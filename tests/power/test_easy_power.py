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
