"""Experiments with a machine scenario: the capacity walk per seed, exact run times, and the
variable-capacity metrics in each run's summary."""

from __future__ import annotations

from pathlib import Path

import pytest

from dispatchlab.errors import ConfigError
from dispatchlab.experiments import parse_experiment, plan
from dispatchlab.experiments.config import WorkloadRef
from dispatchlab.experiments.worker import execute_run

SPEC = {
    "name": "vc",
    "platforms": ["nodes=4,cores=8"],
    "dispatchers": ["ff-aware", "target-asap"],
    "seeds": [0, 1],
    "parameters": {"period": [600, 1200]},
    "workloads": [{
        "name": "synt",
        "path": "gen:vc-synthetic:kind=three,jobs=60,window=7200,machines=3,cores=8",
        "scenario": "gen:capacity-walk:mean=3,range=1,period={period},until=50000,"
                    "seed={seed}",
        "walltime_kill": False,
        "metrics_window": [0, 7200],
    }],
}


def test_scenario_multiplies_over_its_parameters_and_takes_the_seed() -> None:
    runs = plan(parse_experiment(SPEC))
    assert len(runs) == 2 * 2 * 2
    scen = {(r.labels.params["period"], r.config.seed): r.config.workload.scenario
            for r in runs}
    assert scen[(600, 1)].endswith("period=600,until=50000,seed=1")
    assert len({r.config.key for r in runs}) == 8
    out = execute_run(runs[-1].config)
    assert 0 < out.summary["goodput"] <= out.summary["utilization_alive"] <= 1
    assert out.summary["window"] == [0, 7200]
    assert {"max_stretch", "aborted_volume", "aborted_count"} <= set(out.summary)


def test_defaults_keep_earlier_run_hashes() -> None:
    ref = WorkloadRef("x.swf", "swf", {}, None, None, "abc")
    assert set(ref.identity()) == {"source", "format", "options", "skip", "limit"}


def test_bad_scenario_is_named(tmp_path: Path) -> None:
    bad = {**SPEC, "workloads": [{**SPEC["workloads"][0],  # type: ignore[dict-item]
                                  "scenario": "gen:capacity-walk:mean=3,period={period}"}]}
    with pytest.raises(ConfigError) as err:
        plan(parse_experiment(bad))
    assert err.value.field == "workloads[0].scenario"
