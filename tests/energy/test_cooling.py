"""PUE tables: interpolation at and between breakpoints, row rule, range, CSV files."""

from __future__ import annotations

import pytest

from dispatchlab.energy.cooling import PueTable, load_pue_csv, pue_table

SMALL = PueTable(name="small", temperatures=(10.0, 15.0, 20.0), it_power=(0.0, 100.0, 200.0),
                 pue=((1.1, 1.1, 1.2), (1.3, 1.4, 1.6), (1.5, 1.5, 1.5)))


def test_at_breakpoints_and_between() -> None:
    assert SMALL.pue_at(100.0, 15.0) == pytest.approx(1.4)
    assert SMALL.pue_at(200.0, 15.0) == pytest.approx(1.6)
    assert SMALL.pue_at(150.0, 15.0) == pytest.approx(1.5)      # halfway 1.4 → 1.6
    assert SMALL.pue_at(25.0, 15.0) == pytest.approx(1.325)     # a quarter of 1.3 → 1.4
    assert SMALL.pue_at(175.0, 10.0) == pytest.approx(1.175)


def test_temperature_row_is_nearest_lower() -> None:
    assert SMALL.pue_at(100.0, 14.99) == pytest.approx(1.1)    # row 10
    assert SMALL.pue_at(100.0, 15.0) == pytest.approx(1.4)     # row 15
    assert SMALL.pue_at(100.0, 24.9) == pytest.approx(1.5)     # row 20 up to 25 excluded
    assert SMALL.pue_at(100.0, -30.0) == pytest.approx(1.1)    # colder: first row


def test_out_of_range() -> None:
    with pytest.raises(ValueError, match="temperature 25"):
        SMALL.pue_at(100.0, 25.0)
    with pytest.raises(ValueError, match="above the table"):
        SMALL.pue_at(200.5, 10.0)
    assert SMALL.pue_at(0.0, 10.0) == pytest.approx(1.1)


def test_scaled() -> None:
    big = SMALL.scaled(2000.0)
    assert big.it_power == (0.0, 1000.0, 2000.0)
    assert big.pue_at(1500.0, 15.0) == pytest.approx(1.5)


def test_air_reproduces_thesis_table_6_1() -> None:
    air = pue_table("air")
    assert air.pue_at(55_000, 10) == pytest.approx(1.1247272727, abs=1e-9)
    assert air.pue_at(55_500, 10) == pytest.approx(1.1247567568, abs=1e-9)
    assert air.pue_at(55_000, 15) == pytest.approx(1.4153090909, abs=1e-9)
    assert air.pue_at(55_500, 15) == pytest.approx(1.4153153153, abs=1e-9)
    assert air.pue_at(55_000, 12.5) == air.pue_at(55_000, 10)


def test_families_levels_and_slope_change() -> None:
    air, hyb = pue_table("air"), pue_table("hybrid")
    for t in (0, 5):
        assert 1.08 < air.pue_at(60_000, t) < 1.13 and hyb.pue_at(60_000, t) < 1.01
    for t in (20, 25, 30):
        assert 1.40 < air.pue_at(60_000, t) < 1.50 and 1.05 < hyb.pue_at(60_000, t) < 1.12
    p, v = air.slope_change(10)
    assert p == 22_500 and v == pytest.approx(1.12)
    # PUE flat below the knee, rising above it
    assert air.pue_at(10_000, 10) == pytest.approx(1.12)
    assert air.pue_at(100_000, 10) > air.pue_at(50_000, 10) > 1.12


def test_csv_round_trip_and_errors(tmp_path) -> None:
    f = tmp_path / "t.csv"
    SMALL.to_csv(f)
    back = pue_table(str(f))
    assert back.pue == SMALL.pue and back.it_power == SMALL.it_power
    bad = tmp_path / "bad.csv"
    bad.write_text("temperature,0,100\n10,1.1\n")
    with pytest.raises(ValueError, match=r"bad\.csv:2"):
        load_pue_csv(bad)
    steps = tmp_path / "steps.csv"
    steps.write_text("temperature,0,100\n10,1.1,1.2\n20,1.1,1.2\n")
    with pytest.raises(ValueError, match="5 °C steps"):
        load_pue_csv(steps)
    with pytest.raises(ValueError, match="expected 'air'"):
        pue_table("water")
