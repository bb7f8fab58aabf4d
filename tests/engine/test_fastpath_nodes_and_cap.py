"""Nodes leaving and coming back under a power cap — varying with the same scenario, or
fixed — run compiled (the engine core, :mod:`dispatchlab.engine.core.loop`) and give
exactly the
general loop's run: every segment (aborted runs included), node-state row, plan, sample,
power sample, decision point and summary entry (``assert_same``)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dispatchlab import Platform, Workload, simulate
from dispatchlab.dispatchers.rule_based.compiled.kernel import AVAILABLE
from dispatchlab.engine.budget import JobColumnPower
from dispatchlab.engine.scenario import Change, Scenario
from dispatchlab.errors import ConfigError
from dispatchlab.platform.power import GENERIC, NodePowerSpec
from dispatchlab.platform.resolve import resolve_platform
from dispatchlab.workload import SwfOptions, load_swf
from tests.conftest import shared_trace
from tests.engine.test_fastpath import assert_same
from tests.engine.test_fastpath_power import draw_powered_jobs

pytestmark = pytest.mark.skipif(not AVAILABLE, reason="Numba disabled")

NODE_WALK = ("gen:random-walk:what=alive_nodes,mean=90,range=10,step=3,period=3600,"
             "until=9000000,seed=5")
DISPATCHERS = ["easy", "fifo", "easy-sjf", "order=sjf,select=easy,depth=3,estimate=real",
               "order=ljf,select=strict"]


@pytest.fixture(scope="module")
def kth() -> Workload:
    return load_swf(shared_trace("KTH-SP2-1996-2.1-cln.swf.gz"), SwfOptions(limit=1200))


def _cap_walk(kth: Workload, seed: int = 2) -> str:
    """A cap between the idle machine plus the widest job and a busy machine: it binds."""
    low = 100 * GENERIC.idle + int(kth.units.max()) * GENERIC.core_first + 3.0
    return (f"gen:random-walk:what=power_cap,mean={low + 700},range=700,step=350,"
            f"period=7200,until=9000000,seed={seed}")


@pytest.mark.parametrize("dispatcher", DISPATCHERS)
def test_node_walk_and_cap_walk(kth: Workload, dispatcher: str) -> None:
    plat = resolve_platform("nodes=100,cores=1").with_node_model(GENERIC)
    res = assert_same(kth, plat, dispatcher, scenario=[NODE_WALK, _cap_walk(kth)])
    assert res.summary["loop"] == "compiled"
    rec = res.recorder
    assert rec is not None
    assert (np.asarray(rec.segments.outcome) == 2).any()  # nodes left under running jobs
    assert res.summary["power"]["over_cap_seconds"] > 0  # the cap fell under running jobs


def test_fail_checkpoints_no_kill_and_idle_not_counted(kth: Workload) -> None:
    plat = resolve_platform("nodes=100,cores=1").with_node_model(GENERIC)
    scen = [NODE_WALK, _cap_walk(kth, seed=4)]
    assert_same(kth, plat, "easy", scenario=scen, on_abort="fail")
    assert_same(kth, plat, "fifo", scenario=scen, walltime_kill=False)
    assert_same(kth, plat, "easy", scenario=scen, count_idle=False)
    rng = np.random.default_rng(3)
    ck = np.where(rng.random(kth.n_jobs) < 0.5, rng.integers(60, 3600, kth.n_jobs), 0)
    wl = dataclasses.replace(kth, checkpoint=ck.astype(np.int64))
    assert_same(wl, plat, "easy", scenario=scen)


def test_two_core_nodes_first_core_costlier(kth: Workload) -> None:
    spec = NodePowerSpec(idle=50.0, core_first=40.0, core=15.0)
    plat = resolve_platform("nodes=50,cores=2").with_node_model(spec)
    walk = NODE_WALK.replace("mean=90,range=10", "mean=44,range=6")
    low = 50 * 50.0 + int(kth.units.max()) * 55.0
    cap = (f"gen:random-walk:what=power_cap,mean={low + 400},range=400,step=200,"
           "period=7200,until=9000000,seed=6")
    for dispatcher in ("easy", "fifo"):
        assert_same(kth, plat, dispatcher, scenario=[walk, cap])


def test_job_power_column(kth: Workload) -> None:
    wl = dataclasses.replace(kth, power=(kth.units * 150.0 + (kth.job_id % 7) * 3.5))
    top = float(wl.power.max())
    cap = (f"gen:random-walk:what=power_cap,mean={top + 1500},range=1000,step=500,"
           "period=7200,until=9000000,seed=8")
    assert_same(wl, "nodes=100,cores=1", "easy", scenario=[NODE_WALK, cap])  # no node model
    plat = resolve_platform("nodes=100,cores=1").with_node_model(GENERIC)
    model = JobColumnPower(wl)  # on a node-model platform: idle (and down) nodes count
    idle = 100 * GENERIC.idle
    cap_idle = cap.replace(f"mean={top + 1500}", f"mean={idle + top + 1500}")
    assert_same(wl, plat, "easy", scenario=[NODE_WALK, cap_idle], power_model=model)
    # no cap at all: power is only measured (samples, energy), never binding
    assert_same(wl, plat, "easy", scenario=NODE_WALK, power_model=model)
    res = assert_same(kth, plat, "fifo", scenario=NODE_WALK, power_cap=1e9,
                      on_over_cap="kill-youngest")  # a fixed cap never falls: none stopped
    assert res.recorder is not None
    assert res.recorder.engine_info["power"]["jobs_stopped_over_cap"] == 0


def test_fixed_cap_with_node_rows_at_the_cap_rows_times(kth: Workload) -> None:
    plat = resolve_platform("nodes=100,cores=1").with_node_model(GENERIC)
    low = 100 * GENERIC.idle + int(kth.units.max()) * GENERIC.core_first + 3.0
    assert_same(kth, plat, "easy", scenario=NODE_WALK, power_cap=low + 500.0)
    day = 86400
    rows = []
    for k in range(40):  # node rows and cap rows at the same times, in both orders
        t = k * day // 2 + 17
        rows.append(Change(t, "node_down", 0.0, f"n{(7 * k) % 100:02d}"))
        rows.append(Change(t, "power_cap", low + (k % 3) * 400.0))
        rows.append(Change(t + day // 5, "power_cap", low + 900.0))
        rows.append(Change(t + day // 5, "node_up", 0.0, f"n{(7 * k) % 100:02d}"))
    rows.append(Change(3 * day, "alive_nodes", 70.0))
    rows.append(Change(5 * day, "alive_nodes", 100.0))
    for dispatcher in ("easy", "fifo"):
        assert_same(kth, plat, dispatcher, scenario=Scenario(rows, source="test rows"))


@st.composite
def changing_capped_runs(draw: st.DrawFn) -> tuple[Workload, Platform, Scenario, str]:
    wl, plat, spec, n_nodes, cores = draw_powered_jobs(draw)
    full = n_nodes * spec.idle + int(wl.units.max()) * (spec.core_first
                                                         + (cores - 1) * spec.core)
    rows = []
    for _ in range(draw(st.integers(1, 8))):
        t = draw(st.integers(0, 80))
        if draw(st.booleans()):
            rows.append(Change(t, "alive_nodes", float(draw(st.integers(1, n_nodes)))))
        else:
            rows.append(Change(t, "power_cap", full * draw(st.sampled_from([0.3, 0.7, 1.0]))
                               + draw(st.sampled_from([0.0, 0.5, 7.5]))))
    rows.append(Change(90, "alive_nodes", float(n_nodes)))  # in the end every job can run
    rows.append(Change(90, "power_cap", full + 1.0))
    dispatcher = draw(st.sampled_from(["easy", "fifo", "easy-sjf", "sjf",
                                       "order=sjf,select=easy,depth=2,estimate=real"]))
    return wl, plat, Scenario(rows, source="drawn"), dispatcher


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=changing_capped_runs())
def test_random_runs_with_nodes_and_cap_changing(
        case: tuple[Workload, Platform, Scenario, str]) -> None:
    wl, plat, scen, dispatcher = case
    assert_same(wl, plat, dispatcher, scenario=scen)


def test_a_cap_that_stops_jobs_when_it_falls_stays_in_the_general_loop(kth: Workload) -> None:
    plat = resolve_platform("nodes=100,cores=1").with_node_model(GENERIC)
    with pytest.raises(ConfigError, match="power not supported"):
        simulate(kth, plat, "easy", scenario=[NODE_WALK, _cap_walk(kth)],
                 on_over_cap="kill-youngest", loop="compiled")
