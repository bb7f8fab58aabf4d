"""Capacity files and the two seeded capacity walks (Robert et al.)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dispatchlab.engine.capacity import (
    capacity_walk,
    is_capacity_file,
    load_capacity,
    walk_counts,
)
from dispatchlab.engine.scenario_gen import resolve_scenario
from dispatchlab.errors import ConfigError


def rows(scen: object) -> list[tuple[int, int]]:
    return [(c.time, int(c.value)) for c in scen.changes]  # type: ignore[attr-defined]


def test_authors_format_first_line_is_the_start_then_time_count(tmp_path: Path) -> None:
    p = tmp_path / "sample0.txt"
    p.write_text("24\n1200 26\n2400 26\n3600 24\n")
    assert is_capacity_file(p)
    # a row only where the count changes
    assert rows(load_capacity(p)) == [(0, 24), (1200, 26), (3600, 24)]
    assert rows(resolve_scenario(str(p))) == [(0, 24), (1200, 26), (3600, 24)]


def test_csv_time_alive(tmp_path: Path) -> None:
    p = tmp_path / "cap.csv"
    p.write_text("time,alive\n0,3\n50,1\n70,3\n")
    assert rows(resolve_scenario(str(p))) == [(0, 3), (50, 1), (70, 3)]


def test_general_scenario_file_is_not_taken_for_a_capacity_file(tmp_path: Path) -> None:
    p = tmp_path / "s.csv"
    p.write_text("time,what,value\n0,alive_nodes,3\n")
    assert not is_capacity_file(p)
    assert rows(resolve_scenario(str(p))) == [(0, 3)]


@pytest.mark.parametrize(("text", "message"), [
    ("24\n1200\n", "line 2: expected 'time count'"),
    ("24\n1200 2.5\n", "line 2: alive 2.5 is not a whole number"),
    ("24\n1200 20\n600 22\n", "line 3: time 600 goes back"),
    ("time,alive\n0,x\n", "line 2: alive 'x' is not a number"),
])
def test_bad_capacity_files_name_the_line(tmp_path: Path, text: str, message: str) -> None:
    p = tmp_path / "bad.txt"
    p.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_capacity(p)


@pytest.mark.parametrize("model", ["slides", "authors"])
def test_walks_stay_in_bounds_and_are_reproducible(model: str) -> None:
    a = walk_counts(24, 8, 5000, seed=7, model=model)
    assert a[0] == 24 and a.min() >= 16 and a.max() <= 32
    assert np.array_equal(a, walk_counts(24, 8, 5000, seed=7, model=model))
    assert not np.array_equal(a, walk_counts(24, 8, 5000, seed=8, model=model))
    # both bounds are reached over a long walk
    assert a.min() == 16 and a.max() == 32


def test_slides_walk_steps_and_probabilities() -> None:
    a = walk_counts(24, 8, 60000, seed=1, model="slides")
    d = np.diff(a)
    assert set(np.unique(d).tolist()) <= {-1, 0, 1}
    inside = (a[:-1] > 16) & (a[:-1] < 32)
    # inside the range: stay / up / down with probability 1/3 each
    for step in (-1, 0, 1):
        assert abs((d[inside] == step).mean() - 1 / 3) < 0.02
    # at a bound: stay or move inward, 1/2 each
    top = a[:-1] == 32
    assert top.sum() > 500
    assert abs((d[top] == 0).mean() - 0.5) < 0.06 and (d[top] <= 0).all()


def test_authors_walk_moves_range_over_four_and_stays_only_at_bounds() -> None:
    a = walk_counts(24, 8, 20000, seed=3, model="authors")
    d = np.diff(a)
    assert set(np.unique(d).tolist()) == {-2, 0, 2}
    stays = d == 0
    assert np.isin(a[:-1][stays], [16, 32]).all()
    assert set(np.unique(a).tolist()) <= set(range(16, 33, 2))


def test_generator_spec_and_file_agree_with_the_function() -> None:
    spec = "gen:capacity-walk:mean=24,range=8,period=1200,until=86400,seed=5,model=authors"
    assert rows(resolve_scenario(spec)) == rows(capacity_walk(24, 8, 1200, 86400, 5,
                                                              "authors"))
    with pytest.raises(ConfigError, match="unknown model"):
        resolve_scenario("gen:capacity-walk:mean=4,range=2,period=10,until=100,model=x")
