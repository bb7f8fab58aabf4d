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
          body: str = "pass", source: str | None = None) -> numba_aot.AotUnit:
    """A unit in module ``name`` under ``tmp_path`` (:data:`SOURCE` with ``body``, or
    ``source``), importable here and in the build process, with its own cache folder and no
    module loaded yet."""
    text = SOURCE.format(body=body) if source is None else source
    (tmp_path / f"{name}.py").write_text(text)
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


PARTED = '''
from dispatchlab.numba_aot import AotExports, AotUnit


def twice(x):
    return 2 * x


def thrice(x):
    return 3 * x


def exports():
    from numba import types as nt

    sig = nt.int64(nt.int64)
    return AotExports({"twice": (twice, sig), "thrice": (thrice, sig)})


UNIT = AotUnit("duo", (), f"{__name__}:exports", parts=(("twice",), ("thrice",)))
'''


def _parted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> numba_aot.AotUnit:
    return _unit(tmp_path, monkeypatch, name, source=PARTED)


def test_a_parted_unit_builds_only_the_part_a_caller_asks_for(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    unit = _parted(tmp_path, monkeypatch, "duo_unit_lazy")
    asked: list[int | None] = []

    def fake_built(u: numba_aot.AotUnit, part: int | None) -> Path | None:
        asked.append(part)
        return None  # as if the build failed: the name is then missing

    monkeypatch.setattr(numba_aot, "_built", fake_built)
    module = numba_aot.load(unit)
    assert isinstance(module, numba_aot.PartedModule)
    assert getattr(module, "thrice", None) is None and asked == [1]
    assert getattr(module, "nowhere", None) is None and asked == [1]  # no part: no build
    assert getattr(module, "thrice", None) is None and asked == [1]  # remembered
    assert numba_aot.module_name(unit, 0) != numba_aot.module_name(unit, 1)
    assert numba_aot.module_name(unit, 1).startswith("duo__p1_aot_")


@pytest.mark.slow
@pytest.mark.skipif(not NUMBA, reason="Numba disabled")
def test_prebuild_builds_every_part_in_parallel_and_loads_skip_the_build(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    unit = _parted(tmp_path, monkeypatch, "duo_unit_build")
    failed = numba_aot.prebuild([unit], jobs=2)
    if failed:
        pytest.skip(f"no C compiler for Numba's pycc: {failed}")
    built = sorted(p.name.partition("_aot_")[0] for p in (tmp_path / "cache").glob("*.so"))
    assert built == ["duo__p0", "duo__p1"]
    monkeypatch.setattr(numba_aot, "_build", _no_build)
    module = numba_aot.load(unit)
    assert module is not None
    assert module.twice(21) == 42 and module.thrice(5) == 15


def test_the_repository_units_parts_cover_their_exports_exactly() -> None:
    pytest.importorskip("numba")
    from dispatchlab.dispatchers.rule_based.compiled.kernel import LOOPS
    from dispatchlab.dispatchers.variable_capacity.compiled.kernel import FIRST_FIT_LOOP
    from dispatchlab.engine.compiled.compiled_ops import ENGINE_OPS

    for unit in (LOOPS, FIRST_FIT_LOOP, ENGINE_OPS):
        if not unit.parts:
            continue
        named = [name for part in unit.parts for name in part]
        exported = set(numba_aot.exports_of(unit.exports).functions)
        assert sorted(named) == sorted(exported), unit.name


def test_prebuild_refuses_a_reference_that_is_not_a_unit() -> None:
    import subprocess

    proc = subprocess.run([sys.executable, "-m", "dispatchlab.numba_aot", "--prebuild",
                           "dispatchlab.numba_aot:load"], capture_output=True, text=True,
                          check=False)
    assert proc.returncode != 0 and "is not an AotUnit" in proc.stderr


def test_prebuild_from_the_command_line_takes_a_declared_unit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run as ``python -m``, the module is ``__main__``: a unit declared with the package's
    AotUnit is still one. Both parts' builds are marked failed, so nothing compiles."""
    import subprocess

    unit = _parted(tmp_path, monkeypatch, "duo_unit_cli")
    cache = tmp_path / "cache"
    cache.mkdir()
    for part in (0, 1):
        (cache / (numba_aot.module_name(unit, part) + ".failed")).write_text("no compiler")
    proc = subprocess.run([sys.executable, "-m", "dispatchlab.numba_aot", "--prebuild",
                           "duo_unit_cli:UNIT"], capture_output=True, text=True, check=False)
    assert "is not an AotUnit" not in proc.stderr
    assert proc.returncode == 1 and "builds failed: duo__p0_aot_" in proc.stderr


def test_a_build_stopped_by_a_signal_is_not_remembered_as_failed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A prebuild stopped at the end of a partial test run kills its builds: the next load
    must build again, not fall back to the JIT for good."""
    import subprocess

    unit = _unit(tmp_path, monkeypatch, "tiny_unit_killed")
    cache = tmp_path / "cache"
    cache.mkdir()

    def killed(*args: object, **kwargs: object) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(["pycc"], -15, "", "")

    monkeypatch.setattr(numba_aot.subprocess, "run", killed)
    assert numba_aot.load(unit) is None
    assert not list(cache.glob("*.failed"))
