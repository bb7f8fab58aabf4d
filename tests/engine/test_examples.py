"""The documented example dispatcher runs and behaves as its docstring says."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

from dispatchlab import simulate
from dispatchlab.dispatchers import registry
from tests.conftest import jobs

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "custom_dispatcher.py"


def test_custom_dispatcher_example(monkeypatch: pytest.MonkeyPatch) -> None:
    # the example registers its dispatcher: on a copy of the registry, undone afterwards
    monkeypatch.setattr(registry, "_PRESETS", registry.presets())
    module = runpy.run_path(str(EXAMPLE))
    policy = module["FewestUnitsFirst"]()
    # 3 cores: a 3-unit job waits while the small ones behind it start (non-strict)
    wl = jobs((0, 10, 10, 2), (1, 10, 10, 3), (2, 5, 5, 1))
    res = simulate(wl, "nodes=1,cores=3", policy)
    assert res.jobs["start"].tolist() == [0, 10, 2]
    module["main"]()
    assert "fewest-units-first" in registry.presets()
    assert type(registry.get_dispatcher("fewest-units-first")) is module["FewestUnitsFirst"]
