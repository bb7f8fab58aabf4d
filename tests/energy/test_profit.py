"""Cooling energy and profit of a two-job schedule, computed by hand."""

from __future__ import annotations

import pytest

from dispatchlab import Platform, Workload, simulate
from dispatchlab.energy.cooling import PueTable
from dispatchlab.energy.profit import CoolingSetup, Prices, parse_prices, run_profit

# row 10 °C: flat 1.2; row 15 °C: 1.5 at 0 W falling to 1.3 at 400 W (1.35 at 300, 1.4 at 200)
TABLE = PueTable(name="hand", temperatures=(10.0, 15.0), it_power=(0.0, 400.0),
                 pue=((1.2, 1.2), (1.5, 1.3)))


def two_jobs() -> tuple[Workload, Platform]:
    # A: 4 cores, 100 W, [0, 3600); B: 4 cores, 200 W, submitted at 600, [600, 7800)
    wl = Workload.from_columns(submit=[0, 600], runtime=[3600, 7200], walltime=[3600, 7200],
                               units=[1, 1], req={"cores": [4, 4]}, power=[100.0, 200.0])
    return wl, Platform.homogeneous(2, {"cores": 4})


def test_two_job_schedule_by_hand() -> None:
    wl, plat = two_jobs()
    res = simulate(wl, plat, "fifo")
    setup = CoolingSetup(TABLE, temp_times=(0, 1800), temp_values=(10.0, 15.0),
                         prices=Prices(0.1, 0.13))
    out = run_profit(res.recorder, setup)
    s = out.summary
    # cooling: [0,600) 100 W × 0.2; [600,1800) 300 W × 0.2; [1800,3600) 300 W × 0.35;
    # [3600,7800) 200 W × 0.4
    cooling_j = 100 * 0.2 * 600 + 300 * 0.2 * 1200 + 300 * 0.35 * 1800 + 200 * 0.4 * 4200
    assert cooling_j == pytest.approx(609_000)
    assert s["it_kwh"] == pytest.approx(1.8e6 / 3.6e6)
    assert s["cooling_kwh"] == pytest.approx(609_000 / 3.6e6)
    assert s["core_hours"] == pytest.approx(12.0)
    assert s["mean_pue"] == pytest.approx(2.409e6 / 1.8e6)
    assert s["profit"] == pytest.approx(12 * 0.1 - 0.13 * (1.8e6 + 609_000) / 3.6e6)
    at = s["at_last_submission"]
    assert isinstance(at, dict)
    assert at["core_hours"] == pytest.approx(4 * 600 / 3600)
    assert at["profit"] == pytest.approx(4 * 600 / 3600 * 0.1 - 0.13 * 72_000 / 3.6e6)
    ser = out.series
    assert list(ser["time"]) == [0, 600, 1800, 3600]
    assert list(ser["cooling_w"].round(6)) == [20.0, 60.0, 105.0, 80.0]


def test_missing_job_power_is_an_error() -> None:
    wl = Workload.from_columns(submit=[0], runtime=[10], walltime=[10], units=[1],
                               req={"cores": [1]})
    res = simulate(wl, Platform.homogeneous(1, {"cores": 1}), "fifo")
    setup = CoolingSetup(TABLE, temp_times=(0,), temp_values=(10.0,))
    with pytest.raises(ValueError, match="no power figure"):
        run_profit(res.recorder, setup)


def test_prices() -> None:
    assert parse_prices("cheap") == Prices(0.013, 0.13)
    assert parse_prices("expensive") == Prices(0.10, 0.13)
    assert parse_prices("0.5,0.2") == Prices(0.5, 0.2)
    with pytest.raises(ValueError, match="K1,K2"):
        parse_prices("lots")
