"""Experiments: grids of runs from a TOML file, executed locally or on Dask, stored per run."""

from dispatchlab.experiments.campaign import CampaignOutcome, Progress, run_campaign
from dispatchlab.experiments.collect import breakdown_table, collect, runs_table, write_tables
from dispatchlab.experiments.config import PlannedRun, RunConfig, RunLabels, WorkloadRef
from dispatchlab.experiments.engines import DaskEngine, LocalEngine, make_engine
from dispatchlab.experiments.grid import plan
from dispatchlab.experiments.spec import ExperimentSpec, load_experiment, parse_experiment
from dispatchlab.experiments.store import RunRecord, RunStore
from dispatchlab.experiments.worker import RunOutput, execute_run

__all__ = [
    "CampaignOutcome",
    "DaskEngine",
    "ExperimentSpec",
    "LocalEngine",
    "PlannedRun",
    "Progress",
    "RunConfig",
    "RunLabels",
    "RunOutput",
    "RunRecord",
    "RunStore",
    "WorkloadRef",
    "breakdown_table",
    "collect",
    "execute_run",
    "load_experiment",
    "make_engine",
    "parse_experiment",
    "plan",
    "run_campaign",
    "runs_table",
    "write_tables",
]
