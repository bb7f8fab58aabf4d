"""Energy prices over time (scenario ``energy_price`` rows): costs computed by hand."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatchlab import Platform, Workload, simulate
from dispatchlab.energy.profit import CoolingSetup, Prices, run_profit
from dispatchlab.energy.tariff import price_steps, priced_energy
from dispatchlab.engine.scenario import Change, Scenario
from dispatchlab.errors import ConfigError
from dispatchlab.platform.power import NodePowerSpec
from tests.energy.test_profit import TABLE, two_jobs


def tariff(*rows: tuple[int, float]) -> Scenario:
    return Scenario([Change(t, "energy_price", p) for t, p in rows], source="tariff")


def test_profit_priced_at_each_moment_by_hand() -> None:
    wl, plat = two_jobs()
    res = simulate(wl, plat, "fifo")
    pt, pv = price_steps(tariff((0, 0.10), (1800, 0.30)))
    setup = CoolingSetup(TABLE, temp_times=(0, 1800), temp_values=(10.0, 15.0),
                         prices=Prices(0.1, 0.13), price_times=tuple(int(t) for t in pt),
                         price_values=tuple(float(v) for v in pv))
    out = run_profit(res.recorder, setup)
    s = out.summary
    # IT + cooling (W) per stretch, as in test_profit: 120 on [0,600), 360 on [600,1800)
    # at 0.10; 405 on [1800,3600), 280 on [3600,7800) at 0.30
    cost = (120 * 600 + 360 * 1200) * 0.10 / 3.6e6 + (405 * 1800 + 280 * 4200) * 0.30 / 3.6e6
    assert cost == pytest.approx(0.17275)
    assert s["energy_cost"] == pytest.approx(cost)
    assert s["profit"] == pytest.approx(12 * 0.1 - cost)
    assert s["prices"] == {"core_hour": 0.1, "energy_kwh": "tariff"}
    assert s["tariff"]["changes"] == 2
    assert s["tariff"]["mean_per_kwh_paid"] == pytest.approx(cost / (2.409e6 / 3.6e6))
    # up to the last submission (600 s) only the 0.10 price applies
    assert s["at_last_submission"]["energy_cost"] == pytest.approx(120 * 600 * 0.10 / 3.6e6)
    assert list(out.series["energy_price"]) == [0.10, 0.10, 0.30, 0.30]


def test_a_flat_tariff_is_the_constant_price() -> None:
    wl, plat = two_jobs()
    res = simulate(wl, plat, "easy")
    base = CoolingSetup(TABLE, temp_times=(0, 1800), temp_values=(10.0, 15.0),
                        prices=Prices(0.1, 0.13))
    flat = CoolingSetup(TABLE, temp_times=(0, 1800), temp_values=(10.0, 15.0),
                        prices=Prices(0.1, 0.13), price_times=(0, 5000),
                        price_values=(0.13, 0.13))
    a, b = run_profit(res.recorder, base).summary, run_profit(res.recorder, flat).summary
    assert b["energy_cost"] == pytest.approx(a["energy_cost"], rel=1e-12)
    assert b["profit"] == pytest.approx(a["profit"], rel=1e-12)
    assert b["it_kwh"] == a["it_kwh"] and b["cooling_kwh"] == a["cooling_kwh"]


def test_node_model_energy_cost_through_simulate() -> None:
    # one 4-core job on one node for two hours: cheap first hour, dear second hour
    wl = Workload.from_columns(submit=[0], runtime=[7200], walltime=[7200], units=[1],
                               req={"cores": [4]})
    plat = Platform.homogeneous(1, {"cores": 4}).with_node_model(
        NodePowerSpec(idle=50, core_first=20, core=10))
    res = simulate(wl, plat, "fifo", scenario=tariff((0, 0.10), (3600, 0.30)))
    e = res.summary["energy"]
    watts = e["total_j"] / 7200
    assert e["cost"] == pytest.approx(watts * 3600 * (0.10 + 0.30) / 3.6e6)
    assert e["tariff"]["changes"] == 2 and e["tariff"]["max_per_kwh"] == 0.30
    # without price rows, no cost is claimed
    assert "cost" not in simulate(wl, plat, "fifo").summary["energy"]


def test_day_night_tariff_generator_and_cooling() -> None:
    wl, plat = two_jobs()
    scen = ["gen:day-night:what=energy_price,day=0.25,night=0.05,day_start=0,day_end=1,"
            "days=1", "gen:temperature:season=summer,days=1"]
    res = simulate(wl, plat, "fifo", scenario=scen, cooling="air")
    p = res.summary["profit"]
    assert p["prices"]["energy_kwh"] == "tariff"
    ser = res.tables["cooling"]
    dt = np.diff(np.r_[ser["time"].to_numpy(), 7800])
    joules = (ser["it_power_w"] + ser["cooling_w"]).to_numpy() * dt
    want = float((joules * ser["energy_price"].to_numpy()).sum()) / 3.6e6
    assert p["energy_cost"] == pytest.approx(want)
    first_hour = ser["time"].to_numpy() < 3600
    assert set(ser["energy_price"][first_hour]) == {0.25}
    assert set(ser["energy_price"][~first_hour]) == {0.05}


def test_bad_price_rows_are_refused() -> None:
    with pytest.raises(ConfigError, match="energy_price must be a finite price"):
        tariff((0, -0.1))
    with pytest.raises(ConfigError, match=r"row 2.*energy_price"):
        Scenario([Change(0, "energy_price", 0.1), Change(10, "energy_price", float("nan"))],
                 source="prices.csv")


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_priced_energy_bounds(data: st.DataObject) -> None:
    """The cost lies between the cheapest and the dearest price × kWh; a flat tariff is the
    constant price; the kWh do not depend on the tariff."""
    k = data.draw(st.integers(1, 8))
    times = np.array(sorted(set(data.draw(st.lists(st.integers(0, 10_000), min_size=k,
                                                   max_size=k)))), np.int64)
    watts = np.array(data.draw(st.lists(st.floats(0, 1e4), min_size=len(times),
                                        max_size=len(times))))
    t1 = int(times[-1]) + data.draw(st.integers(1, 5000))
    m = data.draw(st.integers(1, 6))
    pt = np.array(sorted(set(data.draw(st.lists(st.integers(0, 16_000), min_size=m,
                                                max_size=m)))), np.int64)
    pv = np.array(data.draw(st.lists(st.floats(0, 2), min_size=len(pt), max_size=len(pt))))
    kwh, cost = priced_energy(times, watts, t1, pt, pv)
    plain = float((watts * np.diff(np.r_[times, t1])).sum()) / 3.6e6
    assert kwh == pytest.approx(plain, rel=1e-9, abs=1e-12)
    assert pv.min() * kwh - 1e-9 <= cost <= pv.max() * kwh + 1e-9
    _, flat = priced_energy(times, watts, t1, pt, np.full(len(pt), 0.7))
    assert flat == pytest.approx(0.7 * kwh, rel=1e-9, abs=1e-12)
