"""The offline-plan dispatchers: a replayed plan equals the plan; early ends, compress,
fallback; per-day planning inside a run."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatchlab.dispatchers.offline_plan.planner.heuristic import heuristic
from dispatchlab.dispatchers.offline_plan.planner.instance import from_workload
from dispatchlab.dispatchers.offline_plan.planner.plan import Plan
from dispatchlab.dispatchers.registry import get_dispatcher
from dispatchlab.errors import ConfigError
from dispatchlab.platform.resolve import resolve_platform
from dispatchlab.simulation import simulate
from dispatchlab.workload.workload import Workload


def wl_of(rows: list[tuple[int, int, int, int, int]]) -> Workload:
    """(submit, runtime, walltime, units, cores per unit)."""
    sub, run, wall, units, cores = zip(*rows, strict=True)
    return Workload.from_columns(submit=list(sub), runtime=list(run), walltime=list(wall),
                                 units=list(units), req={"cores": list(cores)},
                                 power=[10.0 * u * c for *_, u, c in rows])


def placements(res: Any) -> dict[int, tuple[int, list[tuple[int, int]]]]:
    """job id → (first start, [(node, units)]) of its first segment."""
    rec = res.recorder
    seg = rec.segments
    out: dict[int, tuple[int, list[tuple[int, int]]]] = {}
    for k in range(len(seg)):
        jid = int(rec.workload.job_id[seg.job[k]])
        if jid in out:
            continue
        a, b = seg.offsets[k], seg.offsets[k + 1]
        out[jid] = (int(seg.t0[k]), list(zip(seg.nodes[a:b].tolist(),
                                             seg.counts[a:b].tolist(), strict=True)))
    return out


def plan_for(wl: Workload, platform: str, order: list[int] | None = None,
             step: int = 1) -> Plan:
    plat = resolve_platform(platform)
    inst = from_workload(wl, plat, duration="walltime", step=step)
    sched = heuristic(inst, order if order is not None else list(range(len(inst))))
    assert sched is not None
    return sched.to_plan(inst)


def as_dict(plan: Plan) -> dict[int, tuple[int, list[tuple[int, int]]]]:
    return {int(j): (int(s), list(a)) for j, s, a in zip(plan.job_ids, plan.starts,
                                                           plan.alloc, strict=True)}


JOBS = [(0, 100, 100, 2, 4), (0, 50, 50, 1, 2), (30, 40, 40, 1, 4), (120, 30, 30, 1, 4),
        (125, 60, 60, 2, 2)]


@pytest.mark.parametrize("order", [[0, 1, 2, 3, 4], [4, 3, 2, 1, 0]])
def test_replay_equals_plan_when_runtimes_are_walltimes(tmp_path, order) -> None:
    wl = wl_of(JOBS)
    plan = plan_for(wl, "nodes=2,cores=4", order)
    path = str(tmp_path / "p.parquet")
    plan.save(path)
    res = simulate(wl, "nodes=2,cores=4", f"plan={path}")
    assert placements(res) == as_dict(plan)
    assert res.summary["dispatcher_stats"]["replay"]["on_plan"] == len(JOBS)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 200), st.integers(1, 90), st.integers(1, 3),
                          st.integers(1, 4)), min_size=1, max_size=10),
       st.randoms(use_true_random=False))
def test_replay_equals_plan_random(tmp_path_factory, jobs, rnd) -> None:
    wl = wl_of([(s, d, d, u, c) for s, d, u, c in jobs])
    order = list(range(len(jobs)))
    rnd.shuffle(order)
    plan = plan_for(wl, "nodes=3,cores=4", order, step=rnd.choice([1, 7, 60]))
    path = str(tmp_path_factory.mktemp("p") / "p.csv")
    plan.save(path)
    res = simulate(wl, "nodes=3,cores=4", f"plan={path}")
    assert placements(res) == as_dict(plan)


def test_early_end_keeps_planned_starts_unless_compress(tmp_path) -> None:
    # job 1 is planned for its 100 s wall-time but runs 20 s; job 2 (whole machine) is
    # planned at 100: it waits for 100 without compress, starts at 20 with it
    wl = wl_of([(0, 20, 100, 1, 4), (0, 50, 50, 2, 4), (10, 10, 10, 1, 4)])
    plan = plan_for(wl, "nodes=2,cores=4")
    assert plan.starts.tolist() == [0, 100, 10]
    path = str(tmp_path / "p.parquet")
    plan.save(path)
    res = simulate(wl, "nodes=2,cores=4", f"plan={path}")
    assert {k: v[0] for k, v in placements(res).items()} == {1: 0, 2: 100, 3: 10}
    fast = simulate(wl, "nodes=2,cores=4", f"plan={path},compress=1")
    assert {k: v[0] for k, v in placements(fast).items()} == {1: 0, 2: 20, 3: 10}
    assert fast.summary["dispatcher_stats"]["replay"]["compressed"] == 1


def test_compress_never_delays_another_planned_job(tmp_path) -> None:
    # one node. Job 1 planned [0, 50) runs 20 s. Job 2 (50 s) planned at 100; job 3,
    # submitted only at 55, planned at 60 for 30 s. At 20, job 2 would fit until 70 but
    # job 3's planned start is 60: job 2 keeps its plan (job 3 is not even queued yet)
    plan = Plan(job_ids=np.array([1, 2, 3]), rows=np.array([0, 1, 2]),
                starts=np.array([0, 100, 60]), duration=np.array([50, 50, 30]),
                alloc=(((0, 1),), ((0, 1),), ((0, 1),)), cores_per_unit=np.array([4, 4, 4]),
                total_cores=4)
    wl = wl_of([(0, 20, 50, 1, 4), (0, 50, 50, 1, 4), (55, 30, 30, 1, 4)])
    path = str(tmp_path / "p.parquet")
    plan.save(path)
    res = simulate(wl, "nodes=1,cores=4", f"plan={path},compress=1")
    starts = {k: v[0] for k, v in placements(res).items()}
    # job 3 itself is compressed to its submission (55 + 30 ≤ job 2's 100), then job 2
    # to job 3's end
    assert starts == {1: 0, 3: 55, 2: 85}


def test_plan_for_another_workload_is_an_error(tmp_path) -> None:
    wl = wl_of(JOBS)
    plan = plan_for(wl, "nodes=2,cores=4")
    path = str(tmp_path / "p.parquet")
    plan.save(path)
    other = Workload.from_columns(submit=[0], runtime=[5], walltime=[5], units=[1],
                                  req={"cores": [1]}, job_id=[99])
    with pytest.raises(ConfigError, match="another workload"):
        simulate(other, "nodes=2,cores=4", f"plan={path}")


def test_fallback_when_planned_nodes_are_busy(tmp_path) -> None:
    # a bad plan puts two overlapping jobs on node 0: the second goes to node 1
    plan = Plan(job_ids=np.array([1, 2]), rows=np.array([0, 1]), starts=np.array([0, 5]),
                duration=np.array([50, 50]), alloc=(((0, 1),), ((0, 1),)),
                cores_per_unit=np.array([4, 4]), total_cores=8)
    wl = wl_of([(0, 50, 50, 1, 4), (0, 50, 50, 1, 4)])
    path = str(tmp_path / "p.parquet")
    plan.save(path)
    res = simulate(wl, "nodes=2,cores=4", f"plan={path}")
    assert placements(res)[2] == (5, [(1, 1)])
    assert res.summary["dispatcher_stats"]["replay"]["moved"] == 1


def test_offline_planner_per_day_runs_and_never_starts_early() -> None:
    rng = np.random.default_rng(3)
    n = 40
    sub = np.sort(rng.integers(0, 2 * 86400, n))
    run = rng.integers(600, 20000, n)
    rows = [(int(s), int(r), int(r), int(rng.integers(1, 3)), int(rng.integers(1, 5)))
            for s, r in zip(sub, run, strict=True)]
    wl = wl_of(rows)
    for spec in ("offline=heuristic,temperature=summer", "offline=multi,temperature=winter",
                 "offline=delay,temperature=summer,runs=20"):
        res = simulate(wl, "nodes=4,cores=4", spec)
        jobs = res.jobs
        assert (jobs["start"] >= jobs["submit"]).all()
        stats = res.summary["dispatcher_stats"]
        assert [c["chunk"] for c in stats["chunks"]] == [0, 1]
        assert stats["replay"]["moved"] == 0 and stats["replay"]["unplanned"] == 0


def test_offline_planner_needs_a_temperature() -> None:
    wl = wl_of([(0, 10, 10, 1, 1)])
    with pytest.raises(ConfigError, match="no ambient temperature"):
        simulate(wl, "nodes=1,cores=4", "offline-delay")


def test_bad_specs() -> None:
    with pytest.raises(ConfigError, match="unknown key"):
        get_dispatcher("offline=multi,colour=red")
    with pytest.raises(ConfigError, match="unknown search"):
        get_dispatcher("offline=tabu")
    with pytest.raises(ConfigError, match="not a number"):
        get_dispatcher("offline=delay,runs=many")
    with pytest.raises(ConfigError, match="runs"):
        get_dispatcher("offline=delay,runs=0")
    with pytest.raises(ConfigError, match="duration"):
        get_dispatcher("offline=delay,duration=guess")


@pytest.mark.slow
def test_offline_relax_is_reproducible() -> None:
    rng = np.random.default_rng(5)
    n = 25
    sub = np.sort(rng.integers(0, 86400, n))
    run = rng.integers(600, 20000, n)
    wl = wl_of([(int(s), int(r), int(r), int(rng.integers(1, 3)), int(rng.integers(1, 5)))
                for s, r in zip(sub, run, strict=True)])
    spec = "offline=relax,temperature=summer,cpdet=0.5"
    a = simulate(wl, "nodes=3,cores=4", spec)
    b = simulate(wl, "nodes=3,cores=4", spec)
    assert placements(a) == placements(b)
    assert (a.jobs["start"] >= a.jobs["submit"]).all()
    assert a.summary["dispatcher_stats"]["replay"]["moved"] == 0
