"""Experiments: grids of runs from a TOML file, executed locally or on Dask, stored per run.

Names are imported on first use: a worker process unpickling a run configuration imports
only what running it needs (not pydantic, SciPy or Dask).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dispatchlab.lazy import lazy_exports

if TYPE_CHECKING:
    from dispatchlab.experiments.backends import DaskBackend, LocalBackend, make_backend
    from dispatchlab.experiments.campaign import CampaignOutcome, Progress, run_campaign
    from dispatchlab.experiments.collect import (
        breakdown_table,
        runs_table,
        write_tables,
    )
    from dispatchlab.experiments.config import PlannedRun, RunConfig, RunLabels, WorkloadRef
    from dispatchlab.experiments.grid import plan
    from dispatchlab.experiments.spec import ExperimentSpec, load_experiment, parse_experiment
    from dispatchlab.experiments.store import RunRecord, RunStore
    from dispatchlab.experiments.worker import RunOutput, execute_run

_WHERE = {
    "CampaignOutcome": "campaign",
    "Progress": "campaign",
    "run_campaign": "campaign",
    "breakdown_table": "collect",
    "runs_table": "collect",
    "write_tables": "collect",
    "PlannedRun": "config",
    "RunConfig": "config",
    "RunLabels": "config",
    "WorkloadRef": "config",
    "DaskBackend": "backends",
    "LocalBackend": "backends",
    "make_backend": "backends",
    "plan": "grid",
    "ExperimentSpec": "spec",
    "load_experiment": "spec",
    "parse_experiment": "spec",
    "RunRecord": "store",
    "RunStore": "store",
    "RunOutput": "worker",
    "execute_run": "worker",
}

__all__ = [
    "CampaignOutcome",
    "DaskBackend",
    "ExperimentSpec",
    "LocalBackend",
    "PlannedRun",
    "Progress",
    "RunConfig",
    "RunLabels",
    "RunOutput",
    "RunRecord",
    "RunStore",
    "WorkloadRef",
    "breakdown_table",
    "execute_run",
    "load_experiment",
    "make_backend",
    "parse_experiment",
    "plan",
    "run_campaign",
    "runs_table",
    "write_tables",
]


__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
