"""Presets and ``key=value`` specs: names resolve to the right parts; bad ones say why."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dispatchlab import simulate
from dispatchlab.dispatchers import get_dispatcher, presets
from dispatchlab.dispatchers.rule_based.policy import Policy
from dispatchlab.errors import ConfigError
from dispatchlab.estimates import WalltimeEstimate, get_estimator, register_estimator
from dispatchlab.workload import Workload
from tests.conftest import jobs

ISSUE_PRESETS = {
    "fifo": ("fifo", "strict", None), "sjf": ("sjf", "strict", None),
    "ljf": ("ljf", "strict", None), "edf": ("edf", "strict", None),
    "wfp3": ("wfp3", "strict", None), "uni": ("uni", "strict", None),
    "f1": ("f1", "strict", None), "fifo-nonstrict": ("fifo", "nonstrict", None),
    "easy": ("fifo", "easy", None), "easy-sjf": ("sjf", "easy", None),
    "conservative": ("fifo", "conservative", None), "pbs-fifo": ("fifo", "top-jobs", 10),
    "pbs-walltime": ("sjf", "top-jobs", 400), "pbs-fifo-window": ("fifo", "easy", 10),
    "pbs-walltime-window": ("sjf", "easy", 400),
}


def parts(d: Any) -> tuple[str, str, int | None]:
    desc = d.describe()
    return desc["ordering"]["name"], desc["selection"]["name"], desc["selection"].get("depth")


@pytest.mark.parametrize("name", sorted(ISSUE_PRESETS))
def test_issue_presets_are_registered(name: str) -> None:
    assert name in presets()
    d = get_dispatcher(name)
    assert d.name == name
    assert parts(d) == ISSUE_PRESETS[name]
    json.dumps(d.describe())  # JSON-ready


def test_spec_combines_any_parts() -> None:
    d = get_dispatcher("order=sjf,select=easy,alloc=best-fit")
    assert isinstance(d, Policy)
    assert parts(d) == ("sjf", "easy", None)
    assert d.describe()["allocator"]["name"] == "best-fit"
    assert d.name == "order=sjf,select=easy,alloc=best-fit"
    d = get_dispatcher("order=wfp3, select=conservative, depth=5, alloc=energy, estimate=real")
    assert parts(d) == ("wfp3", "conservative", 5)
    assert d.describe()["estimate"]["name"] == "real"


def test_preset_with_one_part_changed() -> None:
    d = get_dispatcher("preset=pbs-fifo,estimate=real")
    assert parts(d) == ("fifo", "top-jobs", 10)
    assert d.describe()["estimate"]["name"] == "real"
    assert get_dispatcher("preset=easy").name == "easy"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("order=sjf,select=eazy", "unknown selection 'eazy'"),
        ("order=shortest", "unknown ordering 'shortest'"),
        ("alloc=best", "unknown allocator 'best'"),
        ("select=easy,depth=ten", "depth must be an integer"),
        ("select=easy,depth=0", "depth must be at least 1"),
        ("select=strict,depth=4", "has no depth"),
        ("estimate=psychic", "unknown duration estimate 'psychic'"),
        ("preset=nope", "unknown preset 'nope'"),
        ("ordr=sjf", r"no dispatcher family has the key\(s\) ordr \(did you mean 'order'"),
        ("eazy", "unknown dispatcher 'eazy'"),
    ],
)
def test_bad_specs_explain_themselves(spec: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        get_dispatcher(spec)


def test_oracle_estimate_changes_backfilling() -> None:
    # 2 cores. A (1 core) requests 100 s but runs 10. B needs both cores. C (1 core, 20 s)
    # ends by B's shadow time 100 when planning with requested times, so it backfills and
    # B waits for it; knowing A's true end (10), C would delay B and does not backfill.
    wl = jobs((0, 10, 100, 1), (1, 10, 10, 2), (2, 20, 20, 1))
    by_request = simulate(wl, "nodes=2,cores=1", "easy").jobs
    by_oracle = simulate(wl, "nodes=2,cores=1", "preset=easy,estimate=real").jobs
    assert by_request["start"].tolist() == [0, 22, 2]
    assert by_oracle["start"].tolist() == [0, 10, 20]
    assert by_request["planned_start"][1] == 22  # re-planned when A ended early
    assert by_oracle["planned_start"][1] == 10


def test_estimator_registry_and_observations() -> None:
    seen: list[tuple[int, int]] = []

    class Spy(WalltimeEstimate):
        name = "spy"

        def observe(self, job: int, runtime: int) -> None:
            seen.append((job, runtime))

    register_estimator("spy", Spy)
    assert isinstance(get_estimator("spy"), Spy)
    wl = Workload.from_columns(submit=[0, 0, 5], runtime=[30, 200, 7], walltime=[60, 100, 60],
                               units=[1, 1, 1], req={"cores": [1, 1, 1]})
    simulate(wl, "nodes=1,cores=1", "order=fifo,select=easy,estimate=spy")
    # Job 1 is killed at its 100-s wall-time: observed run times are what really ran.
    assert sorted(seen) == [(0, 30), (1, 100), (2, 7)]
    assert type(get_estimator("oracle")) is type(get_estimator("real"))
