"""The ahead-of-time facility (:mod:`dispatchlab.numba_aot`) on a unit of its own: built once
into the cache folder, loaded without a rebuild, keyed by its sources, older builds removed,
a failed build remembered, ``DISPATCHLAB_NO_AOT`` honoured."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from dispatchlab import numba_aot
from dispatchlab.numba_loader import NUMBA

SOURCE = '''
from dispatchlab.numba_aot import AotExports, AotUnit


def twice(x):
    return 2 * x


def exports():
    from numba import types as nt

    {body}
    return AotExports({{"twice": (twice, nt.int64(nt.int64))}})


UNIT = AotUnit("tiny", (), f"{{__name__}}:exports")
'''


def _unit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str,
          body: str = "pass") -> numba_aot.AotUnit:
    """A unit in module ``name`` under ``tmp_path``, importable here and in the build process,
    with its own cache folder and no module loaded yet."""
    (tmp_path / f"{name}.py").write_text(SOURCE.format(body=body))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path) + ":" + ":".join(sys.path))
    monkeypatch.setenv("DISPATCHLAB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("DISPATCHLAB_NO_AOT", raising=False)
    monkeypatch.setattr(numba_aot, "_modules", {})
    sys.modules.pop(name, None)
    unit: numba_aot.AotUnit = importlib.import_module(name).UNIT
    return unit


def _no_build(*_: object) -> bool:
    raise AssertionError("no build expected")


def test_no_aot_and_a_failed_build_are_remembered_without_building(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    unit = _unit(tmp_path, monkeypatch, "tiny_unit_marker")
    monkeypatch.setattr(numba_aot, "_build", _no_build)
    monkeypatch.setenv("DISPATCHLAB_NO_AOT", "1")
    assert numba_aot.load(unit) is None
    monkeypatch.delenv("DISPATCHLAB_NO_AOT")
    monkeypatch.setattr(numba_aot, "_modules", {})
    name = numba_aot.module_name(unit)
    assert name.startswith("tiny_aot_")
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / f"{name}.failed").write_text("no compiler")
    assert numba_aot.load(unit) is None


def test_the_key_follows_the_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    unit = _unit(tmp_path, monkeypatch, "tiny_unit_key")
    before = numba_aot.module_name(unit)
    assert numba_aot.module_name(unit) == before
    path = tmp_path / "tiny_unit_key.py"
    path.write_text(path.read_text() + "\n# changed\n")
    assert numba_aot.module_name(unit) != before


@pytest.mark.slow
@pytest.mark.skipif(not NUMBA, reason="Numba disabled")
def test_a_unit_is_built_once_loaded_and_replaces_older_builds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    unit = _unit(tmp_path, monkeypatch, "tiny_unit_build")
    cache = tmp_path / "cache"
    cache.mkdir()
    older = cache / "tiny_aot_0000000000000000.so"
    older.write_bytes(b"")
    other_unit = cache / "tinier_aot_0000000000000000.so"
    other_unit.write_bytes(b"")
    module = numba_aot.load(unit)
    if module is None:  # no C compiler here: the failure is remembered with its reason
        failed = cache / (numba_aot.module_name(unit) + ".failed")
        assert failed.read_text()
        pytest.skip("no C compiler for Numba's pycc")
    assert module.twice(21) == 42
    assert numba_aot.load(unit) is module
    assert not older.exists() and other_unit.exists()
    monkeypatch.setattr(numba_aot, "_modules", {})
    monkeypatch.setattr(numba_aot, "_build", _no_build)  # built once: loaded from the cache
    again = numba_aot.load(unit)
    assert again is not None and again.twice(2) == 4


@pytest.mark.skipif(not NUMBA, reason="Numba disabled")
def test_a_failing_build_leaves_its_reason(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    unit = _unit(tmp_path, monkeypatch, "tiny_unit_broken",
                 body='raise RuntimeError("broken unit")')
    assert numba_aot.load(unit) is None
    failed = tmp_path / "cache" / (numba_aot.module_name(unit) + ".failed")
    assert "broken unit" in failed.read_text()
