"""Numba functions compiled ahead of time into plain extension modules, built once per machine.

Loading such a module costs well under a millisecond, where the first call of a Numba JIT
function (even from Numba's disk cache) initializes Numba's compiler — about half a second,
much of it importing SciPy for Numba's BLAS check. Each owner of compiled functions declares
its :class:`AotUnit` (a name, the source modules, and the function that lists the exports
with their signatures, called only in the build process); :func:`load` builds the unit on
first use (Numba's ``pycc`` and the system C compiler, in a subprocess, under a file lock:
one build per machine) into a cache folder, keyed by the sources, Numba and Python versions,
and removes the unit's builds for other keys. Where the build fails the caller falls back to
the JIT (:func:`dispatchlab.numba_loader.compiled`); ``DISPATCHLAB_NO_AOT`` skips it.

A unit may declare ``parts``: groups of its exports, each built into its own extension
module, so the groups compile in parallel processes (:func:`prebuild`) and a caller builds
only the group it needs; :func:`load` then returns a :class:`PartedModule`.

``python -m dispatchlab.numba_aot DIR NAME MODULE:FUNCTION [EXPORT ...]`` is the build
process; ``python -m dispatchlab.numba_aot --prebuild MODULE:UNIT ...`` builds the missing
modules of the named units, as many at a time as the machine has cores.
Importing this module imports neither Numba nor any unit's sources.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib
import importlib.util
import os
import signal
import subprocess
import sys
import sysconfig
import tempfile
import warnings
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any


@dataclass(frozen=True)
class AotExports:
    """What a unit's module exports: ``functions`` maps each exported name to its plain
    Python function and its Numba signature; ``helpers`` are compiled into their callers
    (those in ``inline`` copied into them; :func:`dispatchlab.numba_loader.register`)."""

    functions: Mapping[str, tuple[Callable[..., Any], Any]]
    helpers: Sequence[Callable[..., Any]] = ()
    inline: Sequence[Callable[..., Any]] = ()


@dataclass(frozen=True)
class AotUnit:
    """One extension module: ``name`` (a prefix of the module's file name), ``sources``
    (dotted modules whose text keys the build, besides the module of ``exports``) and
    ``exports``, ``"module:function"`` naming the function that returns the
    :class:`AotExports` (imported and called in the build process only, so it may import
    Numba, and the unit's declarer need not import it). ``parts``, when given, groups the
    exported names: each group is built into its own module (heaviest group first, for
    :func:`prebuild`), and together they must cover the exports exactly."""

    name: str
    sources: tuple[str, ...]
    exports: str
    parts: tuple[tuple[str, ...], ...] = ()

    @property
    def exports_module(self) -> str:
        """The module of :attr:`exports`."""
        return self.exports.partition(":")[0]


def module_name(unit: AotUnit, part: int | None = None) -> str:
    """The extension module's name for the unit's sources, Numba and Python version (and
    the index of one of its ``parts``)."""
    key = hashlib.sha256(Path(__file__).read_bytes())
    for source in (*unit.sources, unit.exports_module):
        spec = importlib.util.find_spec(source)
        if spec is None or spec.origin is None:  # pragma: no cover - a unit's own modules
            raise ModuleNotFoundError(f"ahead-of-time unit '{unit.name}': no module {source}")
        key.update(Path(spec.origin).read_bytes())
    numba_version = metadata.version("numba")  # importing numba to read it costs ~0.5 s
    key.update(f"{numba_version} {sys.implementation.cache_tag}".encode())
    return f"{_stem(unit, part)}_aot_{key.hexdigest()[:16]}"


def _stem(unit: AotUnit, part: int | None) -> str:
    return unit.name if part is None else f"{unit.name}__p{part}"


def cache_dir() -> Path:
    """``$DISPATCHLAB_CACHE_DIR``, else this package's ``__pycache__`` when writable, else
    ``~/.cache/dispatchlab``."""
    env = os.environ.get("DISPATCHLAB_CACHE_DIR")
    if env:
        return Path(env)
    here = Path(__file__).parent / "__pycache__"
    try:
        here.mkdir(exist_ok=True)
        if os.access(here, os.W_OK):
            return here
    except OSError:
        pass
    return Path.home() / ".cache" / "dispatchlab"


class PartedModule(ModuleType):
    """A unit built in ``parts``: attribute access loads (building if missing) only the
    part that exports the name; a name of no part, or of a part that cannot be had, is
    missing (so :func:`getattr` with a default falls back)."""

    def __init__(self, unit: AotUnit) -> None:
        super().__init__(unit.name)
        self._unit = unit
        self._owner = {name: k for k, names in enumerate(unit.parts) for name in names}

    def __getattr__(self, name: str) -> Any:
        part = self.__dict__.get("_owner", {}).get(name)
        module = None if part is None else _load_part(self._unit, part)
        if module is None:
            raise AttributeError(name)
        return getattr(module, name)


_modules: dict[tuple[str, int | None], ModuleType | None] = {}


def load(unit: AotUnit) -> ModuleType | None:
    """The unit's extension module (built now if missing, loaded once per process), or
    ``None`` when it cannot be had (``DISPATCHLAB_NO_AOT``, no compiler, a failed build);
    for a unit in ``parts``, a :class:`PartedModule` loading each part on first use."""
    if os.environ.get("DISPATCHLAB_NO_AOT"):
        return None
    if unit.parts:
        return PartedModule(unit)
    return _load_part(unit, None)


def _load_part(unit: AotUnit, part: int | None) -> ModuleType | None:
    key = (unit.name, part)
    if key not in _modules:
        path = _built(unit, part)
        _modules[key] = None if path is None else _import(path)
    return _modules[key]


def _built(unit: AotUnit, part: int | None) -> Path | None:
    """The path of the part's module, built now (under the machine-wide lock) if missing;
    ``None`` when its build failed (now or before)."""
    name = module_name(unit, part)
    folder = cache_dir()
    path = folder / (name + (sysconfig.get_config_var("EXT_SUFFIX") or ".so"))
    failed = folder / (name + ".failed")
    if not path.exists():
        if failed.exists():
            return None
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / (name + ".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one build per machine; the others wait
            if not path.exists() and not _build(unit, part, folder, name, path, failed):
                return None
    return path


def _import(path: Path) -> ModuleType | None:
    name = path.name.partition(".")[0]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _build(unit: AotUnit, part: int | None, folder: Path, name: str, path: Path,
           failed: Path) -> bool:
    """Build in a subprocess into a temporary folder, then move into place atomically."""
    only = list(unit.parts[part]) if part is not None else []
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        proc = subprocess.run([sys.executable, "-m", __name__, tmp, name, unit.exports, *only],
                              capture_output=True, text=True, check=False)
        built = list(Path(tmp).glob(name + ".*"))
        if proc.returncode < 0:  # stopped by a signal (a stopped prebuild): not a failure
            return False
        if proc.returncode != 0 or not built:
            failed.write_text(proc.stderr[-4000:] or f"exit status {proc.returncode}")
            return False
        os.replace(built[0], path)
    key = name.rpartition("_aot_")[2]
    for pattern in (f"{unit.name}_aot_*", f"{unit.name}__p*_aot_*"):
        for old in folder.glob(pattern):  # builds for an earlier source, version or parts
            if old.name.partition(".")[0].rpartition("_aot_")[2] != key:
                old.unlink(missing_ok=True)
    return True


def prebuild(units: Sequence[AotUnit], jobs: int | None = None) -> list[str]:
    """Build the missing modules of ``units`` (every part of a parted unit), ``jobs`` at a
    time (default: the machine's cores), heaviest first; the names that failed."""
    work = [(unit, part) for unit in units
            for part in (range(len(unit.parts)) if unit.parts else [None])]
    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 1) as pool:
        results = list(pool.map(lambda item: _built(*item), work))
    return [module_name(unit, part) for (unit, part), path in zip(work, results, strict=True)
            if path is None]


def build(out_dir: str, name: str, where: str, only: Sequence[str] = ()) -> None:
    """Compile the exports of ``where`` (``module:function`` returning :class:`AotExports`),
    or those named in ``only``, into extension module ``name`` in ``out_dir``."""
    from dispatchlab.numba_loader import register

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pycc is deprecated; the JIT is the fallback
        from numba.pycc import CC

    exports = exports_of(where)
    cc = CC(name)
    cc.output_dir = out_dir
    cc.verbose = False
    register(exports.helpers, inline=exports.inline)
    unknown = set(only) - set(exports.functions)
    if unknown:
        raise SystemExit(f"{where} exports no {sorted(unknown)}")
    for export, (fn, signature) in exports.functions.items():
        if not only or export in only:
            cc.export(export, signature)(fn)
    cc.compile()


def exports_of(where: str) -> AotExports:
    """What ``where`` (a unit's ``exports``, ``module:function``) lists; imports Numba."""
    module, _, function = where.partition(":")
    exports: AotExports = getattr(importlib.import_module(module), function)()
    return exports


def _unit(reference: str) -> AotUnit:
    module, _, attribute = reference.partition(":")
    unit = getattr(importlib.import_module(module), attribute, None)
    if not isinstance(unit, AotUnit):
        raise SystemExit(f"{reference} is not an AotUnit")
    return unit


def _stop(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)  # so temporary build folders are removed


def main(argv: Sequence[str]) -> None:
    """The command line (module docstring): a build, or ``--prebuild`` of named units."""
    if argv[:1] == ["--prebuild"]:
        signal.signal(signal.SIGTERM, _stop)
        failed = prebuild([_unit(ref) for ref in argv[1:]])
        sys.exit(f"ahead-of-time builds failed: {', '.join(failed)}" if failed else 0)
    build(argv[0], argv[1], argv[2], argv[3:])


if __name__ == "__main__":
    # run as a script this file is ``__main__``: work with the package's module, whose
    # AotUnit class the units were declared with
    importlib.import_module("dispatchlab.numba_aot").main(sys.argv[1:])
