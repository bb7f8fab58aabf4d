"""The planner under a tariff: the run's ``energy_price`` rows replace K2 over time in the
evaluator, the incremental profit, the CP model and every planning dispatcher."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from ortools.sat.python import cp_model
from typer.testing import CliRunner

from dispatchlab.cli.main import app
from dispatchlab.dispatchers.offline_plan.planner.heuristic import heuristic
from dispatchlab.dispatchers.offline_plan.planner.model import build_model, solver_for
from dispatchlab.dispatchers.offline_plan.planner.objective import (
    IncrementalProfit,
    ProfitModel,
    evaluate,
)
from dispatchlab.dispatchers.offline_plan.planner.profit_inputs import resolve_profit_inputs
from dispatchlab.dispatchers.offline_plan.planner.searches import Limits, run_search
from dispatchlab.energy.cooling import PueTable
from dispatchlab.energy.profit import Prices
from dispatchlab.engine.scenario_gen import resolve_scenario
from dispatchlab.errors import ConfigError
from dispatchlab.workload.workload import Workload
from tests.planning.helpers import check_feasible, instance
from tests.planning.test_model import NONCONVEX, TABLE
from tests.planning.test_objective import two_jobs

runner = CliRunner()


def tariff_model(**kw: object) -> ProfitModel:
    """10 °C until 3600 s then 16 °C; 0.20 per kWh until 1800 s, then 0.05."""
    args: dict[str, object] = {"price_times": (0, 1800), "price_values": (0.2, 0.05)}
    args.update(kw)
    return ProfitModel(TABLE, (0, 3600), (10.0, 16.0), 0, 7200, Prices(0.1, 0.9), 3600,
                       **args)  # type: ignore[arg-type]


def test_two_job_profit_under_a_tariff_by_hand() -> None:
    pm = tariff_model()
    # segments cut at the price change too, each priced at its own price (K2 = 0.9 unused)
    assert [(s.start, s.end, s.temperature, s.price) for s in pm.segments()] == [
        (0, 1800, 10.0, 0.2), (1800, 3600, 10.0, 0.05), (3600, 7200, 15.0, 0.05)]
    r = evaluate(two_jobs(), pm)
    # [0, 1800): 500 W → C = 50 W; 0.2 · (900 kJ + 90 kJ)            = 0.055
    # [1800, 3600): 1500 W → C = 100 + 0.3 · 500 = 250 W; 0.05 · (2.7 MJ + 450 kJ) = 0.04375
    # [3600, 7200): mean 500 W at 15 °C → C = 150 W; 0.05 · (1.8 MJ + 540 kJ)     = 0.0325
    assert r["energy_cost"] == pytest.approx(0.13125)
    assert r["profit"] == pytest.approx(0.1 * 12 - 0.13125)
    # exact: cooling 50, 225 (PUE 1.15), 300 W (PUE 1.3) on the three 1800 s stretches
    exact = (0.2 * 550 + 0.05 * 1725 + 0.05 * 1300) * 1800 / 3.6e6
    assert r["profit_exact"] == pytest.approx(0.1 * 12 - exact)


def test_a_constant_tariff_is_the_constant_price() -> None:
    flat = tariff_model(price_times=(0,), price_values=(0.9,))
    plain = tariff_model(price_times=(), price_values=())
    a, b = evaluate(two_jobs(), flat), evaluate(two_jobs(), plain)
    for key in ("profit", "profit_exact", "energy_cost", "cooling_kwh"):
        assert a[key] == pytest.approx(b[key], rel=1e-12)


def test_bad_tariffs_are_refused() -> None:
    with pytest.raises(ConfigError, match="differ in number"):
        tariff_model(price_times=(0, 10), price_values=(0.1,))
    with pytest.raises(ConfigError, match="must not decrease"):
        tariff_model(price_times=(10, 0), price_values=(0.1, 0.2))
    with pytest.raises(ConfigError, match="finite and >= 0"):
        tariff_model(price_times=(0, 10), price_values=(0.1, -0.2))


def test_incremental_profit_follows_the_tariff() -> None:
    pm = tariff_model()
    plan = two_jobs()
    cores = (plan.units * plan.cores_per_unit).astype(float)
    state = IncrementalProfit(pm, plan.starts, plan.ends, cores, plan.power)
    assert state.profit() == pytest.approx(evaluate(plan, pm)["profit"], rel=1e-12)


@pytest.mark.parametrize("table", [TABLE, NONCONVEX])
def test_model_objective_equals_evaluator_under_a_tariff(table: PueTable) -> None:
    jobs = [(0, 600, 2, 4), (0, 300, 1, 2), (120, 420, 1, 4), (700, 180, 1, 4),
            (60, 250, 1, 1)]
    inst = instance(jobs, nodes=2, cores=4, step=60,
                    power=[800.0, 200.0, 400.0, 350.0, 90.0])
    pm = ProfitModel(table, (0, 600), (10.0, 16.0), 0, 1200, Prices(0.5, 0.2), 300,
                     price_times=(0, 420, 840), price_values=(0.31, 0.07, 0.18))
    sched = heuristic(inst, range(len(jobs)))
    assert sched is not None
    built = build_model(inst, pm, sched)
    for v, s in zip(built.start, sched.start, strict=True):
        built.model.add(v == int(s))
    solver = solver_for(5.0)
    assert solver.solve(built.model) in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    want = evaluate(sched.to_plan(inst), pm)["profit"]
    assert solver.objective_value / built.scale == pytest.approx(want, rel=1e-5)


def expensive_then_cheap() -> tuple:
    """One 1 kW, 4-core job on one node; energy at 10 per kWh for two hours, then 0.01;
    income 0.1 per core-hour: running it in the dear hours loses money, later earns."""
    inst = instance([(0, 3600, 1, 4)], nodes=1, cores=4, step=60, power=[1000.0])
    pm = ProfitModel(TABLE, (0,), (10.0,), 0, 4 * 3600, Prices(0.1, 10.0), 3600,
                     price_times=(0, 7200), price_values=(10.0, 0.01))
    return inst, pm


@pytest.mark.parametrize("search", ["delay", "relax"])
def test_the_planner_moves_work_into_the_cheap_hours(search: str) -> None:
    inst, pm = expensive_then_cheap()
    opts = {"delay": 10} if search == "delay" else {}
    res = run_search(search, inst, pm, Limits(runs=200, cp_det_time=5.0), **opts)
    check_feasible(inst, res.schedule.start, res.schedule.alloc)
    start = int(res.schedule.start[0]) * 60
    assert 7200 <= start <= 4 * 3600 - 3600  # all of it cheap, all of it in the window
    assert res.profit == pytest.approx(0.4 - 0.01 * 1.1, rel=1e-4)  # PUE 1.1 at 10 °C
    # the same planner with the constant dear price cannot earn anything in the window
    dear = ProfitModel(TABLE, (0,), (10.0,), 0, 4 * 3600, Prices(0.1, 10.0), 3600)
    assert run_search(search, inst, dear, Limits(runs=200, cp_det_time=5.0),
                      **opts).profit <= 1e-9


def test_the_run_scenario_gives_the_planners_their_tariff() -> None:
    scen = resolve_scenario("gen:day-night:what=energy_price,day=0.2,night=0.11,days=2")
    assert scen is not None
    r = resolve_profit_inputs("test", cooling="air", prices="cheap", temperature="summer",
                              scenario=scen, days=3, seed=0, max_it_power=lambda: 1e5)
    t, _ = scen.steps("energy_price")
    assert r.price_times == tuple(int(x) for x in t) and set(r.price_values) == {0.2, 0.11}
    m = r.model(0, 86_400)
    assert {s.price for s in m.segments()} == {0.2, 0.11}
    assert not resolve_profit_inputs("test", cooling="air", prices="cheap",
                                     temperature="summer", scenario=None, days=3, seed=0,
                                     max_it_power=lambda: 1e5).model(0, 10).tariff


def _day_workload() -> Workload:
    rng = np.random.default_rng(3)
    n = 24
    run = rng.integers(600, 5400, n)
    return Workload.from_columns(submit=np.sort(rng.integers(0, 6 * 3600, n)), runtime=run,
                                 walltime=run, units=rng.integers(1, 3, n),
                                 req={"cores": rng.integers(1, 5, n)},
                                 power=rng.uniform(50, 400, n))


def test_offline_planner_dispatcher_reads_the_tariff(tmp_path: Path) -> None:
    from dispatchlab.simulation import simulate

    scen = tmp_path / "scen.csv"
    rows = ["time,what,value", "0,temperature,14", "0,energy_price,5.0",
            "43200,energy_price,0.02"]
    scen.write_text("\n".join(rows) + "\n")
    flat = tmp_path / "flat.csv"
    flat.write_text("time,what,value\n0,temperature,14\n")
    dear_then_cheap = simulate(_day_workload(), "nodes=2,cores=4", "offline=delay,prices=0.1:5.0",
                               scenario=str(scen))
    cheap = simulate(_day_workload(), "nodes=2,cores=4", "offline=delay,prices=0.1:0.02",
                     scenario=str(flat))
    # at 5 per kWh nothing pays before noon: under the tariff every job waits for the cheap
    # half of the day; at the cheap price all day most start in the morning
    assert (dear_then_cheap.recorder.segments.t0 >= 43_200).all()  # type: ignore[union-attr]
    assert (cheap.recorder.segments.t0 < 43_200).mean() > 0.5  # type: ignore[union-attr]


def test_plan_command_takes_a_tariff(tmp_path: Path) -> None:
    from dispatchlab.workload.load import save_workload

    trace = tmp_path / "w.parquet"
    save_workload(_day_workload(), trace)
    base = ["plan", "-w", str(trace), "-p", "nodes=2,cores=4", "--search", "delay",
            "--runs", "30", "--prices", "0.1,0.3", "--json"]
    plain = runner.invoke(app, base)
    tariff = runner.invoke(app, [*base, "--energy-price",
                                 "gen:day-night:what=energy_price,day=0.3,night=0.01"])
    assert plain.exit_code == 0 and tariff.exit_code == 0, plain.output + tariff.output
    a, b = json.loads(plain.stdout), json.loads(tariff.stdout)
    assert b["energy_cost"] < a["energy_cost"]  # the night's cheap energy
    bad = runner.invoke(app, [*base, "--energy-price", "gen:temperature:season=summer"])
    assert bad.exit_code != 0 and "no energy_price rows" in bad.output
