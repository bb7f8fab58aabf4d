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

``python -m dispatchlab.numba_aot DIR NAME MODULE:FUNCTION`` is the build process.
Importing this module imports neither Numba nor any unit's sources.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib
import importlib.util
import os
import subprocess
import sys
import sysconfig
import tempfile
import warnings
from collections.abc import Callable, Mapping, Sequence
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
    Numba, and the unit's declarer need not import it)."""

    name: str
    sources: tuple[str, ...]
    exports: str

    @property
    def exports_module(self) -> str:
        """The module of :attr:`exports`."""
        return self.exports.partition(":")[0]


def module_name(unit: AotUnit) -> str:
    """The extension module's name for the unit's sources, Numba and Python version."""
    key = hashlib.sha256(Path(__file__).read_bytes())
    for source in (*unit.sources, unit.exports_module):
        spec = importlib.util.find_spec(source)
        if spec is None or spec.origin is None:  # pragma: no cover - a unit's own modules
            raise ModuleNotFoundError(f"ahead-of-time unit '{unit.name}': no module {source}")
        key.update(Path(spec.origin).read_bytes())
    numba_version = metadata.version("numba")  # importing numba to read it costs ~0.5 s
    key.update(f"{numba_version} {sys.implementation.cache_tag}".encode())
    return f"{unit.name}_aot_{key.hexdigest()[:16]}"


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


_modules: dict[str, ModuleType | None] = {}


def load(unit: AotUnit) -> ModuleType | None:
    """The unit's extension module (built now if missing, loaded once per process), or
    ``None`` when it cannot be had (``DISPATCHLAB_NO_AOT``, no compiler, a failed build)."""
    if unit.name not in _modules:
        _modules[unit.name] = _load(unit)
    return _modules[unit.name]


def _load(unit: AotUnit) -> ModuleType | None:
    if os.environ.get("DISPATCHLAB_NO_AOT"):
        return None
    name = module_name(unit)
    folder = cache_dir()
    path = folder / (name + (sysconfig.get_config_var("EXT_SUFFIX") or ".so"))
    failed = folder / (name + ".failed")
    if not path.exists():
        if failed.exists():
            return None
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / (name + ".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one build per machine; the others wait
            if not path.exists() and not _build(unit, folder, name, path, failed):
                return None
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _build(unit: AotUnit, folder: Path, name: str, path: Path, failed: Path) -> bool:
    """Build in a subprocess into a temporary folder, then move into place atomically."""
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        proc = subprocess.run([sys.executable, "-m", __name__, tmp, name, unit.exports],
                              capture_output=True, text=True, check=False)
        built = list(Path(tmp).glob(name + ".*"))
        if proc.returncode != 0 or not built:
            failed.write_text(proc.stderr[-4000:] or f"exit status {proc.returncode}")
            return False
        os.replace(built[0], path)
    for old in folder.glob(f"{unit.name}_aot_*"):  # builds for an earlier source or version
        if not old.name.startswith(name):
            old.unlink(missing_ok=True)
    return True


def build(out_dir: str, name: str, where: str) -> None:
    """Compile the exports of ``where`` (``module:function`` returning :class:`AotExports`)
    into extension module ``name`` in ``out_dir``."""
    from dispatchlab.numba_loader import register

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pycc is deprecated; the JIT is the fallback
        from numba.pycc import CC

    module, _, function = where.partition(":")
    exports: AotExports = getattr(importlib.import_module(module), function)()
    cc = CC(name)
    cc.output_dir = out_dir
    cc.verbose = False
    register(exports.helpers, inline=exports.inline)
    for export, (fn, signature) in exports.functions.items():
        cc.export(export, signature)(fn)
    cc.compile()


if __name__ == "__main__":
    build(sys.argv[1], sys.argv[2], sys.argv[3])
