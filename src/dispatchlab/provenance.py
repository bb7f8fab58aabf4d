"""Versions and environment recorded beside every result, for reproducibility."""

from __future__ import annotations

import platform as _platform
import sys
from importlib import metadata


def versions() -> dict[str, str]:
    """Versions of dispatchlab, Python and the libraries that shape results."""
    out = {"python": sys.version.split()[0], "machine": _platform.machine()}
    for pkg in ("dispatchlab", "numpy", "pandas", "pyarrow", "ortools", "dask"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            continue
    return out
