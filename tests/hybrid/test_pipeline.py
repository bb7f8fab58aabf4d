"""The hybrid pipeline dispatcher: daily steps, no peeking, the FIFO planner ablation."""

from __future__ import annotations

import numpy as np
import pytest

from dispatchlab.dispatchers.hybrid.pipeline import HybridDardis
from dispatchlab.dispatchers.registry import get_dispatcher
from dispatchlab.platform.power import NodePowerSpec
from dispatchlab.platform.resolve import resolve_platform
from dispatchlab.simulation import simulate
from dispatchlab.workload.workload import Workload

PLATFORM = resolve_platform("nodes=8,cores=8").with_node_model(
    NodePowerSpec(core_first=9.455, core=9.455))


def workload(seed: int = 1, n: int = 240, days: int = 3) -> Workload:
    rng = np.random.default_rng(seed)
    wt = rng.integers(600, 6 * 3600, n)
    return Workload.from_columns(
        submit=np.sort(rng.integers(0, days * 86_400, n)), walltime=wt,
        runtime=(wt * rng.uniform(0.2, 1.0, n)).astype(int), units=rng.integers(1, 12, n),
        req={"cores": np.ones(n, int)}, queues={"q": 3600})


@pytest.mark.parametrize("name", ["hybrid-dardis100", "hybrid-dardis70", "hybrid-dardis50"])
def test_presets_run_a_pipeline_a_day(name: str) -> None:
    assert isinstance(get_dispatcher(name), HybridDardis)
    res = simulate(workload(), PLATFORM, name, seed=1)
    s = res.summary
    assert s["audited"] and s["jobs_run"] == 240
    days = s["dispatcher_stats"]["pipeline_days"]
    assert [d["day_start"] for d in days][:2] == [86_400, 2 * 86_400]
    assert all(d["planner"] == "heuristic-alg5" for d in days)
    for d in days:
        assert 0 < d["profile_min"] <= d["profile_mean"] <= 1


def test_a_day_profile_uses_only_what_was_known_before_it() -> None:
    # the same jobs until 20 h, different ones from 23.92 h: the profile of day 1, made
    # at 24 h − lead (lead = 151 s of boot + 2 slots of 300 s: 23.79 h), cannot differ
    prefix = workload(seed=1)
    head = prefix.take(np.flatnonzero(prefix.submit < 20 * 3600))

    def with_tail(seed: int) -> Workload:
        other = workload(seed=seed)
        tail = other.take(np.flatnonzero(other.submit >= 24 * 3600 - 300))
        return Workload.from_columns(
            submit=np.r_[head.submit, tail.submit],
            walltime=np.r_[head.walltime, tail.walltime],
            runtime=np.r_[head.runtime, tail.runtime], units=np.r_[head.units, tail.units],
            req={"cores": np.ones(head.n_jobs + tail.n_jobs, int)}, queues={"q": 3600})

    ra = simulate(with_tail(2), PLATFORM, "hybrid-dardis70", seed=1)
    rb = simulate(with_tail(3), PLATFORM, "hybrid-dardis70", seed=1)
    da = ra.summary["dispatcher_stats"]["pipeline_days"]
    db = rb.summary["dispatcher_stats"]["pipeline_days"]
    for key in ("forecast_jobs", "previous_utilization", "planned_utilization",
                "profile_mean", "profile_min"):
        assert da[0][key] == db[0][key]
    assert [d["forecast_jobs"] for d in da[1:]] != [d["forecast_jobs"] for d in db[1:]]


def test_a_rule_based_schedule_can_stand_in_for_the_planner() -> None:
    res = simulate(workload(days=2, n=150), PLATFORM, HybridDardis(0.3, planner="fifo"),
                   seed=1)
    days = res.summary["dispatcher_stats"]["pipeline_days"]
    assert days and all(d["planner"] == "rule-based-fifo" for d in days)
    assert res.summary["audited"]


def test_a_busy_day_asks_for_the_whole_machine_and_parks_nothing() -> None:
    # 16 jobs × 8 cores over two days keep every core busy: utilization > 84 %
    n = 12
    wl = Workload.from_columns(
        submit=np.arange(n) * 14_400, walltime=np.full(n, 4 * 3600),
        runtime=np.full(n, 4 * 3600), units=np.full(n, 64), req={"cores": np.ones(n, int)},
        queues={"q": 3600})
    res = simulate(wl, PLATFORM, "hybrid-dardis50", seed=1)
    day = res.summary["dispatcher_stats"]["pipeline_days"][0]
    assert day["previous_utilization"] > 0.84
    assert day["profile_min"] == 1.0
    assert res.summary["dispatcher_stats"]["power_offs"] == 0


def test_the_planned_day_counts_the_jobs_still_running() -> None:
    # one job holds all 64 cores from 0 to its requested end at 48 h (it runs 47 h): the
    # pipeline of day 1 (run before 24 h) plans its forecast replay after 48 h, so the
    # plan's own jobs use nothing on day 1, but the machine is full all day — the
    # profile is compared with the whole use, so the planned day is 100 % busy
    wl = Workload.from_columns(submit=[0], walltime=[48 * 3600], runtime=[47 * 3600],
                               units=[64], req={"cores": [1]}, queues={"q": 3600})
    day = simulate(wl, PLATFORM, "hybrid-dardis70", seed=1).summary[
        "dispatcher_stats"]["pipeline_days"][0]
    assert (day["day_start"], day["forecast_jobs"]) == (86_400, 1)
    assert day["planned_utilization"] == pytest.approx(1.0)


def test_a_day_whose_run_time_passed_unseen_is_skipped() -> None:
    # the first job arrives at 1.5 days: nothing was decided before day 1 began, so day
    # 1 gets no profile (counted), day 2 does
    wl = workload(n=120, days=2)
    late = Workload.from_columns(
        submit=wl.submit + 129_600, walltime=wl.walltime, runtime=wl.runtime,
        units=wl.units, req={"cores": np.ones(wl.n_jobs, int)}, queues={"q": 3600})
    st = simulate(late, PLATFORM, "hybrid-dardis70", seed=1).summary["dispatcher_stats"]
    assert st["pipeline_days_skipped"] == 1
    assert st["pipeline_days"][0]["day_start"] == 2 * 86_400


def test_an_unknown_planner_is_refused() -> None:
    with pytest.raises(ValueError, match="planner must be one of alg5, multi, delay, fifo"):
        HybridDardis(0.3, planner="cp")
