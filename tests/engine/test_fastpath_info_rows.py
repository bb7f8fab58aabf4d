"""Informational scenario rows (temperature, energy prices, desired utilization, signals)
are decision points of the engine that change nothing a rule-based policy reads: on a fixed
machine the strict and EASY loop takes them (as cap rows keeping the cap in force) and
gives exactly the general loop's run — every segment, plan, sample, power sample, decision
point and summary entry (``assert_same``)."""

from __future__ import annotations

import numpy as np
import pytest

from dispatchlab import Platform, Workload, simulate
from dispatchlab.dispatchers.rule_based.compiled.kernel import AVAILABLE
from dispatchlab.engine.scenario import Change, Scenario
from dispatchlab.platform.power import GENERIC
from dispatchlab.platform.resolve import resolve_platform
from dispatchlab.workload import SwfOptions, load_swf
from tests.conftest import shared_trace
from tests.engine.test_fastpath import assert_same

pytestmark = pytest.mark.skipif(not AVAILABLE, reason="Numba disabled")

TEMPS = "gen:temperature:season=summer,days=30"  # a row every 900 s
TARIFF = "gen:day-night:what=energy_price,day=0.24,night=0.09,days=30"
DISPATCHERS = ["fifo", "easy", "easy-sjf", "order=sjf,select=easy,depth=3,estimate=real",
               "order=ljf,select=strict"]


def random_jobs(seed: int, n: int = 300) -> Workload:
    """Jobs over ~23 days, some killed at their wall time, up to 8 one-core units."""
    rng = np.random.default_rng(seed)
    runtime = rng.integers(60, 40_000, n)
    walltime = np.where(rng.random(n) < 0.2, runtime // 2 + 1, runtime + rng.integers(0, 9000, n))
    return Workload.from_columns(submit=np.sort(rng.integers(0, 2_000_000, n)),
                                 runtime=runtime, walltime=walltime,
                                 units=rng.integers(1, 9, n), req={"cores": [1] * n})


@pytest.mark.parametrize("dispatcher", DISPATCHERS)
def test_temperature_and_tariff_rows(dispatcher: str) -> None:
    res = assert_same(random_jobs(1), "nodes=16,cores=1", dispatcher, scenario=[TEMPS, TARIFF])
    rec = res.recorder
    assert rec is not None and len(rec.decision_at) > 2 * 300  # the rows' own points too


def test_rows_at_the_times_of_events_and_signals() -> None:
    wl = random_jobs(2, 80)
    times = [int(t) for t in wl.submit[::7]] + [int(t) for t in (wl.submit + wl.runtime)[::9]]
    scen = Scenario([Change(t, "signal", 1.0, "x") for t in times]
                    + [Change(t, "desired_utilization", 0.5) for t in times[::2]])
    for disp in ("fifo", "easy"):
        assert_same(wl, "nodes=8,cores=1", disp, scenario=scen)


def test_with_a_fixed_and_a_varying_cap() -> None:
    wl = random_jobs(3)
    plat = Platform.homogeneous(16, {"cores": 1}).with_node_model(GENERIC)
    low = 16 * GENERIC.idle + 8 * GENERIC.core_first + 1.0
    walk = (f"gen:random-walk:what=power_cap,mean={low + 400},range=400,step=200,"
            "period=7200,until=3000000,seed=4")
    for disp in ("fifo", "easy"):
        fixed = assert_same(wl, plat, disp, scenario=[TARIFF], power_cap=low + 300)
        assert fixed.summary["energy"]["cost"] > 0
        assert_same(wl, plat, disp, scenario=[TEMPS, walk, TARIFF])


def test_a_real_trace_slice() -> None:
    kth = load_swf(shared_trace("KTH-SP2-1996-2.1-cln.swf.gz"), SwfOptions(limit=1500))
    plat = resolve_platform("nodes=100,cores=1").with_node_model(GENERIC)
    res = assert_same(kth, plat, "easy", scenario=[TEMPS, TARIFF], power_cap=17_000.0,
                      on_infeasible="reject")
    assert res.summary["power"]["over_cap_seconds"] == 0.0


def test_what_stays_in_the_general_loop() -> None:
    wl = random_jobs(5, 60)
    walk = ("gen:random-walk:what=alive_nodes,mean=12,range=4,step=2,period=3600,"
            "until=2000000,seed=1")
    assert simulate(wl, "nodes=16,cores=1", "order=fifo,select=conservative,depth=2",
                    scenario=[TEMPS]).summary["loop"] == "general"
    assert simulate(wl, "nodes=16,cores=1", "easy",
                    scenario=[TEMPS, walk]).summary["loop"] == "general"
    assert simulate(wl, "nodes=16,cores=1", "easy", scenario=[TEMPS]).summary["loop"] == \
        "compiled"
