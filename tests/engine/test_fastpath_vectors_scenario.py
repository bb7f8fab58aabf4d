"""The compiled loop of jobs asking different per-unit resource vectors (Eurora) with nodes
leaving and coming back gives exactly the general loop's run: every segment (aborted runs,
lost work, re-queues from a checkpoint, failures), node log, start, plan, sample and power
sample — strict, non-strict, EASY and ``easy-power``, first-fit and ``energy-model``, with
no cap, a fixed cap or one varying with the scenario."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dispatchlab import Platform, Workload, simulate
from dispatchlab.dispatchers.rule_based.compiled.kernel import AVAILABLE
from dispatchlab.engine.scenario import Change, Scenario
from dispatchlab.errors import ConfigError, DispatchlabError
from dispatchlab.workload.load import load_workload
from tests.conftest import trace_available, trace_path
from tests.engine.test_fastpath import assert_same
from tests.engine.test_fastpath_vectors import (
    EASY_ENERGY,
    ENERGY,
    INSTANCES,
    _campaign_rows,
    vector_runs,
)

pytestmark = pytest.mark.skipif(not AVAILABLE, reason="Numba disabled")

#: Eurora-8: between 4 and 8 nodes alive, a step every 10 minutes.
WALK8 = ("gen:random-walk:what=alive_nodes,mean=6,range=2,step=1,period=600,until=400000,"
         "seed=5")
#: Eurora-32: between 24 and 32.
WALK32 = ("gen:random-walk:what=alive_nodes,mean=28,range=4,step=2,period=900,until=400000,"
          "seed=3")


@pytest.mark.parametrize(("campaign", "platform", "every", "walk"), [
    ("eurora8_rules", "eurora-8", 41, WALK8),
    ("eurora32_rules", "eurora-32", 61, WALK32),
])
@pytest.mark.slow
def test_eurora_instances_with_a_node_walk_under_their_caps(campaign: str, platform: str,
                                                            every: int, walk: str) -> None:
    """Instances of the power-capping study at their cap levels, nodes walking; aborted
    jobs re-queued, or failed."""
    done = 0
    for row in _campaign_rows(campaign, every):
        wl = load_workload(INSTANCES / str(row["path"]), skip=row["skip"], limit=row["limit"])
        for disp in ("easy", "easy-power", "fifo-nonstrict", "prb-power", *EASY_ENERGY[:1]):
            done += _same_or_both_stuck(wl, platform, disp,
                                        scenario=[walk, str(row["scenario"])])
        done += _same_or_both_stuck(wl, platform, "easy", scenario=walk, on_abort="fail")
    assert done >= 10


def _same_or_both_stuck(wl: Workload, platform: str | Platform, disp: str,
                        **kwargs: object) -> int:
    """1 when both loops gave the same run (nodes moved in it), 0 when both report a queue
    stuck for good (a job wider than the nodes alive once the walk is over)."""
    try:
        res = assert_same(wl, platform, disp, **kwargs)
    except (ConfigError, DispatchlabError) as exc:  # (the compiled run says why, or the
        assert "the queue is stuck" in str(exc) or "no pending event" in str(exc)  # engine)
        with pytest.raises(DispatchlabError, match="no pending event"):
            simulate(wl, platform, disp, loop="general", **kwargs)  # type: ignore[arg-type]
        return 0
    return 1 if len(res.recorder.node_log) else 0  # type: ignore[union-attr]


def test_node_rows_checkpoints_and_a_cap_walk() -> None:
    """``node_down`` / ``node_up`` rows hitting busy nodes, checkpoints, no wall-time kill,
    a varying cap."""
    rows = _campaign_rows("eurora8_rules", 1)
    wl = load_workload(INSTANCES / str(rows[0]["path"]), skip=0, limit=25)
    rng = np.random.default_rng(4)
    ck = np.where(rng.random(wl.n_jobs) < 0.5, rng.integers(60, 1800, wl.n_jobs), 0)
    wl = dataclasses.replace(wl, checkpoint=ck.astype(np.int64))
    scen = Scenario([Change(t, kind, 0.0, f"node{n:02d}") for t, kind, n in
                     [(300, "node_down", 0), (300, "node_down", 3), (2000, "node_up", 0),
                      (2500, "node_down", 1), (4000, "node_up", 3), (6000, "node_up", 1)]]
                    + [Change(1000, "power_cap", 1300.0), Change(5000, "power_cap", 1700.0)])
    for disp in ("easy", "easy-power", "fifo", "fifo-nonstrict", "prb-power",
                 "order=sjf,select=easy,depth=2,estimate=real", ENERGY[-1], *EASY_ENERGY):
        res = assert_same(wl, "eurora-8", disp, scenario=scen)
        assert (res.recorder.segments.outcome == 2).any()  # type: ignore[union-attr]
        assert_same(wl, "eurora-8", disp, scenario=scen, walltime_kill=False,
                    power_cap=1500.0)


@pytest.mark.skipif(not trace_available("eurora-historical/100")
                    or not trace_available("eurora-power-caps"),
                    reason="the Eurora historical batches or cap profiles are absent")
def test_historical_batch_with_a_node_walk_under_the_cap_profile() -> None:
    batch = sorted(trace_path("eurora-historical/100").iterdir())[0]
    wl = load_workload(batch)
    for disp in ("easy", "easy-power", "prb-power", *EASY_ENERGY):
        assert_same(wl, "eurora-8", disp,
                    scenario=[WALK8, "trace:eurora-power-caps/power_caps_100"])


@st.composite
def moving_vector_runs(draw: st.DrawFn) -> tuple[Workload, Platform, dict[str, object], str]:
    """:func:`vector_runs` (2–4 resources, mixed nodes, no power, node model or job column,
    no cap, fixed or varying) with nodes leaving and coming back (``alive_nodes``,
    ``node_down``, ``node_up`` rows), checkpoints, re-queue or fail."""
    wl, plat, kwargs, disp = draw(vector_runs())
    n_nodes = plat.n_nodes
    rows = []
    for _ in range(draw(st.integers(1, 6))):
        t = draw(st.integers(0, 60))
        kind = draw(st.sampled_from(["alive_nodes", "node_down", "node_up"]))
        if kind == "alive_nodes":
            rows.append(Change(t, kind, float(draw(st.integers(0, n_nodes)))))
        else:
            rows.append(Change(t, kind, 0.0,
                               plat.node_names[draw(st.integers(0, n_nodes - 1))]))
    rows.append(Change(draw(st.integers(60, 90)), "alive_nodes", float(n_nodes)))
    old = kwargs.get("scenario")
    kwargs["scenario"] = Scenario(rows + (list(old.changes) if isinstance(old, Scenario)
                                          else []))
    kwargs["on_abort"] = draw(st.sampled_from(["requeue", "requeue", "fail"]))
    ck = draw(st.lists(st.sampled_from([0, 0, 2, 5]), min_size=wl.n_jobs, max_size=wl.n_jobs))
    return dataclasses.replace(wl, checkpoint=np.array(ck, np.int64)), plat, kwargs, disp


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=moving_vector_runs())
def test_random_vector_runs_with_nodes_moving(
        case: tuple[Workload, Platform, dict[str, object], str]) -> None:
    wl, plat, kwargs, disp = case
    _same_or_both_stuck(wl, plat, disp, **kwargs)


def test_what_stays_in_the_general_loop_with_nodes_moving() -> None:
    """Informational rows beside node rows, and a dispatcher choosing the nodes that leave,
    keep the general loop (``loop="compiled"`` names why)."""
    wl = Workload.from_columns(submit=[0, 1], walltime=[5, 5], runtime=[5, 3], units=[1, 2],
                               req={"cores": [2, 1], "mem": [1, 3]})
    plat = Platform.homogeneous(2, {"cores": 2, "mem": 4})
    leaving = [Change(2, "alive_nodes", 1.0), Change(9, "alive_nodes", 2.0)]
    assert assert_same(wl, plat, "easy", scenario=Scenario(leaving)).summary["loop"] == \
        "compiled"
    info = Scenario([*leaving, Change(3, "temperature", 20.0)])
    assert simulate(wl, plat, "easy", scenario=info).summary["loop"] == "general"
    with pytest.raises(ConfigError, match="nodes leaving"):
        simulate(wl, plat, "easy", scenario=info, loop="compiled")
    with pytest.raises(ConfigError, match="conservative"):
        simulate(wl, plat, "conservative", scenario=Scenario(leaving), loop="compiled")


def test_a_node_coming_back_renews_the_reservation() -> None:
    """EASY's head, too wide for the nodes alive, gets a reservation once a node comes back
    (no job ended then), and a long job arriving then may not start beside it."""
    wl = Workload.from_columns(submit=[0, 0, 2], walltime=[10, 10, 20], runtime=[10, 10, 20],
                               units=[1, 3, 1], req={"cores": [2, 2, 1]})
    plat = Platform.homogeneous(3, {"cores": 2})
    back = Scenario([Change(0, "alive_nodes", 2.0), Change(2, "alive_nodes", 3.0)])
    for disp in ("easy", "order=fifo,select=easy,depth=2"):
        res = assert_same(wl, plat, disp, scenario=back)
        rec = res.recorder
        assert rec is not None and int(rec.planned[1]) == 10
        assert int(rec.segments.t0[list(rec.segments.job).index(2)]) == 20
