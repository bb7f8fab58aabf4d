"""Comparison reports: tables, figures and a self-contained HTML page."""

from dispatchlab.report.analysis import Comparison, build_comparison
from dispatchlab.report.build import ReportFiles, write_report

__all__ = ["Comparison", "ReportFiles", "build_comparison", "write_report"]
