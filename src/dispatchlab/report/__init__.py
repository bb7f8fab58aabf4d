"""Comparison reports: tables, figures and a self-contained HTML page.

Names are imported on first use (PEP 562): importing ``dispatchlab.report.format`` (plain
number formatting, used by ``simulate``) must not pull in matplotlib, SciPy or pandas.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__all__ = ["Comparison", "ReportFiles", "build_comparison", "write_report"]

_LAZY = {
    "Comparison": "dispatchlab.report.analysis",
    "build_comparison": "dispatchlab.report.analysis",
    "ReportFiles": "dispatchlab.report.build",
    "write_report": "dispatchlab.report.build",
}

if TYPE_CHECKING:
    from dispatchlab.report.analysis import Comparison, build_comparison
    from dispatchlab.report.build import ReportFiles, write_report


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'dispatchlab.report' has no attribute {name!r}")
