"""Conservative backfilling on a machine that changes — nodes leaving and coming back, a
fixed or varying power cap, both — runs compiled
(:mod:`dispatchlab.dispatchers.rule_based.compiled.conservative_scenario_loop`) and gives
exactly the general loop's run: every segment (aborted runs included), node-state row, plan,
sample, power sample, decision point, the scheme's statistics (compressions, rebuilds, moves)
and summary entry (``assert_same``)."""

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
from dispatchlab.platform.power import GENERIC
from dispatchlab.platform.resolve import resolve_platform
from dispatchlab.workload import SwfOptions, load_swf
from tests.conftest import jobs, shared_trace
from tests.engine.test_fastpath import assert_same
from tests.engine.test_fastpath_power import draw_powered_jobs

pytestmark = pytest.mark.skipif(not AVAILABLE, reason="Numba disabled")

NODE_WALK = ("gen:random-walk:what=alive_nodes,mean=90,range=10,step=3,period=3600,"
             "until=9000000,seed=5")
DISPATCHERS = ["conservative", "order=sjf,select=conservative",
               "order=ljf,select=conservative,estimate=real"]


@pytest.fixture(scope="module")
def kth() -> Workload:
    return load_swf(shared_trace("KTH-SP2-1996-2.1-cln.swf.gz"), SwfOptions(limit=1200))


def _low(kth: Workload) -> float:
    """The idle machine plus the widest job (generic node model, 100 one-core nodes)."""
    return 100 * GENERIC.idle + int(kth.units.max()) * GENERIC.core_first + 3.0


def _cap_walk(kth: Workload, seed: int = 2) -> str:
    """A cap between the idle machine plus the widest job and a busy machine: it binds."""
    return (f"gen:random-walk:what=power_cap,mean={_low(kth) + 700},range=700,step=350,"
            f"period=7200,until=9000000,seed={seed}")


def _stats(res: object) -> dict[str, int]:
    rec = res.recorder  # type: ignore[attr-defined]
    assert rec is not None
    return dict(rec.dispatcher_stats)


@pytest.mark.parametrize("dispatcher", DISPATCHERS)
def test_kth_node_walk(kth: Workload, dispatcher: str) -> None:
    res = assert_same(kth, "nodes=100,cores=1", dispatcher, scenario=NODE_WALK)
    assert (np.asarray(res.recorder.segments.outcome) == 2).any()  # type: ignore[union-attr]
    stats = _stats(res)
    assert stats["rebuilds"] > 0  # nodes changed
    assert (stats["compressions"] > 0) == ("real" not in dispatcher)  # early ends only


def test_kth_fixed_cap_cap_walk_and_both(kth: Workload) -> None:
    plat = resolve_platform("nodes=100,cores=1").with_node_model(GENERIC)
    fixed = assert_same(kth, plat, "conservative", power_cap=_low(kth) + 500.0)
    assert _stats(fixed)["rebuilds"] > 0  # the cap refused due starts
    walk = assert_same(kth, plat, "conservative", scenario=_cap_walk(kth))
    assert _stats(walk)["rebuilds"] > 0
    both = assert_same(kth, plat, "order=sjf,select=conservative",
                       scenario=[NODE_WALK, _cap_walk(kth, seed=4)])
    assert (np.asarray(both.recorder.segments.outcome) == 2).any()  # type: ignore[union-attr]
    assert both.summary["power"]["over_cap_seconds"] > 0  # the cap fell under running jobs


def test_fail_checkpoints_and_idle_not_counted(kth: Workload) -> None:
    plat = resolve_platform("nodes=100,cores=1").with_node_model(GENERIC)
    scen = [NODE_WALK, _cap_walk(kth, seed=6)]
    assert_same(kth, plat, "conservative", scenario=scen, on_abort="fail")
    assert_same(kth, plat, "conservative", scenario=scen, count_idle=False)
    rng = np.random.default_rng(3)
    ck = np.where(rng.random(kth.n_jobs) < 0.5, rng.integers(60, 3600, kth.n_jobs), 0)
    wl = dataclasses.replace(kth, checkpoint=ck.astype(np.int64))
    assert_same(wl, "nodes=100,cores=1", "conservative", scenario=NODE_WALK)
    assert_same(wl, plat, "conservative", scenario=scen)


def test_job_power_column_and_two_core_nodes(kth: Workload) -> None:
    wl = dataclasses.replace(kth, power=(kth.units * 150.0 + (kth.job_id % 7) * 3.5))
    top = float(wl.power.max())
    cap = (f"gen:random-walk:what=power_cap,mean={top + 1500},range=1000,step=500,"
           "period=7200,until=9000000,seed=8")
    assert_same(wl, "nodes=100,cores=1", "conservative", scenario=[NODE_WALK, cap])
    plat = resolve_platform("nodes=100,cores=1").with_node_model(GENERIC)
    assert_same(wl, plat, "conservative", scenario=NODE_WALK, power_model=JobColumnPower(wl))
    two = resolve_platform("nodes=50,cores=2").with_node_model(GENERIC)
    walk = NODE_WALK.replace("mean=90,range=10", "mean=44,range=6")
    assert_same(kth, two, "conservative", scenario=walk, power_cap=_low(kth) / 2 + 600.0)


def test_node_and_cap_rows_at_the_same_times(kth: Workload) -> None:
    plat = resolve_platform("nodes=100,cores=1").with_node_model(GENERIC)
    low, day = _low(kth), 86400
    rows = []
    for k in range(40):  # node rows and cap rows at the same times, in both orders
        t = k * day // 2 + 17
        rows.append(Change(t, "node_down", 0.0, f"n{(7 * k) % 100:02d}"))
        rows.append(Change(t, "power_cap", low + (k % 3) * 400.0))
        rows.append(Change(t + day // 5, "power_cap", low + 900.0))
        rows.append(Change(t + day // 5, "node_up", 0.0, f"n{(7 * k) % 100:02d}"))
    rows.append(Change(3 * day, "alive_nodes", 70.0))
    rows.append(Change(3 * day + 5, "alive_nodes", 70.0))  # moves nothing: no rebuild
    rows.append(Change(5 * day, "alive_nodes", 100.0))
    assert_same(kth, plat, "conservative", scenario=Scenario(rows, source="test rows"))


@st.composite
def changing_runs(draw: st.DrawFn) -> tuple[Workload, Platform, Scenario, str, dict[str, object]]:
    """Up to 25 jobs on 1–5 node-model nodes; node rows (alive counts, one node down or up)
    and cap rows at drawn times; in the end every job can run."""
    wl, plat, spec, n_nodes, cores = draw_powered_jobs(draw)
    full = n_nodes * spec.idle + int(wl.units.max()) * (spec.core_first
                                                         + (cores - 1) * spec.core)
    capped = draw(st.booleans())
    rows = []
    for _ in range(draw(st.integers(1, 8))):
        t = draw(st.integers(0, 80))
        what = draw(st.sampled_from(["alive", "down", "up", "cap"] if capped
                                    else ["alive", "down", "up"]))
        if what == "alive":
            rows.append(Change(t, "alive_nodes", float(draw(st.integers(0, n_nodes)))))
        elif what == "cap":
            rows.append(Change(t, "power_cap", full * draw(st.sampled_from([0.3, 0.7, 1.0]))
                               + draw(st.sampled_from([0.0, 0.5, 7.5]))))
        else:
            node = f"n{draw(st.integers(0, n_nodes - 1)):0{len(str(n_nodes - 1))}d}"
            rows.append(Change(t, "node_down" if what == "down" else "node_up", 0.0, node))
    rows.append(Change(90, "alive_nodes", float(n_nodes)))
    if capped:
        rows.append(Change(90, "power_cap", full + 1.0))
    dispatcher = draw(st.sampled_from(["conservative", "order=sjf,select=conservative",
                                       "order=ljf,select=conservative,estimate=real"]))
    kwargs: dict[str, object] = {}
    if draw(st.booleans()):
        kwargs["on_abort"] = "fail"
    if draw(st.booleans()):
        ck = draw(st.lists(st.integers(0, 6), min_size=wl.n_jobs, max_size=wl.n_jobs))
        wl = dataclasses.replace(wl, checkpoint=np.array(ck, dtype=np.int64))
    return wl, plat, Scenario(rows, source="drawn"), dispatcher, kwargs


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=changing_runs())
def test_random_runs_with_nodes_and_cap_changing(
        case: tuple[Workload, Platform, Scenario, str, dict[str, object]]) -> None:
    wl, plat, scen, dispatcher, kwargs = case
    assert_same(wl, plat, dispatcher, scenario=scen, **kwargs)


@st.composite
def capped_runs(draw: st.DrawFn) -> tuple[Workload, Platform, float, str]:
    wl, plat, spec, n_nodes, cores = draw_powered_jobs(draw)
    need = int(wl.units.max()) * (spec.core_first + (cores - 1) * spec.core)
    cap = n_nodes * spec.idle + need + draw(st.sampled_from([0.0, 0.5, 7.5, 40.0]))
    return wl, plat, cap, draw(st.sampled_from(DISPATCHERS))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=capped_runs())
def test_random_runs_under_a_fixed_cap(case: tuple[Workload, Platform, float, str]) -> None:
    wl, plat, cap, dispatcher = case
    assert_same(wl, plat, dispatcher, power_cap=cap)


def test_no_walltime_kill() -> None:
    """Without the wall-time kill a run within its estimate is compiled; one outliving it
    (the general loop holds it and rebuilds the book) is not."""
    plat = Platform.homogeneous(3, {"cores": 2})
    scen = Scenario([Change(4, "alive_nodes", 1.0), Change(9, "alive_nodes", 3.0)])
    within = jobs((0, 5, 6, 2), (1, 3, 4, 4), (2, 7, 9, 1), (3, 2, 2, 6))
    assert_same(within, plat, "conservative", scenario=scen, walltime_kill=False)
    over = jobs((0, 5, 6, 2), (1, 8, 4, 4), (2, 7, 9, 1))
    assert simulate(over, plat, "conservative", scenario=scen,
                    walltime_kill=False).summary["loop"] == "general"
    with pytest.raises(ConfigError, match="would outlive its expected end"):
        simulate(over, plat, "conservative", scenario=scen, walltime_kill=False,
                 loop="compiled")
    # on a fixed machine too (the general loop then rebuilds: the compiled loop would not)
    fixed = jobs((0, 5, 6, 2), (1, 8, 4, 4), (2, 7, 9, 1), (3, 2, 2, 6), (4, 3, 3, 1))
    res = simulate(fixed, plat, "conservative", walltime_kill=False)
    assert res.summary["loop"] == "general"
    assert res.recorder is not None and res.recorder.dispatcher_stats["rebuilds"] > 0
    assert_same(within, plat, "conservative", walltime_kill=False)


def test_what_stays_in_the_general_loop() -> None:
    wl = jobs((0, 5, 5, 2), (1, 3, 4, 1), power=[10.0, 10.0])
    plat = Platform.homogeneous(2, {"cores": 2})
    temps = Scenario([Change(3, "temperature", 20.0), Change(4, "alive_nodes", 1.0)])
    for disp, kwargs in [
        ("conservative", {"scenario": temps}),  # informational rows
        ("order=fifo,select=conservative,depth=2", {"power_cap": 100.0}),  # a depth limit
        ("conservative", {"scenario": Scenario([Change(3, "power_cap", 50.0)]),
                          "on_over_cap": "kill-youngest"}),  # a cap that stops jobs
    ]:
        assert simulate(wl, plat, disp, **kwargs).summary["loop"] == "general"  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="temperature"):
        simulate(wl, plat, "conservative", scenario=temps, loop="compiled")


@pytest.mark.parametrize("changes", ["none", "nodes", "cap"])
def test_long_books_skip_reservations_that_cannot_move(changes: str) -> None:
    """Books of 256 reservations or more: on a machine that changes the compiled loop
    compresses them skipping the reservations that cannot move (as the general loop's slot
    book does), the fixed-machine loop searches every one; the same moves either way."""
    rng = np.random.default_rng(11)
    n = 700
    runtime = rng.integers(1, 400, n)
    wl = jobs(*zip(np.sort(rng.integers(0, 2000, n)).tolist(), runtime.tolist(),
                   (runtime + rng.integers(0, 300, n)).tolist(), rng.integers(1, 9, n).tolist(),
                   strict=True))
    plat = Platform.homogeneous(4, {"cores": 2}).with_node_model(GENERIC)
    kwargs: dict[str, object] = {}
    if changes == "nodes":
        kwargs["scenario"] = Scenario([Change(t, "alive_nodes", float(3 + (t // 500) % 2))
                                       for t in range(500, 60000, 500)]
                                      + [Change(60000, "alive_nodes", 4.0)])
    elif changes == "cap":
        kwargs["power_cap"] = 4 * GENERIC.idle + 6 * GENERIC.core_first
    res = assert_same(wl, plat, "conservative", **kwargs)
    stats = _stats(res)
    assert stats["moves"] > 0
    assert max(np.frombuffer(bytes(res.recorder.samples), np.int64)  # type: ignore[union-attr]
               .reshape(-1, 5)[:, 1]) >= 300  # the queue (so the book) grew past 256
