"""The results of one simulation: per-job table, time series, summary and provenance."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from dispatchlab.engine.recorder import Recorder
from dispatchlab.metrics.job_metrics import job_table
from dispatchlab.metrics.summary import summarize
from dispatchlab.metrics.timeseries import time_series
from dispatchlab.provenance import versions


@dataclass
class Results:
    """What :func:`dispatchlab.simulate` returns.

    ``jobs`` has one row per job, ``timeseries`` one row per decision point, ``summary``
    the run-level metrics and ``config`` the exact configuration that produced them.
    """

    jobs: pd.DataFrame
    timeseries: pd.DataFrame
    summary: dict[str, Any]
    config: dict[str, Any] = field(default_factory=dict)
    recorder: Recorder | None = field(default=None, repr=False)

    @classmethod
    def from_recorder(cls, rec: Recorder, config: dict[str, Any]) -> Results:
        """Compute every table from a finished run."""
        jobs = job_table(rec)
        ts = time_series(rec)
        return cls(jobs=jobs, timeseries=ts, summary=summarize(rec, jobs, ts), config=config,
                   recorder=rec)

    def save(self, out: str | Path, *, csv: bool = True) -> Path:
        """Write ``jobs.parquet``/``jobs.csv``, ``timeseries.parquet`` and ``summary.json``."""
        path = Path(out)
        path.mkdir(parents=True, exist_ok=True)
        self.jobs.to_parquet(path / "jobs.parquet", index=False)
        self.timeseries.to_parquet(path / "timeseries.parquet", index=False)
        if csv:
            self.jobs.to_csv(path / "jobs.csv", index=False)
            self.timeseries.to_csv(path / "timeseries.csv", index=False)
        doc = {"summary": self.summary, "config": self.config, "versions": versions()}
        (path / "summary.json").write_text(json.dumps(doc, indent=2, default=_json_default))
        return path


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    if hasattr(value, "tolist"):
        return value.tolist()
    return str(value)
