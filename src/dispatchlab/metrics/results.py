"""The results of one simulation: per-job table, time series, summary and provenance.

The summary is computed from numpy arrays when the run ends; the per-job table and the
time series (DataFrames, with strings such as node lists and local timestamps) are built
the first time they are read, so runs that need only the summary never pay for them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dispatchlab.engine.recorder import Recorder
from dispatchlab.errors import OutputError
from dispatchlab.metrics.job_metrics import JobArrays, job_arrays, job_table
from dispatchlab.metrics.summary import summarize
from dispatchlab.metrics.timeseries import SeriesArrays, series_arrays, time_series
from dispatchlab.provenance import json_default, versions

if TYPE_CHECKING:
    import pandas as pd


class Results:
    """What :func:`dispatchlab.simulate` returns.

    ``jobs`` has one row per job, ``timeseries`` one row per decision point, ``summary``
    the run-level metrics and ``config`` the exact configuration that produced them;
    ``recorder`` the raw segment and node-state logs.
    """

    def __init__(self, jobs: pd.DataFrame | None = None, timeseries: pd.DataFrame | None = None,
                 summary: dict[str, Any] | None = None, config: dict[str, Any] | None = None,
                 recorder: Recorder | None = None,
                 job_arrays: JobArrays | None = None, series: SeriesArrays | None = None):
        self._jobs = jobs
        self._timeseries = timeseries
        self.summary: dict[str, Any] = summary if summary is not None else {}
        self.config: dict[str, Any] = config if config is not None else {}
        self.recorder = recorder
        self._job_arrays = job_arrays
        self._series = series
        #: further per-run tables saved as ``<name>.parquet`` (``cooling``: the profit
        #: accounting's IT power, cooling power and temperature series)
        self.tables: dict[str, pd.DataFrame] = {}

    @classmethod
    def from_recorder(cls, rec: Recorder, config: dict[str, Any]) -> Results:
        """The summary of a finished run now; its tables when first read."""
        arrays = job_arrays(rec)
        series = series_arrays(rec)
        return cls(summary=summarize(rec, arrays, series), config=config, recorder=rec,
                   job_arrays=arrays, series=series)

    @property
    def jobs(self) -> pd.DataFrame:
        """One row per job (built on first access); ``energy_j`` when the platform has a node
        power model (:mod:`dispatchlab.energy.accounting`)."""
        if self._jobs is None:
            if self.recorder is None:
                raise ValueError("these results hold no per-job table and no record")
            self._jobs = job_table(self.recorder, self._job_arrays)
            if self.recorder.platform.power_table is not None:
                from dispatchlab.energy.accounting import run_energy

                per_job = run_energy(self.recorder).per_job
                if per_job is not None:  # J per job, busy-node power split by use
                    self._jobs["energy_j"] = per_job
        return self._jobs

    @property
    def timeseries(self) -> pd.DataFrame:
        """One row per decision point (built on first access)."""
        if self._timeseries is None:
            if self.recorder is None:
                raise ValueError("these results hold no time series and no record")
            self._timeseries = time_series(self.recorder, self._series)
        return self._timeseries

    def __repr__(self) -> str:
        s = self.summary
        return (f"Results(jobs={s.get('jobs')}, mean_wait={s.get('mean_wait')}, "
                f"utilization={s.get('utilization')})")

    def save(self, out: str | Path, *, csv: bool = True) -> Path:
        """Write the results folder ``out`` (:meth:`write_files`) atomically: it is either
        the complete new results or left as it was (disk full, Ctrl-C), never half
        written. An existing ``out`` is replaced as a whole; one holding anything but
        results files is refused (nothing of the user's is removed)."""
        from dispatchlab.atomic_output import atomic_output, check_not_file, holds_results_only

        path = Path(out)
        check_not_file(path, "out")
        if path.exists() and not holds_results_only(path):
            raise OutputError(f"cannot write '{path}': it holds files that are not results; "
                              "save into a new or a results folder")
        with atomic_output(path) as tmp:
            self.write_files(tmp, csv=csv)
        return path

    def write_files(self, folder: str | Path, *, csv: bool = True) -> Path:
        """Write ``jobs.parquet``/``jobs.csv``, ``timeseries.parquet``, the extra tables and
        ``summary.json`` into ``folder`` as they are (for writers that already hold a
        temporary folder of :func:`~dispatchlab.atomic_output.atomic_output`)."""
        path = Path(folder)
        path.mkdir(parents=True, exist_ok=True)
        self.jobs.to_parquet(path / "jobs.parquet", index=False)
        self.timeseries.to_parquet(path / "timeseries.parquet", index=False)
        for name, table in self.tables.items():
            table.to_parquet(path / f"{name}.parquet", index=False)
        if csv:
            self.jobs.to_csv(path / "jobs.csv", index=False)
            self.timeseries.to_csv(path / "timeseries.csv", index=False)
        doc = {"summary": self.summary, "config": self.config, "versions": versions()}
        (path / "summary.json").write_text(json.dumps(doc, indent=2, default=json_default))
        return path
