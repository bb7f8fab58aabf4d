"""dispatchlab: a fast, trustworthy simulator of HPC batch systems and their dispatchers.

The public names are imported on first use (PEP 562), so ``import dispatchlab`` (and the
command line's ``--help``) stays fast.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["Platform", "Results", "Workload", "__version__", "simulate"]

_LAZY = {
    "Results": "dispatchlab.metrics.results",
    "Platform": "dispatchlab.platform.platform",
    "simulate": "dispatchlab.simulation",
    "Workload": "dispatchlab.workload.workload",
}

if TYPE_CHECKING:
    from dispatchlab.metrics.results import Results
    from dispatchlab.platform.platform import Platform
    from dispatchlab.simulation import simulate
    from dispatchlab.workload.workload import Workload


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'dispatchlab' has no attribute {name!r}")
