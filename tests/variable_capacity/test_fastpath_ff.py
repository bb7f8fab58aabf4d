"""The first-fit strategies (``ff-aware``, ``ff-unaware``) in their compiled loop give exactly
the general loop's run: every segment (aborted runs included), node-state row, sample,
decision point, run statistic and summary entry (``assert_same``), machines leaving and
coming back by the strategy's own choice (aware: highest indices; unaware: drawn with the
run's generator)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dispatchlab import Platform, Workload, simulate
from dispatchlab.engine.scenario import Change, Scenario
from dispatchlab.errors import ConfigError
from dispatchlab.numba_loader import NUMBA
from dispatchlab.workload.load import load_workload
from tests.engine.test_fastpath import assert_same
from tests.variable_capacity.helpers import segments

pytestmark = pytest.mark.skipif(not NUMBA, reason="Numba disabled")

STRATEGIES = ["ff-aware", "ff-unaware"]
#: The case study's walk (alive count in [16, 32], 20-minute period), one per seed.
WALK = "gen:capacity-walk:mean=24,range=8,period=1200,until=3000000,seed={seed}"


@pytest.fixture(scope="module")
def synthetic() -> Workload:
    """A day of the case study's synthetic log family (full load of 26 × 24 cores)."""
    return load_workload("gen:vc-synthetic:kind=log,jobs=2500,window=86400,seed=1")


def _aborted(res: object) -> int:
    rec = res.recorder  # type: ignore[attr-defined]
    return int((np.asarray(rec.segments.outcome) == 2).sum())


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_synthetic_case_study_setup(synthetic: Workload, strategy: str) -> None:
    for seed in (1, 2):
        res = assert_same(synthetic, "nodes=32,cores=24", strategy, seed=seed,
                          scenario=WALK.format(seed=seed), walltime_kill=False)
        assert _aborted(res) > 0  # machines left under running jobs
        assert res.summary["restarts"] > 0


def test_checkpoints_fail_kills_and_other_walks(synthetic: Workload) -> None:
    rng = np.random.default_rng(4)
    ck = np.where(rng.random(synthetic.n_jobs) < 0.5,
                  rng.integers(60, 3600, synthetic.n_jobs), 0)
    with_ck = dataclasses.replace(synthetic, checkpoint=ck.astype(np.int64))
    authors = WALK.format(seed=3) + ",model=authors"
    for strategy in STRATEGIES:
        res = assert_same(with_ck, "nodes=32,cores=24", strategy, seed=3, scenario=authors,
                          walltime_kill=False)
        assert res.summary["lost_work_core_seconds"] > 0
        assert_same(synthetic, "nodes=32,cores=24", strategy, seed=5,
                    scenario=WALK.format(seed=5), walltime_kill=False, on_abort="fail")
    # wall-time kills: half the jobs asked for less than they run
    short = dataclasses.replace(
        synthetic, walltime=np.where(rng.random(synthetic.n_jobs) < 0.5,
                                     np.maximum(synthetic.runtime // 2, 1),
                                     synthetic.walltime).astype(np.int64))
    for strategy in STRATEGIES:
        assert_same(short, "nodes=32,cores=24", strategy, seed=6, scenario=WALK.format(seed=6))


def test_node_rows_mixed_with_counts_and_no_scenario(synthetic: Workload) -> None:
    """``node_down``/``node_up`` rows change which machines ``ff-unaware`` may draw."""
    rows = [Change(3000 * k + 7, "node_down", 0.0, f"n{(5 * k) % 32:02d}") for k in range(20)]
    rows += [Change(3000 * k + 1500, "node_up", 0.0, f"n{(5 * k) % 32:02d}")
             for k in range(20)]
    rows += [Change(20000, "alive_nodes", 20.0), Change(20000, "alive_nodes", 20.0),
             Change(40000, "alive_nodes", 32.0), Change(50000, "alive_nodes", 25.0),
             Change(70000, "alive_nodes", 32.0)]
    scen = Scenario(rows, source="test rows")
    for strategy in STRATEGIES:
        assert_same(synthetic, "nodes=32,cores=24", strategy, seed=8, scenario=scen,
                    walltime_kill=False)
        assert_same(synthetic, "nodes=26,cores=24", strategy, walltime_kill=False)


@st.composite
def vc_runs(draw: st.DrawFn) -> tuple[Workload, Platform, Scenario, dict[str, object]]:
    """Small machines of unequal sizes, one-machine jobs (some larger than any machine:
    rejected), coinciding arrivals, ends and rows, run times 0, kills, checkpoints; the
    count walks anywhere in [0, machines] and every machine is back at the end."""
    n_nodes = draw(st.integers(1, 5))
    cap = np.array([[draw(st.integers(1, 6))] for _ in range(n_nodes)], dtype=np.int64)
    plat = Platform(resources=("cores",), capacity=cap,
                    node_names=tuple(f"n{k}" for k in range(n_nodes)), name="random")
    n = draw(st.integers(1, 30))
    submit = np.cumsum(draw(st.lists(st.sampled_from([0, 0, 1, 2, 5, 30]), min_size=n,
                                     max_size=n)))
    walltime = draw(st.lists(st.integers(1, 40), min_size=n, max_size=n))
    runtime = [draw(st.integers(0, w + 5)) for w in walltime]
    cores = draw(st.lists(st.sampled_from([1, 1, 1, 2, 2, 3, 4, 6, 7]), min_size=n, max_size=n))
    checkpoint = draw(st.lists(st.sampled_from([0, 0, 3, 10]), min_size=n, max_size=n))
    wl = Workload.from_columns(submit=submit, walltime=walltime, runtime=runtime,
                               units=[1] * n, req={"cores": cores}, checkpoint=checkpoint)
    rows = []
    for _ in range(draw(st.integers(0, 12))):
        t = draw(st.integers(0, int(submit[-1]) + 40))
        what = draw(st.sampled_from(["alive_nodes", "alive_nodes", "node_down", "node_up"]))
        if what == "alive_nodes":
            rows.append(Change(t, what, float(draw(st.integers(0, n_nodes)))))
        else:
            rows.append(Change(t, what, 0.0, f"n{draw(st.integers(0, n_nodes - 1))}"))
    last = int(submit[-1]) + 41
    rows += [Change(last, "alive_nodes", float(n_nodes)), Change(last, "node_up", 0.0, "n0")]
    settings_ = {"seed": draw(st.integers(0, 3)),
                 "walltime_kill": draw(st.booleans()),
                 "on_abort": draw(st.sampled_from(["requeue", "fail"]))}
    return wl, plat, Scenario(rows, source="drawn"), settings_


@pytest.mark.slow
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=vc_runs(), strategy=st.sampled_from(STRATEGIES))
def test_random_small_runs(case: tuple[Workload, Platform, Scenario, dict[str, object]],
                           strategy: str) -> None:
    wl, plat, scen, kw = case
    assert_same(wl, plat, strategy, scenario=scen, on_infeasible="reject", **kw)


def test_refusals_name_the_reason(synthetic: Workload) -> None:
    """What the compiled loop does not take runs in the general loop; ``loop="compiled"``
    says why."""
    two = dataclasses.replace(synthetic, units=np.where(np.arange(synthetic.n_jobs) == 5, 2, 1))
    with pytest.raises(ConfigError, match="several units"):
        simulate(two, "nodes=32,cores=24", "ff-aware", loop="compiled", walltime_kill=False)
    mem = Workload.from_columns(submit=[0, 1], walltime=[5, 5], runtime=[5, 5], units=[1, 1],
                                req={"cores": [1, 2], "mem": [0, 3]})
    with pytest.raises(ConfigError, match="other than cores"):
        simulate(mem, "nodes=2,cores=4,mem=8", "ff-unaware", loop="compiled")
    assert simulate(mem, "nodes=2,cores=4,mem=8", "ff-unaware").summary["loop"] == "general"
    hot = Scenario([Change(100, "temperature", 30.0), Change(200, "alive_nodes", 20.0)])
    with pytest.raises(ConfigError, match="temperature"):
        simulate(synthetic, "nodes=32,cores=24", "ff-aware", scenario=hot, loop="compiled")
    res = simulate(synthetic, "nodes=32,cores=24", "target-asap", loop="auto",
                   scenario=WALK.format(seed=1), walltime_kill=False)
    assert res.summary["loop"] == "general"  # no compiled plan (the target strategies)


def test_the_ahead_of_time_module_runs_the_loop_when_it_is_built() -> None:
    """The unit exports the loop with the signature the runner calls (built from these
    sources); under ``DISPATCHLAB_NO_AOT`` the JIT runs it."""
    import os

    from dispatchlab.dispatchers.variable_capacity.compiled.first_fit_loop import (
        first_fit_loop,
    )
    from dispatchlab.dispatchers.variable_capacity.compiled.kernel import FIRST_FIT_LOOP
    from dispatchlab.numba_aot import load
    from dispatchlab.numba_loader import kind

    wl = Workload.from_columns(submit=[0, 0, 1], walltime=[5, 5, 5], runtime=[5, 5, 5],
                               units=[1, 1, 1], req={"cores": [2, 3, 1]})
    scen = Scenario([Change(2, "alive_nodes", 1.0), Change(4, "alive_nodes", 2.0)])
    res = assert_same(wl, "nodes=2,cores=4", "ff-aware", scenario=scen)
    # job 1 (3 cores) goes to machine 1, the first with room; machine 1 leaves at 2 (the
    # highest index) and job 1 waits for it to come back at 4 (machine 0 has 1 core free)
    assert segments(res) == [(0, 0, 5, 0, 0), (1, 0, 2, 1, 2), (2, 1, 6, 0, 0),
                             (1, 4, 9, 1, 0)]
    if not os.environ.get("DISPATCHLAB_NO_AOT") and load(FIRST_FIT_LOOP) is not None:
        assert kind(first_fit_loop) == "aot"
