"""The compiled slot loop under a fixed power cap gives exactly the general engine's run:
every start, node, plan, sample and power sample, on real trace slices with caps that bind."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dispatchlab import Platform, Workload, simulate
from dispatchlab.dispatchers.rule_based.compiled.kernel import AVAILABLE
from dispatchlab.engine.budget import JobColumnPower
from dispatchlab.platform.power import GENERIC, NodePowerSpec
from dispatchlab.platform.resolve import resolve_platform
from dispatchlab.workload import SwfOptions, load_swf
from tests.conftest import jobs, shared_trace
from tests.engine.test_fastpath import assert_same

pytestmark = pytest.mark.skipif(not AVAILABLE, reason="Numba disabled")

CAPPED = ["easy", "fifo", "order=sjf,select=easy,estimate=real", "pbs-fifo-window"]
#: Two-core nodes whose first core costs more than the second (placement matters).
TWO_CORE = NodePowerSpec(idle=50.0, core_first=40.0, core=15.0)


def _binds(wl: Workload, plat: Platform, dispatcher: str, cap: float) -> None:
    """The cap changes the schedule, and power reaches close to it."""
    free = simulate(wl, plat, dispatcher, loop="compiled")
    capped = simulate(wl, plat, dispatcher, loop="compiled", power_cap=cap)
    assert capped.jobs["start"].tolist() != free.jobs["start"].tolist()
    assert capped.summary["power"]["peak_w"] <= cap + 1e-6


@pytest.mark.parametrize(("trace", "limit", "nodes"), [
    ("HPC2N-2002-2.2-cln.swf.gz", 1500, 240),
    ("KTH-SP2-1996-2.1-cln.swf.gz", 1500, 100),
])
def test_real_slices_one_core_nodes_generic_model(trace: str, limit: int, nodes: int) -> None:
    wl = load_swf(shared_trace(trace), SwfOptions(limit=limit))
    plat = resolve_platform(f"nodes={nodes},cores=1").with_node_model(GENERIC)
    # the idle machine plus the widest job alone: every job can start, the cap binds
    cap = nodes * GENERIC.idle + int(wl.units.max()) * (GENERIC.core_first) + 3.0
    _binds(wl, plat, "easy", cap)
    for dispatcher in CAPPED:
        res = assert_same(wl, plat, dispatcher, power_cap=cap)
        assert res.summary["power"]["over_cap_seconds"] == 0.0


def test_real_slice_two_core_nodes_first_core_costlier() -> None:
    wl = load_swf(shared_trace("HPC2N-2002-2.2-cln.swf.gz"), SwfOptions(limit=1500))
    plat = resolve_platform("nodes=120,cores=2").with_node_model(TWO_CORE)
    cap = 120 * 50.0 + 64 * (40.0 + 15.0) + 7.0
    _binds(wl, plat, "easy", cap)
    for dispatcher in ("easy", "fifo"):
        assert_same(wl, plat, dispatcher, power_cap=cap)
    assert_same(wl, plat, "easy", power_cap=cap, count_idle=False)


def test_real_slice_job_power_column() -> None:
    wl = load_swf(shared_trace("KTH-SP2-1996-2.1-cln.swf.gz"), SwfOptions(limit=1500))
    wl = dataclasses.replace(wl, power=(wl.units * 150.0 + (wl.job_id % 7) * 3.5))
    cap = float(wl.power.max()) + 2000.0
    _binds(wl, Platform.homogeneous(100, {"cores": 1}), "easy", cap)
    assert_same(wl, "nodes=100,cores=1", "easy", power_cap=cap)  # no node model
    plat = resolve_platform("nodes=100,cores=1").with_node_model(GENERIC)
    model = JobColumnPower(wl)  # the column on a node-model platform: idle nodes count
    assert_same(wl, plat, "easy", power_cap=100 * 95.0 + cap, power_model=model)


def draw_powered_jobs(draw: st.DrawFn) -> tuple[Workload, Platform, NodePowerSpec, int, int]:
    """A small node-model machine (1–5 nodes of 1, 2 or 4 cores) and up to 25 jobs of up to
    its every core: (workload, platform, node spec, nodes, cores per node)."""
    n_nodes = draw(st.integers(1, 5))
    cores = draw(st.sampled_from([1, 2, 4]))
    spec = NodePowerSpec(idle=draw(st.sampled_from([0.0, 10.0])),
                         core_first=draw(st.sampled_from([5.0, 30.0])),
                         core=draw(st.sampled_from([0.0, 2.5])))
    plat = Platform.homogeneous(n_nodes, {"cores": cores}).with_node_model(spec)
    n = draw(st.integers(1, 25))
    units = draw(st.lists(st.integers(1, n_nodes * cores), min_size=n, max_size=n))
    runtime = draw(st.lists(st.integers(0, 40), min_size=n, max_size=n))
    walltime = [max(r, 1) + draw(st.integers(0, 15)) for r in runtime]
    submit = sorted(draw(st.lists(st.integers(0, 50), min_size=n, max_size=n)))
    wl = jobs(*zip(submit, runtime, walltime, units, strict=True))
    return wl, plat, spec, n_nodes, cores


@st.composite
def capped_runs(draw: st.DrawFn) -> tuple[Workload, Platform, float, str]:
    wl, plat, spec, n_nodes, cores = draw_powered_jobs(draw)
    widest = int(wl.units.max())
    need = widest * (spec.core_first + (cores - 1) * spec.core)  # spread: an upper bound
    cap = n_nodes * spec.idle + need + draw(st.sampled_from([0.0, 0.5, 7.5, 40.0]))
    return wl, plat, cap, draw(st.sampled_from([*CAPPED, "easy-sjf", "sjf"]))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=capped_runs())
def test_random_capped_runs(case: tuple[Workload, Platform, float, str]) -> None:
    wl, plat, cap, dispatcher = case
    assert_same(wl, plat, dispatcher, power_cap=cap)


def test_an_over_cap_policy_is_recorded_alike_by_both_loops() -> None:
    """A fixed cap never falls, so no policy stops a job; both loops say so."""
    plat = Platform.homogeneous(4, {"cores": 1}).with_node_model(GENERIC)
    wl = jobs((0, 5, 5, 2), (1, 3, 4, 1), (2, 4, 4, 2))
    res = assert_same(wl, plat, "easy", power_cap=700.0, on_over_cap="kill-youngest")
    assert res.recorder is not None
    assert res.recorder.engine_info["power"]["jobs_stopped_over_cap"] == 0


def test_the_compiled_loop_takes_only_a_cap_with_node_or_column_power() -> None:
    from dispatchlab.engine.scenario import Change, Scenario

    wl = jobs((0, 5, 5, 2), (1, 3, 4, 1), power=[10.0, 10.0])
    plat = Platform.homogeneous(2, {"cores": 2})
    varying = Scenario([Change(3, "power_cap", 50.0)])
    assert simulate(wl, plat, "easy", power_cap=100.0).summary["loop"] == "compiled"
    assert simulate(wl, plat, "easy", scenario=varying).summary["loop"] == "compiled"
    cap_and_nodes = Scenario([Change(3, "power_cap", 50.0), Change(4, "alive_nodes", 1.0)])
    assert simulate(wl, plat, "easy", scenario=cap_and_nodes).summary["loop"] == "compiled"
    for disp, kwargs in [
        ("order=fifo,select=conservative,depth=2",
         {"scenario": Scenario([Change(3, "temperature", 20.0)]),
          "power_cap": 100.0}),  # informational rows: not with a conservative depth limit
        ("easy-power", {"scenario": Scenario([Change(3, "temperature", 20.0)]),
                        "power_cap": 100.0}),  # informational rows: not with easy-power
        ("easy", {"scenario": varying, "on_over_cap": "kill-youngest"}),  # stops jobs
        ("easy", {"scenario": cap_and_nodes, "on_over_cap": "requeue-youngest"}),
        ("easy", {"power_model": _Flat()}),  # another job power source
        ("easy", {"scenario": Scenario([Change(4, "alive_nodes", 1.0)]),
                  "power_model": _Flat()}),
    ]:
        assert simulate(wl, plat, disp, **kwargs).summary["loop"] == "general"  # type: ignore[arg-type]


class _Flat:
    """Every job draws 5 W."""

    def job_power(self, job: int, nodes: object, counts: object) -> float:
        return 5.0

    def describe(self) -> dict[str, object]:
        return {"name": "flat"}


def test_the_compiled_loop_reports_a_cap_below_the_idle_machine() -> None:
    """Both loops refuse, before the first event, a job the fixed cap never lets start
    (issue 29: it used to stall at the end), or reject it when asked."""
    plat = Platform.homogeneous(2, {"cores": 1}).with_node_model(GENERIC)
    wl = jobs((0, 5, 5, 1), (1, 5, 5, 1))
    for engine in ("compiled", "general"):
        with pytest.raises(Exception, match="over the fixed power cap of 200 W"):
            simulate(wl, plat, "easy", power_cap=200.0, loop=engine)
        res = simulate(wl, plat, "easy", power_cap=200.0, loop=engine,
                       on_infeasible="reject")
        assert res.summary["rejected"] == 2 and res.summary["loop"] == engine
    assert np.isfinite(GENERIC.idle)


def test_a_capped_run_uses_the_ahead_of_time_module_when_it_is_built() -> None:
    """The AOT module exports the loop with its power arguments (built from these sources)."""
    import os

    from dispatchlab.dispatchers.rule_based.compiled.kernel import LOOPS, kernel_kind
    from dispatchlab.numba_aot import load

    plat = Platform.homogeneous(3, {"cores": 1}).with_node_model(GENERIC)
    res = simulate(jobs((0, 5, 5, 1), (1, 5, 5, 2)), plat, "easy",
                   power_cap=3 * 95.0 + 2 * 95.74 + 1.0)
    assert res.summary["loop"] == "compiled"
    assert res.jobs["start"].tolist() == [0, 5]  # 3 busy nodes would need 572 W
    if not os.environ.get("DISPATCHLAB_NO_AOT") and load(LOOPS) is not None:
        assert kernel_kind() == "aot"
