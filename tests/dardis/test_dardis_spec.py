"""``dardis=<preset>,key=value`` specs: parameters reach the dispatcher, bad ones are
refused with the key named, and equivalent spellings share one canonical form."""

from __future__ import annotations

import pytest

from dispatchlab.dispatchers.dardis import Dardis
from dispatchlab.dispatchers.hybrid.pipeline import HybridDardis
from dispatchlab.dispatchers.registry import canonical_spec, get_dispatcher
from dispatchlab.errors import ConfigError


def test_a_spec_changes_the_preset_parameters() -> None:
    d = get_dispatcher("dardis=dardis-throughput,retries=6,last_resort=nodes")
    assert isinstance(d, Dardis)
    assert (d.retries, d.last_resort, d.backfill, d.depth) == (6, "nodes", True, 32)
    assert d.name == "dardis-throughput,last_resort=nodes,retries=6"
    h = get_dispatcher("dardis=hybrid-dardis70,last_resort=nodes,threshold=0.9")
    assert isinstance(h, HybridDardis)
    assert (h.off_fraction, h.last_resort, h.threshold, h.retries) == (0.3, "nodes", 0.9, 3)


def test_a_spec_chooses_the_search_planner_and_its_profit_model() -> None:
    h = get_dispatcher("dardis=hybrid-dardis70,planner=multi,cooling=air,"
                       "temperature=summer,prices=cheap,budget=10,seed=2")
    assert isinstance(h, HybridDardis)
    assert (h.planner, h.cooling, h.temperature, h.prices, h.budget, h.seed) == (
        "multi", "air", "summer", "cheap", 10, 2)
    assert h.describe()["pipeline"]["budget"] == 10
    d = get_dispatcher("dardis=hybrid-dardis50,planner=delay,prices=0.05:0.2")
    assert isinstance(d, HybridDardis)
    assert (d.planner, d.prices, d.budget, d.temperature) == ("delay", "0.05:0.2", 500, None)


@pytest.mark.parametrize("spec, field", [
    ("dardis=hybrid-dardis70,planner=cp", "planner"),
    ("dardis=hybrid-dardis70,planner=multi,budget=ten", "budget"),
    ("dardis=hybrid-dardis70,planner=multi,budget=0", "budget"),
    ("dardis=hybrid-dardis70,budget=5", "budget"),
    ("dardis=dardis70,cooling=air", "cooling"),
    ("dardis=dardis-fast", "dardis"),
    ("dardis=rb-fcfs,retries=2", "dardis"),
    ("dardis=dardis100,window=3", "window"),
    ("dardis=dardis100,retries=many", "retries"),
    ("dardis=dardis100,last_resort=cluster", "dardis"),
    ("dardis=dardis-throughput,threshold=0.5", "threshold"),
])
def test_bad_specs_name_the_field(spec: str, field: str) -> None:
    with pytest.raises(ConfigError) as err:
        get_dispatcher(spec)
    assert err.value.field == field


def test_canonical_spelling() -> None:
    assert canonical_spec("dardis=dardis70") == "dardis70"
    assert canonical_spec("dardis=dardis70, retries=6,last_resort=nodes") == \
        canonical_spec("last_resort=nodes,dardis=dardis70,retries=6") == \
        "dardis=dardis70,last_resort=nodes,retries=6"
