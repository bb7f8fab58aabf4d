"""dispatchlab: a fast, trustworthy simulator of HPC batch systems and their dispatchers.

The public names are imported on first use (PEP 562), so ``import dispatchlab`` (and the
command line's ``--help``) stays fast. What a dispatcher author needs (the base class, the
view, events, decisions, allocators, the registry, the bundled sample) is in
:mod:`dispatchlab.extend`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dispatchlab.lazy import lazy_exports

__version__ = "0.1.0"

__all__ = ["Platform", "Results", "Workload", "__version__", "simulate"]

__getattr__, __dir__ = lazy_exports(__name__, {
    "Results": "metrics.results",
    "Platform": "platform.platform",
    "simulate": "simulation",
    "Workload": "workload.workload",
})

if TYPE_CHECKING:
    from dispatchlab.metrics.results import Results
    from dispatchlab.platform.platform import Platform
    from dispatchlab.simulation import simulate
    from dispatchlab.workload.workload import Workload
