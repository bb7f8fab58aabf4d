"""Comparison reports: tables, figures and a self-contained HTML page.

Names are imported on first use (PEP 562): importing ``dispatchlab.report.format`` (plain
number formatting, used by ``simulate``) must not pull in matplotlib, SciPy or pandas.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dispatchlab.lazy import lazy_exports

__all__ = ["Comparison", "ReportFiles", "build_comparison", "write_report"]

__getattr__, __dir__ = lazy_exports(__name__, {
    "Comparison": "analysis", "build_comparison": "analysis",
    "ReportFiles": "build", "write_report": "build",
})

if TYPE_CHECKING:
    from dispatchlab.report.analysis import Comparison, build_comparison
    from dispatchlab.report.build import ReportFiles, write_report
