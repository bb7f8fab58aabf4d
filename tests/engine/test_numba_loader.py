"""The one compile-or-fallback loader: ahead of time, else Numba's JIT, else plain Python."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from dispatchlab import numba_loader
from dispatchlab.numba_loader import compiled, kind


def _helper(x: Any) -> Any:
    return x * 2


def _twice_sum(a: Any) -> Any:
    total = 0
    for k in range(a.shape[0]):
        total += _helper(a[k])
    return total


def _plain(a: Any) -> Any:
    return int(np.sum(a) * 2)


@pytest.fixture(autouse=True)
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(numba_loader, "_loaded", {})


def test_without_numba_the_plain_twin_runs_or_the_error_names_the_part(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(numba_loader, "NUMBA", False)
    fn = compiled(_twice_sum, fallback=_plain)
    assert fn is _plain and kind(_twice_sum) == "python"
    with pytest.raises(RuntimeError, match="the test part needs Numba"):
        compiled(_helper, what="the test part")


def test_an_ahead_of_time_function_is_taken_first_and_loaded_once() -> None:
    if not numba_loader.NUMBA:
        pytest.skip("Numba disabled")
    calls = []

    def module() -> Any:
        calls.append(1)
        return SimpleNamespace(twice=_plain)

    assert compiled(_twice_sum, aot_module=module, aot_name="twice") is _plain
    assert compiled(_twice_sum, aot_module=module, aot_name="twice") is _plain
    assert kind(_twice_sum) == "aot" and len(calls) == 1


def test_the_jit_compiles_with_helpers_and_warms_up() -> None:
    if not numba_loader.NUMBA:
        pytest.skip("Numba disabled")
    warmed = []
    fn = compiled(_twice_sum, helpers=[_helper], aot_module=lambda: None,
                  warm=lambda f: warmed.append(f(np.ones(1, np.int64))))
    assert kind(_twice_sum) == "jit" and warmed == [2]
    assert fn(np.arange(4, dtype=np.int64)) == 12
