"""Summer / winter ambient temperature profiles and the profit entry of simulate()."""

from __future__ import annotations

import numpy as np
import pytest

from dispatchlab import Platform, Workload, simulate
from dispatchlab.engine.scenario_gen import resolve_scenario
from dispatchlab.engine.temperature import season_profile
from dispatchlab.errors import ConfigError
from dispatchlab.platform.power import NodePowerSpec


def test_day_shape_and_seasons() -> None:
    t, v = season_profile("summer", days=3, step=3600, seed=4, sd=0.0)
    day = v[24:48]
    assert int(np.argmin(day)) == 5 and int(np.argmax(day)) == 15
    assert day.min() == pytest.approx(20.0) and day.max() == pytest.approx(31.0)
    _, w = season_profile("winter", days=3, step=3600, seed=4, sd=0.0)
    assert w.min() == pytest.approx(-1.0) and w.max() == pytest.approx(7.0)
    assert list(t[:3]) == [0, 3600, 7200]


def test_seeded_and_generator() -> None:
    a = resolve_scenario("gen:temperature:season=winter,days=5,seed=3")
    b = resolve_scenario("gen:temperature:season=winter,days=5,seed=3")
    c = resolve_scenario("gen:temperature:season=winter,days=5,seed=4")
    assert a is not None and b is not None and c is not None
    assert a.changes == b.changes and a.changes != c.changes
    times, _ = a.steps("temperature")
    assert len(times) == 5 * 96
    with pytest.raises(ConfigError, match="season"):
        resolve_scenario("gen:temperature:season=spring")


def test_every_dispatcher_gets_a_profit_entry() -> None:
    rng = np.random.default_rng(1)
    n = 30
    wl = Workload.from_columns(submit=np.sort(rng.integers(0, 20_000, n)),
                               runtime=rng.integers(60, 7200, n), walltime=np.full(n, 7200),
                               units=rng.integers(1, 3, n), req={"cores": rng.integers(1, 5, n)},
                               power=rng.uniform(7.8, 11.11, n) * 4)
    plat = Platform.homogeneous(4, {"cores": 4})
    for d in ("fifo", "easy", "sjf"):
        res = simulate(wl, plat, d, cooling="hybrid",
                       temperature="gen:temperature:season=summer,days=2")
        p = res.summary["profit"]
        assert p["core_hours"] == pytest.approx(
            float((wl.runtime * wl.units * wl.req[:, 0]).sum()) / 3600)
        assert 1.0 < p["mean_pue"] < 1.2 and p["it_power_source"] == "jobs"
        assert set(res.tables["cooling"].columns) >= {"it_power_w", "cooling_w", "temperature_c"}
    # with a node power model the IT power is the nodes' (idle included)
    nodes = plat.with_node_model(NodePowerSpec(idle=50, core_first=20, core=10))
    res = simulate(wl, nodes, "easy", cooling="air:scaled", prices="expensive",
                   temperature="gen:temperature:season=winter,days=2")
    p = res.summary["profit"]
    assert p["it_power_source"] == "nodes"
    assert p["it_kwh"] == pytest.approx(res.summary["energy"]["kwh"])
    with pytest.raises(ConfigError, match="no ambient temperature"):
        simulate(wl, plat, "fifo", cooling="air")


def test_longer_profiles_of_a_seed_start_alike() -> None:
    t30, v30 = season_profile("summer", days=30, seed=7)
    t120, v120 = season_profile("summer", days=120, seed=7)
    assert np.array_equal(t30, t120[: len(t30)])
    assert np.array_equal(v30, v120[: len(v30)])


def test_temperature_file_and_other_families(tmp_path) -> None:
    """A time,what,value file of temperature rows feeds the accounting; a CP and a DARDIS
    run get the profit entry like a rule-based one."""
    f = tmp_path / "temps.csv"
    f.write_text("time,what,value\n0,temperature,12\n1800,temperature,16\n")
    wl = Workload.from_columns(submit=[0, 10, 20], runtime=[3600, 1200, 600],
                               walltime=[3600, 1800, 900], units=[1, 1, 2],
                               req={"cores": [2, 2, 1]}, power=[20.0, 20.0, 10.0])
    plat = Platform.homogeneous(2, {"cores": 2})
    for d in ("fifo", "hcp", "dardis-throughput"):
        res = simulate(wl, plat, d, cooling="air:scaled", temperature=str(f))
        p = res.summary["profit"]
        assert p["core_hours"] == pytest.approx((2 * 3600 + 2 * 1200 + 2 * 600) / 3600), d
        temps = set(res.tables["cooling"]["temperature_c"])
        assert temps == {12.0, 16.0}, d
