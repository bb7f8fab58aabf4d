"""Metrics and results: per-job table, time series, run summary."""

from dispatchlab.metrics.results import Results

__all__ = ["Results"]
