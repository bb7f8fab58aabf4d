"""Multi-, Relaxation- and Delay-Search on small instances with known answers."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatchlab.dispatchers.offline_plan.planner.heuristic import heuristic
from dispatchlab.dispatchers.offline_plan.planner.objective import (
    IncrementalProfit,
    ProfitModel,
    evaluate,
)
from dispatchlab.dispatchers.offline_plan.planner.plan import Plan
from dispatchlab.dispatchers.offline_plan.planner.searches import (
    ORDERINGS,
    Limits,
    delay_search,
    multi_search,
    ordering,
    relaxation_search,
    run_search,
)
from dispatchlab.energy.cooling import PueTable
from dispatchlab.energy.profit import Prices
from dispatchlab.errors import ConfigError
from tests.planning.helpers import check_feasible, instance

#: flat PUE per row: 1.1 at 10 °C, 1.5 at 15 °C
FLAT = PueTable("flat", (10.0, 15.0), (0.0, 4000.0), ((1.1, 1.1), (1.5, 1.5)))


def hot_then_cold() -> tuple:
    """One node; 15 °C during the first hour, 10 °C after; window of two hours."""
    jobs = [(0, 1800, 1, 4), (0, 600, 1, 2), (0, 600, 1, 2)]
    inst = instance(jobs, nodes=1, cores=4, step=60, power=[2000.0, 100.0, 100.0])
    pm = ProfitModel(FLAT, (0, 3600), (15.0, 10.0), 0, 7200, Prices(1.0, 1.0), 3600)
    return inst, pm


def test_orderings_are_the_thesis_22() -> None:
    inst, pm = hot_then_cold()
    assert len(ORDERINGS) == 22
    assert ordering(inst, pm, "duration:inc").tolist() == [1, 2, 0]
    assert ordering(inst, pm, "duration:dec").tolist() == [0, 1, 2]  # ties: submission, row
    assert ordering(inst, pm, "power:dec").tolist() == [0, 1, 2]
    with pytest.raises(ConfigError, match="unknown ordering"):
        ordering(inst, pm, "fifo:inc")


def test_multi_search_takes_best_ordering_and_respects_runs() -> None:
    inst, pm = hot_then_cold()
    res = multi_search(inst, pm)
    per = res.stats["per_ordering"]
    assert len(per) == 22 and res.profit == max(per.values())
    # three jobs have only a few distinct orders: each is run once
    distinct = {ordering(inst, pm, name).tobytes() for name in ORDERINGS}
    assert res.stats["solutions"] == len(distinct) < 22
    again = multi_search(inst, pm)
    assert again.schedule.start.tolist() == res.schedule.start.tolist()
    two = multi_search(inst, pm, Limits(runs=2))
    assert two.stats["solutions"] == 2


def test_delay_search_moves_the_hot_job_to_the_cold_hour() -> None:
    inst, pm = hot_then_cold()
    first = multi_search(inst, pm)
    res = delay_search(inst, pm, start=first, delay=10)  # 10-minute steps
    check_feasible(inst, res.schedule.start, res.schedule.alloc)
    # the 2 kW job costs 0.4 of its 1.0 kWh more in the hot hour: the best start is in
    # [3600, 5400] (all of it cold, all of it inside the window)
    assert 60 <= res.schedule.start[0] <= 90
    assert res.profit > first.profit
    assert res.profit == pytest.approx(evaluate(res.plan(inst), pm)["profit"])
    assert res.stats["all_jobs_done"] and res.stats["improvements"] >= 1
    # the small jobs are delayed into the cold hour too (each its own improvement)
    assert all(res.schedule.start[j] >= 60 for j in (1, 2))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3000), st.integers(60, 4000), st.integers(1, 2),
                          st.integers(1, 4)), min_size=1, max_size=8),
       st.lists(st.integers(0, 7000), min_size=1, max_size=8))
def test_incremental_profit_matches_evaluate(jobs, moves) -> None:
    inst = instance(jobs, nodes=2, cores=4, step=60,
                    power=[150.0 * u * c for _, _, u, c in jobs])
    # a table wide enough for any pile-up of the moved jobs (moves ignore capacity)
    wide = PueTable("wide", (10.0, 15.0), (0.0, 10_000.0, 100_000.0),
                    ((1.1, 1.1, 1.3), (1.5, 1.5, 1.6)))
    pm = ProfitModel(wide, (0, 2000, 5000), (15.0, 10.0, 17.0), 0, 7200, Prices(1.0, 1.0),
                     1800)
    sched = heuristic(inst, range(len(jobs)))
    assert sched is not None
    plan = sched.to_plan(inst)
    cores = (inst.units * inst.cores_per_unit).astype(float)
    state = IncrementalProfit(pm, plan.starts, plan.ends, cores, inst.power)
    assert state.profit() == pytest.approx(evaluate(plan, pm)["profit"], rel=1e-9, abs=1e-9)
    starts = plan.starts.copy()
    for k, t in enumerate(moves):  # move jobs anywhere (feasibility does not matter here)
        j = k % len(jobs)
        state.add(j, int(starts[j]), int(starts[j] + inst.duration[j]), -1.0)
        starts[j] = t
        state.add(j, t, int(t + inst.duration[j]), 1.0)
    moved = Plan(plan.job_ids, plan.rows, starts, plan.duration, plan.alloc,
                 plan.cores_per_unit, plan.total_cores, plan.power)
    assert state.profit() == pytest.approx(evaluate(moved, pm)["profit"], rel=1e-9, abs=1e-9)


def test_delay_search_limits_are_deterministic() -> None:
    inst, pm = hot_then_cold()
    a = delay_search(inst, pm, Limits(runs=5), delay=10)
    b = delay_search(inst, pm, Limits(runs=5), delay=10)
    assert a.stats["iterations"] == 5 and not a.stats["all_jobs_done"]
    assert a.schedule.start.tolist() == b.schedule.start.tolist()


@pytest.mark.parametrize("strict", [False, True])
def test_relaxation_search_finds_the_cold_hour(strict) -> None:
    inst, pm = hot_then_cold()
    first = multi_search(inst, pm)
    res = relaxation_search(inst, pm, Limits(cp_det_time=5.0), start=first, strict=strict)
    check_feasible(inst, res.schedule.start, res.schedule.alloc)
    assert res.profit > first.profit
    assert 60 <= res.schedule.start[0] <= 90
    assert res.stats["cp_status"] in ("OPTIMAL", "FEASIBLE")


def test_run_search_by_name() -> None:
    inst, pm = hot_then_cold()
    assert run_search("heuristic", inst, pm).stats["ordering"] == "est:inc"
    with pytest.raises(ConfigError, match="unknown search"):
        run_search("tabu", inst, pm)


def test_relaxation_by_neighbourhoods_finds_the_cold_hour() -> None:
    inst, pm = hot_then_cold()
    first = multi_search(inst, pm)
    res = relaxation_search(inst, pm, Limits(cp_det_time=2.0), start=first, window_s=1800)
    check_feasible(inst, res.schedule.start, res.schedule.alloc)
    assert res.profit > first.profit
    assert 60 <= res.schedule.start[0] <= 90
    assert res.stats["neighbourhoods"] >= 1
    assert res.profit == pytest.approx(evaluate(res.plan(inst), pm)["profit"])


def test_bad_limits() -> None:
    with pytest.raises(ConfigError, match="runs"):
        Limits(runs=0)
    with pytest.raises(ConfigError, match="deterministic"):
        Limits(cp_det_time=0)
