"""Versions and environment recorded beside every result, for reproducibility."""

from __future__ import annotations

import platform as _platform
import sys
from importlib import metadata
from typing import Any


def versions() -> dict[str, str]:
    """Versions of dispatchlab, Python and the libraries that shape results."""
    out = {"python": sys.version.split()[0], "machine": _platform.machine()}
    for pkg in ("dispatchlab", "numpy", "pandas", "pyarrow", "ortools", "dask"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            continue
    return out


def json_default(value: Any) -> Any:
    """``json.dump``'s ``default`` for result files: NumPy scalars and arrays as plain
    numbers and lists, anything else as its text."""
    if hasattr(value, "item"):
        return value.item()
    if hasattr(value, "tolist"):
        return value.tolist()
    return str(value)
