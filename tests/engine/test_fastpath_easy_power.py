"""``easy-power`` (EASY whose reservation for the head holds in power too) runs compiled and
gives exactly the general loop's run — every segment, node, plan, sample, power sample,
decision point and summary entry (``assert_same``) — under a fixed cap, a cap varying with
a scenario's ``power_cap`` rows, and nodes leaving and coming back with a cap."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dispatchlab import Platform, Workload, simulate
from dispatchlab.dispatchers.rule_based.compiled.kernel import AVAILABLE
from dispatchlab.dispatchers.rule_based.compiled.power_shadow import pairwise_sum
from dispatchlab.engine.budget import JobColumnPower
from dispatchlab.engine.scenario import Change, Scenario
from dispatchlab.platform.power import GENERIC, NodePowerSpec
from dispatchlab.platform.resolve import resolve_platform
from dispatchlab.workload import SwfOptions, load_swf
from tests.conftest import jobs, shared_trace
from tests.engine.test_fastpath import assert_same
from tests.engine.test_fastpath_power import draw_powered_jobs

pytestmark = pytest.mark.skipif(not AVAILABLE, reason="Numba disabled")

DISPATCHERS = ["easy-power", "order=sjf,select=easy-power,estimate=real",
               "order=fifo,select=easy-power,depth=3"]
NODE_WALK = ("gen:random-walk:what=alive_nodes,mean=90,range=10,step=3,period=3600,"
             "until=9000000,seed=5")
#: Two-core nodes whose first core costs more than the second (placement matters).
TWO_CORE = NodePowerSpec(idle=50.0, core_first=40.0, core=15.0)


@pytest.fixture(scope="module")
def kth() -> Workload:
    return load_swf(shared_trace("KTH-SP2-1996-2.1-cln.swf.gz"), SwfOptions(limit=1200))


def _low(wl: Workload, nodes: int) -> float:
    """The idle machine plus the widest job on one-core nodes: every job can start."""
    return nodes * GENERIC.idle + int(wl.units.max()) * GENERIC.core_first + 3.0


def _cap_walk(low: float, seed: int = 2) -> str:
    return (f"gen:random-walk:what=power_cap,mean={low + 700},range=700,step=350,"
            f"period=7200,until=9000000,seed={seed}")


@pytest.mark.parametrize(("trace", "nodes"), [("HPC2N-2002-2.2-cln.swf.gz", 240),
                                              ("KTH-SP2-1996-2.1-cln.swf.gz", 100)])
def test_fixed_cap_real_slices(trace: str, nodes: int) -> None:
    wl = load_swf(shared_trace(trace), SwfOptions(limit=1500))
    plat = resolve_platform(f"nodes={nodes},cores=1").with_node_model(GENERIC)
    cap = _low(wl, nodes)
    starts = [assert_same(wl, plat, d, power_cap=cap).jobs["start"].tolist()
              for d in DISPATCHERS[::2]]
    # the reservation in power changes the schedule: plain EASY backfills differently
    easy = simulate(wl, plat, "easy", power_cap=cap, loop="compiled")
    assert starts[0] != easy.jobs["start"].tolist()


def test_cap_walk(kth: Workload) -> None:
    plat = resolve_platform("nodes=100,cores=1").with_node_model(GENERIC)
    for dispatcher in DISPATCHERS:
        assert_same(kth, plat, dispatcher, scenario=_cap_walk(_low(kth, 100)))
    easy = simulate(kth, plat, "easy", scenario=_cap_walk(_low(kth, 100)), loop="compiled")
    power = simulate(kth, plat, "easy-power", scenario=_cap_walk(_low(kth, 100)))
    assert power.summary["loop"] == "compiled"
    assert power.jobs["start"].tolist() != easy.jobs["start"].tolist()
    # jobs outliving their requested time: expected ends in the past stay in the scan
    assert (kth.runtime > kth.walltime).any()
    assert_same(kth, plat, "easy-power", scenario=_cap_walk(_low(kth, 100), 3),
                walltime_kill=False)


def test_nodes_leaving_with_a_cap(kth: Workload) -> None:
    plat = resolve_platform("nodes=100,cores=1").with_node_model(GENERIC)
    low = _low(kth, 100)
    for dispatcher in DISPATCHERS[:2]:
        res = assert_same(kth, plat, dispatcher, scenario=[NODE_WALK, _cap_walk(low, 4)])
        assert res.recorder is not None
        assert (np.asarray(res.recorder.segments.outcome) == 2).any()  # aborted runs
    assert_same(kth, plat, "easy-power", scenario=NODE_WALK, power_cap=low + 500.0)
    assert_same(kth, plat, "easy-power", scenario=[NODE_WALK, _cap_walk(low, 4)],
                on_abort="fail")


def test_two_core_nodes_and_idle_not_counted(kth: Workload) -> None:
    plat = resolve_platform("nodes=50,cores=2").with_node_model(TWO_CORE)
    cap = 50 * 50.0 + int(kth.units.max()) * 55.0 + 7.0
    assert_same(kth, plat, "easy-power", power_cap=cap)
    assert_same(kth, plat, "easy-power", power_cap=cap - 50 * 50.0, count_idle=False)
    walk = NODE_WALK.replace("mean=90,range=10", "mean=44,range=6")
    assert_same(kth, plat, "easy-power", scenario=[walk, _cap_walk(cap - 700.0, 6)])


def test_job_power_column(kth: Workload) -> None:
    wl = dataclasses.replace(kth, power=(kth.units * 150.0 + (kth.job_id % 7) * 3.5))
    top = float(wl.power.max())
    assert_same(wl, "nodes=100,cores=1", "easy-power", power_cap=top + 2000.0)  # no model
    plat = resolve_platform("nodes=100,cores=1").with_node_model(GENERIC)
    model = JobColumnPower(wl)  # on a node-model platform: idle (and down) nodes count
    idle = 100 * GENERIC.idle
    assert_same(wl, plat, "easy-power", power_cap=idle + top + 2000.0, power_model=model)
    cap = (f"gen:random-walk:what=power_cap,mean={idle + top + 1500},range=1000,step=500,"
           "period=7200,until=9000000,seed=8")
    assert_same(wl, plat, "easy-power", scenario=[NODE_WALK, cap], power_model=model)


def test_without_a_cap_it_is_plain_easy(kth: Workload) -> None:
    power = assert_same(kth, "nodes=100,cores=1", "easy-power")
    easy = simulate(kth, "nodes=100,cores=1", "easy", loop="compiled")
    assert power.jobs["start"].tolist() == easy.jobs["start"].tolist()
    assert_same(kth, "nodes=100,cores=1", "easy-power", scenario=NODE_WALK)


def test_a_rising_cap_is_the_shadow_and_its_extra_power_binds() -> None:
    """A (1 core) runs; the head H (2 cores) has free slots but not the power until the cap
    rises at 20, its reservation then (before A's end at 100, the slot-based shadow); the
    power left at 20 is half a core's, so B (1 core, ending after 20) may not backfill on
    the extra slot — plain EASY starts it at once."""
    first = GENERIC.core_first
    plat = Platform.homogeneous(4, {"cores": 1}).with_node_model(GENERIC)
    wl = jobs((0, 100, 100, 1), (1, 10, 10, 2), (2, 50, 50, 1))
    scen = Scenario([Change(20, "power_cap", 4 * GENERIC.idle + 3.5 * first)])
    kw = {"power_cap": 4 * GENERIC.idle + 2.5 * first, "scenario": scen}
    res = assert_same(wl, plat, "easy-power", **kw)
    assert res.recorder is not None
    assert int(res.recorder.planned[1]) == 20
    assert res.jobs["start"].tolist()[:2] == [0, 20] and res.jobs["start"].tolist()[2] > 20
    easy = simulate(wl, plat, "easy", loop="compiled", **kw)  # type: ignore[arg-type]
    assert easy.jobs["start"].tolist()[2] == 2


@st.composite
def easy_power_runs(draw: st.DrawFn) -> tuple[Workload, Platform, dict[str, object], str]:
    wl, plat, spec, n_nodes, cores = draw_powered_jobs(draw)
    full = n_nodes * spec.idle + int(wl.units.max()) * (spec.core_first
                                                         + (cores - 1) * spec.core)
    steps = [0.0, 0.5, 7.5, 40.0]
    kw: dict[str, object] = {"power_cap": full + draw(st.sampled_from(steps))}
    rows = []
    for _ in range(draw(st.integers(0, 8))):
        t = draw(st.integers(0, 80))
        if draw(st.booleans()):
            rows.append(Change(t, "power_cap", full * draw(st.sampled_from([0.3, 0.7, 1.0]))
                               + draw(st.sampled_from(steps))))
        elif draw(st.booleans()):
            rows.append(Change(t, "alive_nodes", float(draw(st.integers(1, n_nodes)))))
    if rows:
        rows.append(Change(90, "alive_nodes", float(n_nodes)))  # in the end every job runs
        rows.append(Change(90, "power_cap", full + 1.0))
        kw["scenario"] = Scenario(rows, source="drawn")
        if draw(st.booleans()):
            del kw["power_cap"]  # a cap that only the rows set
    dispatcher = draw(st.sampled_from([*DISPATCHERS, "order=ljf,select=easy-power"]))
    return wl, plat, kw, dispatcher


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=easy_power_runs())
def test_random_runs(case: tuple[Workload, Platform, dict[str, object], str]) -> None:
    wl, plat, kw, dispatcher = case
    assert_same(wl, plat, dispatcher, **kw)


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.floats(0.0, 1e5, allow_nan=False), max_size=700))
def test_the_node_sum_is_numpys(values: list[float]) -> None:
    a = np.array(values, dtype=np.float64)
    assert pairwise_sum(a, len(a)) == float(a.sum())
