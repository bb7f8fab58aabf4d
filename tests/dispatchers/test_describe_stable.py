"""``describe()`` from constructor parameters (issue 26): the recorded form of every preset
and of a set of specs is the one main recorded before the refactor (fixture
``tests/data/describe_presets.json``, written by ``describe_dump.py`` on d83c7df), every
dispatcher is rebuilt from its ``get_params()``, and a run leaves its description as it was.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest

from dispatchlab.dispatchers.registry import get_dispatcher, presets
from tests.dispatchers.describe_dump import FIXTURE, SPECS

#: One or two presets of each family: run once, their description must not change.
RUN_STATE_PRESETS = ("easy+poweroff", "conservative-power", "pbs-fifo", "hcp1", "dec-feedback",
                     "dardis70", "rb-fcfs", "ff-unaware", "target-asap", "mejri-fifo-poff",
                     "pa-easy")


@cache
def _recorded() -> dict[str, dict[str, Any]]:
    data = json.loads(FIXTURE.read_text())
    return {**data["presets"], **data["specs"]}


def _json(value: Any) -> Any:
    return json.loads(json.dumps(value))


def test_fixture_covers_every_preset_and_spec() -> None:
    assert set(_recorded()) == set(presets()) | set(SPECS)


@pytest.mark.parametrize("spec", sorted(set(presets()) | set(SPECS)))
def test_description_is_the_recorded_one(spec: str) -> None:
    assert _json(get_dispatcher(spec).describe()) == _recorded()[spec]


@pytest.mark.parametrize("spec", sorted(set(presets()) | set(SPECS)))
def test_rebuilt_from_its_parameters(spec: str) -> None:
    """As scikit-learn's ``clone``: the class called with ``get_params(deep=False)`` is the
    same configuration (constructors store their parameters unchanged in meaning)."""
    disp = get_dispatcher(spec)
    clone = type(disp)(**disp.get_params(deep=False))
    assert _json(clone.describe()) == _json(disp.describe())


def test_deep_parameters_name_the_parts() -> None:
    params = get_dispatcher("order=sjf,select=easy,alloc=best-fit,depth=50").get_params()
    assert params["selection__depth"] == 50
    assert params["ordering"].name == "sjf"
    assert {"allocator", "estimate", "name"} <= set(params)
    hcp = get_dispatcher("cp=hcp3,m=50").get_params()
    assert hcp["config__m"] == 50 and hcp["config__search"].delta == 0.02


@pytest.mark.parametrize("name", RUN_STATE_PRESETS)
def test_run_state_never_described(name: str) -> None:
    from dispatchlab.energy.job_power import job_power_source
    from dispatchlab.report.composition import HOMES, _home_inputs, dispatcher_spec
    from dispatchlab.simulation import simulate

    family = presets()[name.split("+")[0]].family
    disp = get_dispatcher(dispatcher_spec(family, name))
    before = _json(disp.describe())
    wl, plat = _home_inputs(family)
    base = HOMES[family].base_scenario
    res = simulate(wl, plat, disp, seed=0, tables=False,
                   walltime_kill=HOMES[family].walltime_kill,
                   power_model=job_power_source(None, wl, plat),
                   **({} if base is None else {"scenario": base}))
    assert res.summary["audited"]
    assert _json(disp.describe()) == before
