"""The compiled loops (strict/EASY, nodes leaving and coming back, conservative
backfilling), the slot-availability operations and the audit's capacity sweep compiled ahead of
time into a plain extension module, built once per machine.

Loading it costs well under a millisecond, where the first call of a Numba JIT function
(even from Numba's disk cache) initializes Numba's compiler — about half a second, much of
it importing SciPy for Numba's BLAS check. The module is built on first use (by Numba's
``pycc`` and the system C compiler, in a subprocess, ~20 s) into a cache folder keyed by
the sources, Numba and Python versions; where that fails the JIT is used.
``DISPATCHLAB_NO_AOT`` skips it.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import os
import subprocess
import sys
import sysconfig
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

from dispatchlab.engine.compiled import aot_build as _build_source
from dispatchlab.engine.compiled import capacity_sweep as _sweep_source
from dispatchlab.engine.compiled import conservative_loop as _cons_source
from dispatchlab.engine.compiled import loop_parts as _parts_source
from dispatchlab.engine.compiled import power_shadow as _power_shadow_source
from dispatchlab.engine.compiled import queue_index as _index_source
from dispatchlab.engine.compiled import scenario_loop as _scenario_source
from dispatchlab.engine.compiled import slot_availability_ops as _ops_source
from dispatchlab.engine.compiled import slot_loop as _source
from dispatchlab.engine.compiled import start_scan as _scan_source


def module_name() -> str:
    """Name of the module for these sources, Numba and Python version."""
    key = hashlib.sha256(Path(_source.__file__).read_bytes())
    for other in (_ops_source, _cons_source, _sweep_source, _parts_source, _scenario_source,
                  _build_source, _scan_source, _index_source, _power_shadow_source):
        key.update(Path(str(other.__file__)).read_bytes())
    numba_version = metadata.version("numba")  # importing numba to read it costs ~0.5 s
    key.update(f"{numba_version} {sys.implementation.cache_tag}".encode())
    return f"slot_loop_aot_{key.hexdigest()[:16]}"


def cache_dir() -> Path:
    """``$DISPATCHLAB_CACHE_DIR``, else this package's ``__pycache__`` when writable, else
    ``~/.cache/dispatchlab``."""
    env = os.environ.get("DISPATCHLAB_CACHE_DIR")
    if env:
        return Path(env)
    here = Path(_source.__file__).parent / "__pycache__"
    try:
        here.mkdir(exist_ok=True)
        if os.access(here, os.W_OK):
            return here
    except OSError:
        pass
    return Path.home() / ".cache" / "dispatchlab"


_module: Any = None


def load_module() -> Any:
    """The ahead-of-time compiled module (built now if missing, loaded once per process), or
    ``None`` when unavailable."""
    global _module
    if _module is None:
        _module = _load() or False
    return _module or None


def _load() -> Any:
    if os.environ.get("DISPATCHLAB_NO_AOT"):
        return None
    name = module_name()
    folder = cache_dir()
    path = folder / (name + (sysconfig.get_config_var("EXT_SUFFIX") or ".so"))
    failed = folder / (name + ".failed")
    if not path.exists():
        if failed.exists():
            return None
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / (name + ".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one build per machine; the others wait
            if not path.exists() and not _build(folder, name, path, failed):
                return None
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _build(folder: Path, name: str, path: Path, failed: Path) -> bool:
    """Build in a subprocess into a temporary folder, then move into place atomically."""
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        proc = subprocess.run(
            [sys.executable, "-m", "dispatchlab.engine.compiled.aot_build", tmp, name],
            capture_output=True, text=True, check=False)
        built = list(Path(tmp).glob(name + ".*"))
        if proc.returncode != 0 or not built:
            failed.write_text(proc.stderr[-4000:] or f"exit status {proc.returncode}")
            return False
        os.replace(built[0], path)
    for old in folder.glob("slot_loop_aot_*"):  # builds for an earlier source or version
        if not old.name.startswith(name):
            old.unlink(missing_ok=True)
    return True
