"""The profit model's inputs, resolved one way for every planning dispatcher."""

from __future__ import annotations

from pathlib import Path

import pytest

from dispatchlab.dispatchers.offline_plan.planner.profit_inputs import (
    ProfitInputs,
    resolve_profit_inputs,
)
from dispatchlab.energy.cooling import pue_table
from dispatchlab.energy.profit import Prices
from dispatchlab.engine.scenario_gen import resolve_scenario
from dispatchlab.engine.temperature import season_profile
from dispatchlab.errors import ConfigError


def resolve(**kw: object) -> ProfitInputs:
    args: dict[str, object] = {"cooling": "air", "prices": "cheap", "temperature": "summer",
                               "scenario": None, "days": 3, "seed": 0,
                               "max_it_power": lambda: 60_000.0}
    args.update(kw)
    return resolve_profit_inputs("test", **args)  # type: ignore[arg-type]


def test_tables_prices_and_season_profiles() -> None:
    r = resolve(cooling="hybrid:scaled", prices="0.05:0.2", temperature="winter", seed=4)
    assert r.table.max_power == pytest.approx(60_000.0)
    assert r.table.name == f"{pue_table('hybrid').name}@60000W"
    assert r.prices == Prices(0.05, 0.2)
    assert resolve(prices="0.05,0.2").prices == Prices(0.05, 0.2)
    times, values = season_profile("winter", days=3, seed=4)
    assert r.temp_times == tuple(int(t) for t in times)
    assert r.temp_values == tuple(float(v) for v in values)
    # a longer profile of the same seed starts with the shorter one
    long = resolve(temperature="winter", seed=4, days=9)
    n = len(times)
    assert long.temp_values[:n - 1] == r.temp_values[:n - 1]
    m = r.model(0, 86_400)
    assert (m.start, m.end, m.prices) == (0, 86_400, Prices(0.05, 0.2))


def test_the_scenario_or_a_file_gives_the_temperature(tmp_path: Path) -> None:
    scen = resolve_scenario("gen:temperature:season=summer,days=2,seed=1")
    r = resolve(temperature=None, scenario=scen)
    t, v = season_profile("summer", days=2, seed=1)
    assert r.temp_times == tuple(int(x) for x in t)
    assert r.temp_values == tuple(float(x) for x in v)
    f = tmp_path / "temps.csv"
    f.write_text("time,what,value\n0,temperature,12.5\n3600,temperature,17\n")
    r = resolve(temperature=str(f))
    assert r.temp_values == (12.5, 17.0)


@pytest.mark.parametrize("kw, field", [
    ({"cooling": "water"}, "cooling"),
    ({"cooling": "air:fitted"}, "cooling"),
    ({"prices": "free"}, "prices"),
    ({"temperature": None}, "temperature"),
])
def test_bad_settings_name_their_field(kw: dict[str, object], field: str) -> None:
    with pytest.raises(ConfigError) as err:
        resolve(**kw)
    assert err.value.field == field
    assert "test: " in str(err.value)
