"""Scenario input: files (CSV with comments, Parquet), seeded generators, clear errors."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatchlab import simulate
from dispatchlab.engine.scenario import Change, Scenario, load_scenario
from dispatchlab.engine.scenario_gen import generate_scenario, resolve_scenario
from dispatchlab.errors import ConfigError
from tests.conftest import jobs

REPO = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, text: str, name: str = "s.csv") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_csv_with_comments_blank_lines_and_targets(tmp_path: Path) -> None:
    p = write(tmp_path, "# a maintenance window\n\ntime,what,value,target\n"
                        "# first the cap\n0,power_cap,3000,\n60,node_down,,n01\n"
                        "120,node_up,,n01\n30,desired_utilization,0.5,\n")
    s = load_scenario(p)
    assert [(c.time, c.what) for c in s.changes] == [
        (0, "power_cap"), (30, "desired_utilization"), (60, "node_down"), (120, "node_up")]
    assert s.changes[2].target == "n01" and math.isnan(s.changes[2].value)
    assert s.value_at("power_cap", 10) == 3000.0
    assert s.describe() == {"source": str(p), "changes": 4,
                            "kinds": {"power_cap": 1, "desired_utilization": 1,
                                      "node_down": 1, "node_up": 1}}
    # announced kinds only: node changes are not known in advance
    assert {c.what for c in s.announced().changes} == {"power_cap", "desired_utilization"}


def test_parquet_round_trip(tmp_path: Path) -> None:
    s = Scenario([Change(0, "power_cap", 2000.0), Change(50, "node_down", target="n00")])
    p = tmp_path / "s.parquet"
    s.to_frame().to_parquet(p)  # type: ignore[attr-defined]
    back = load_scenario(p)
    assert [(c.time, c.what, c.target) for c in back.changes] == \
        [(0, "power_cap", ""), (50, "node_down", "n00")]


@pytest.mark.parametrize(("text", "message"), [
    ("time,what\n0,power_cap\n", "missing column(s) value"),
    ("# c\ntime,what,value\n\n0,power_cap,100\nsoon,power_cap,5\n", "line 5: time 'soon'"),
    ("time,what,value\n1.5,power_cap,100\n", "line 2: time 1.5 is not a whole number"),
    ("time,what,value\n0,voltage,3\n", "unknown change 'voltage'"),
    ("time,what,value\n0,power_cap,0\n", "power_cap must be > 0 W"),
    ("time,what,value\n0,node_down,\n", "'node_down' needs a target"),
    ("time,what,value\n0,alive_nodes,2.5\n", "alive_nodes needs a whole number"),
    ("time,what,value\n0,desired_utilization,1.5\n", "within [0, 1]"),
    ("time,what,value\n-5,power_cap,10\n", "non-negative"),
])
def test_bad_files_name_the_line_and_field(tmp_path: Path, text: str, message: str) -> None:
    p = write(tmp_path, text)
    with pytest.raises(ConfigError, match=r"s\.csv") as err:
        load_scenario(p)
    assert message in str(err.value)


def test_missing_file_and_unknown_node(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"none\.csv: file not found"):
        load_scenario(tmp_path / "none.csv")
    p = write(tmp_path, "time,what,value,target\n5,node_down,,n99\n")
    with pytest.raises(ConfigError, match="'n99' is neither a node nor a group"):
        simulate(jobs((0, 10, 10, 1)), "nodes=2,cores=1", "fifo", scenario=str(p))


def test_example_scenario_runs_and_is_recorded() -> None:
    path = REPO / "examples" / "scenarios" / "maintenance.csv"
    wl = jobs(*[(50_000 + k * 1000, 60_000, 60_000, 1) for k in range(30)])
    res = simulate(wl, "nodes=100,cores=1", "fifo", scenario=str(path))
    assert res.summary["jobs"] == 30
    # the ten jobs on n00-n09 when they left (first fit) were aborted and restarted
    assert res.summary["aborted_segments"] == res.summary["restarts"] == 10
    assert res.summary["lost_work_core_seconds"] == sum(86_400 - (50_000 + k * 1000)
                                                        for k in range(10))
    assert res.recorder is not None
    assert res.recorder.engine_info["scenario"]["changes"] == 20


def test_generators_are_reproducible_and_shaped() -> None:
    day = generate_scenario("gen:day-night:day=3000,night=5000,days=2")
    assert [(c.time, c.value) for c in day.changes] == [
        (0, 5000.0), (8 * 3600, 3000.0), (18 * 3600, 5000.0),
        (86400 + 8 * 3600, 3000.0), (86400 + 18 * 3600, 5000.0)]
    const = generate_scenario("gen:constant:what=temperature,value=21")
    assert [(c.time, c.what, c.value) for c in const.changes] == [(0, "temperature", 21.0)]
    spec = "gen:random-walk:mean=24,range=8,period=1200,until=1209600,seed=7"
    a, b = generate_scenario(spec), generate_scenario(spec)
    assert a.changes == b.changes
    assert a.changes != generate_scenario(spec.replace("seed=7", "seed=8")).changes
    merged = resolve_scenario([spec, "gen:constant:value=900"])
    assert merged is not None and len(merged) == len(a) + 1


@settings(max_examples=40, deadline=None)
@given(st.integers(10, 40), st.integers(0, 10), st.integers(1, 3), st.integers(0, 2**31))
def test_random_walk_stays_in_bounds_and_moves_one_step(mean: int, span: int, step: int,
                                                        seed: int) -> None:
    s = generate_scenario(f"gen:random-walk:mean={mean},range={span},step={step},"
                          f"period=60,until=6000,seed={seed}")
    times, values = s.steps("alive_nodes")
    assert times[0] == 0 and values[0] == mean
    assert ((values >= mean - span) & (values <= mean + span)).all()
    assert (np.diff(times) > 0).all() and (times % 60 == 0).all()
    assert (np.abs(np.diff(values)) <= step).all()


@pytest.mark.parametrize(("spec", "message"), [
    ("gen:sine:value=1", "unknown scenario generator 'sine'"),
    ("gen:constant:value=1,value=2", "'value' given twice"),
    ("gen:constant:valu=1", "'value' is required"),
    ("gen:constant:value=1,colour=red", "unknown parameter(s) colour"),
    ("gen:day-night:day=1,night=2,day_start=20,day_end=8", "day_start < day_end"),
    ("gen:random-walk:mean=5,range=2,period=0,until=10", "period > 0"),
    ("gen:constant:value=abc", "value must be a number"),
    ("gen:random-walk:mean=5,range=8,period=60,until=600", "below 0"),
])
def test_generator_errors(spec: str, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        generate_scenario(spec)
    assert message in str(err.value)
