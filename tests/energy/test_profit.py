"""Cooling energy and profit of a two-job schedule, computed by hand."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_flat_table_and_energy_invariants(data: st.DataObject) -> None:
    """With a flat PUE p, cooling = (p − 1) × IT energy exactly; IT energy = Σ power × run
    time; core-hours = Σ cores × run time, whatever the dispatcher and the temperatures."""
    n = data.draw(st.integers(1, 10))
    runtime = data.draw(st.lists(st.integers(0, 500), min_size=n, max_size=n))
    power = data.draw(st.lists(st.floats(1.0, 500.0), min_size=n, max_size=n))
    cores = data.draw(st.lists(st.integers(1, 4), min_size=n, max_size=n))
    submit = sorted(data.draw(st.lists(st.integers(0, 300), min_size=n, max_size=n)))
    wl = Workload.from_columns(submit=submit, runtime=runtime, walltime=[max(r, 1) for r in
                                                                          runtime],
                               units=[1] * n, req={"cores": cores}, power=power)
    res = simulate(wl, Platform.homogeneous(2, {"cores": 4}),
                   data.draw(st.sampled_from(["fifo", "easy", "order=profit,select=nonstrict"])))
    p = data.draw(st.floats(1.0, 2.0))
    flat = PueTable(name="flat", temperatures=(0.0, 5.0), it_power=(0.0, 5000.0),
                    pue=((p, p), (p, p)))
    times = tuple(sorted(set(data.draw(st.lists(st.integers(0, 900), min_size=1, max_size=5)))))
    setup = CoolingSetup(flat, temp_times=times, temp_values=tuple(
        float(data.draw(st.sampled_from([0.0, 3.0, 7.0]))) for _ in times))
    s = run_profit(res.recorder, setup).summary
    it_j = sum(w * r for w, r in zip(power, runtime, strict=True))
    assert s["it_kwh"] * 3.6e6 == pytest.approx(it_j, rel=1e-9, abs=1e-6)
    assert s["cooling_kwh"] == pytest.approx((p - 1) * s["it_kwh"], rel=1e-9, abs=1e-12)
    assert s["core_hours"] * 3600 == pytest.approx(sum(c * r for c, r in zip(cores, runtime,
                                                                             strict=True)))
