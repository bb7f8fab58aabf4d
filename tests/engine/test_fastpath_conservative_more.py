"""Conservative backfilling with a dynamic ordering (``wfp3``, ``uni``, ``slowdown``) or a
depth limit runs compiled on a fixed machine
(:mod:`dispatchlab.dispatchers.rule_based.compiled.conservative_loop`,
:mod:`~dispatchlab.dispatchers.rule_based.compiled.conservative_order`) and gives exactly the
general loop's run: every segment, plan (``planned``: each reservation as last made or
moved), sample, decision point, summary entry and the scheme's statistics (``assert_same``).

What each case exercises: a dynamic order changes between calls, so compressions and
simultaneous arrivals follow the order of that call (the book is not rebuilt when the order
changes: the general loop does not); a depth limit reserves only the first ``depth`` queued
jobs without a reservation, again after each round of starts (the window moves), while
reservations left behind the window keep being compressed."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dispatchlab import Platform, Workload, simulate
from dispatchlab.dispatchers.rule_based.compiled.kernel import AVAILABLE
from dispatchlab.engine.scenario import Change, Scenario
from dispatchlab.errors import ConfigError
from dispatchlab.platform.power import GENERIC
from dispatchlab.workload import SwfOptions, load_swf
from tests.conftest import jobs, shared_trace
from tests.engine.test_fastpath import assert_same

pytestmark = pytest.mark.skipif(not AVAILABLE, reason="Numba disabled")

ORDERS = ("fifo", "sjf", "ljf", "wfp3", "uni", "slowdown")


@st.composite
def fixed_runs(draw: st.DrawFn) -> tuple[Workload, Platform, str, bool]:
    """Up to 40 jobs, few distinct submit times (simultaneous arrivals), requested times and
    sizes (equal scores: ties by job index), run times under or over the request, on 1–4
    nodes of 1–3 cores; an ordering, a depth limit or none, an estimate; with or without the
    wall-time kill (without it, every job ends within its estimate)."""
    n_nodes = draw(st.integers(1, 4))
    cores = draw(st.integers(1, 3))
    n = draw(st.integers(1, 40))
    submit = sorted(draw(st.lists(st.sampled_from([0, 0, 1, 3, 7, 20, 50]), min_size=n,
                                  max_size=n)))
    walltime = draw(st.lists(st.sampled_from([1, 2, 5, 9, 30]), min_size=n, max_size=n))
    kill = draw(st.booleans())
    runtime = [draw(st.integers(0, w + 4 if kill else w)) for w in walltime]
    units = draw(st.lists(st.integers(1, n_nodes * cores), min_size=n, max_size=n))
    wl = jobs(*zip(submit, runtime, walltime, units, strict=True))
    depth = draw(st.sampled_from(["", ",depth=1", ",depth=2", ",depth=3", ",depth=10"]))
    estimate = draw(st.sampled_from(["", ",estimate=real"]))
    order = draw(st.sampled_from(ORDERS))
    spec = f"order={order},select=conservative{depth}{estimate}"
    return wl, Platform.homogeneous(n_nodes, {"cores": cores}), spec, kill


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=fixed_runs())
def test_random_runs(case: tuple[Workload, Platform, str, bool]) -> None:
    wl, plat, spec, kill = case
    assert_same(wl, plat, spec, walltime_kill=kill)


def test_the_window_moves_with_starts_and_leaves_reservations_behind() -> None:
    """Depth 1: the head's start lets the next job into the window in the same call, and
    it starts at once; a later higher-priority arrival (SJF) pushes a reserved job out of
    the window, where its reservation stays and is compressed."""
    wl = jobs((0, 4, 4, 2), (0, 2, 2, 1), (0, 1, 1, 1), (1, 3, 9, 2), (2, 1, 1, 1),
              (2, 6, 6, 2), (3, 1, 2, 1))
    for spec in ("order=fifo,select=conservative,depth=1",
                 "order=sjf,select=conservative,depth=1",
                 "order=sjf,select=conservative,depth=2"):
        res = assert_same(wl, "nodes=1,cores=2", spec)
        assert res.recorder is not None and res.recorder.dispatcher_stats["moves"] > 0


def test_a_dynamic_order_changes_between_calls() -> None:
    """Two jobs arriving together are reserved in the order of that call; an early end
    later compresses in the order of its own call, which ``wfp3`` has turned around (a
    long-waiting wide job overtakes a narrow one)."""
    wl = jobs((0, 5, 50, 2), (1, 1, 40, 1), (1, 30, 30, 2), (2, 1, 4, 1), (2, 20, 20, 1),
              (3, 2, 3, 2))
    for order in ("wfp3", "uni", "slowdown"):
        res = assert_same(wl, "nodes=1,cores=2", f"order={order},select=conservative")
        stats = res.recorder.dispatcher_stats  # type: ignore[union-attr]
        assert stats["compressions"] > 0


@pytest.fixture(scope="module")
def kth() -> Workload:
    return load_swf(shared_trace("KTH-SP2-1996-2.1-cln.swf.gz"), SwfOptions(limit=1500))


@pytest.mark.parametrize("spec", ["order=wfp3,select=conservative",
                                  "order=uni,select=conservative",
                                  "order=slowdown,select=conservative,estimate=real",
                                  "order=fifo,select=conservative,depth=4",
                                  "order=sjf,select=conservative,depth=1",
                                  "order=wfp3,select=conservative,depth=8"])
def test_kth_slice(kth: Workload, spec: str) -> None:
    res = assert_same(kth, "nodes=100,cores=1", spec)
    stats = res.recorder.dispatcher_stats  # type: ignore[union-attr]
    assert stats["moves"] > 0 or "real" in spec


def test_what_stays_in_the_general_loop() -> None:
    """A depth limit or a dynamic ordering with a cap or nodes leaving: the general loop
    (``loop="compiled"`` says why)."""
    wl = jobs((0, 5, 5, 2), (1, 3, 4, 1), power=[10.0, 10.0])
    plat = Platform.homogeneous(2, {"cores": 2}).with_node_model(GENERIC)
    nodes = Scenario([Change(4, "alive_nodes", 1.0), Change(8, "alive_nodes", 2.0)])
    for spec, kwargs, reason in [
        ("order=fifo,select=conservative,depth=2", {"power_cap": 1000.0}, "depth limit"),
        ("order=wfp3,select=conservative", {"scenario": nodes}, "dynamic ordering"),
    ]:
        assert simulate(wl, plat, spec, **kwargs).summary["loop"] == "general"  # type: ignore[arg-type]
        with pytest.raises(ConfigError, match=reason):
            simulate(wl, plat, spec, loop="compiled", **kwargs)  # type: ignore[arg-type]
    assert np.all(simulate(wl, plat, "order=uni,select=conservative,depth=1").jobs["start"]
                  >= 0)


# ---- informational rows (temperature, tariffs, signals): decision points that change nothing
# conservative reads; on a fixed machine, alone or with a fixed or varying cap ----

TEMPS = "gen:temperature:season=summer,days=30"  # a row every 900 s
TARIFF = "gen:day-night:what=energy_price,day=0.24,night=0.09,days=30"


def _random_jobs(seed: int, n: int = 250) -> Workload:
    """Jobs over ~23 days, some killed at their wall time, up to 8 one-core units."""
    rng = np.random.default_rng(seed)
    runtime = rng.integers(60, 40_000, n)
    walltime = np.where(rng.random(n) < 0.2, runtime // 2 + 1, runtime + rng.integers(0, 9000, n))
    return Workload.from_columns(submit=np.sort(rng.integers(0, 2_000_000, n)),
                                 runtime=runtime, walltime=walltime,
                                 units=rng.integers(1, 9, n), req={"cores": [1] * n})


@pytest.mark.parametrize("spec", ["conservative", "order=sjf,select=conservative,estimate=real"])
def test_informational_rows(spec: str) -> None:
    res = assert_same(_random_jobs(1), "nodes=12,cores=1", spec, scenario=[TEMPS, TARIFF])
    rec = res.recorder
    assert rec is not None and len(rec.decision_at) > 2 * 250  # the rows' own points too
    wl = _random_jobs(2, 80)  # rows at the times of submissions and ends
    times = [int(t) for t in wl.submit[::7]] + [int(t) for t in (wl.submit + wl.runtime)[::9]]
    scen = Scenario([Change(t, "signal", 1.0, "x") for t in times]
                    + [Change(t, "desired_utilization", 0.5) for t in times[::2]])
    assert_same(wl, "nodes=8,cores=1", spec, scenario=scen)


def test_informational_rows_with_a_fixed_and_a_varying_cap() -> None:
    wl = _random_jobs(3)
    plat = Platform.homogeneous(16, {"cores": 1}).with_node_model(GENERIC)
    low = 16 * GENERIC.idle + 8 * GENERIC.core_first + 1.0
    walk = (f"gen:random-walk:what=power_cap,mean={low + 400},range=400,step=200,"
            "period=7200,until=3000000,seed=4")
    fixed = assert_same(wl, plat, "conservative", scenario=[TARIFF], power_cap=low + 300)
    assert fixed.summary["energy"]["cost"] > 0
    assert fixed.recorder is not None and fixed.recorder.dispatcher_stats["rebuilds"] > 0
    assert_same(wl, plat, "conservative", scenario=[TEMPS, walk, TARIFF])


def test_informational_rows_on_a_kth_slice(kth: Workload) -> None:
    plat = Platform.homogeneous(100, {"cores": 1}).with_node_model(GENERIC)
    assert_same(kth, "nodes=100,cores=1", "conservative", scenario=[TEMPS, TARIFF])
    assert_same(kth, plat, "conservative", scenario=[TEMPS], power_cap=17_500.0,
                on_infeasible="reject")


def test_informational_rows_with_a_depth_limit_stay_general() -> None:
    wl = _random_jobs(4, 30)
    spec = "order=fifo,select=conservative,depth=2"
    assert simulate(wl, "nodes=8,cores=1", spec, scenario=[TEMPS]).summary["loop"] == "general"
    with pytest.raises(ConfigError, match="without a cap or scenario rows"):
        simulate(wl, "nodes=8,cores=1", spec, scenario=[TEMPS], loop="compiled")
