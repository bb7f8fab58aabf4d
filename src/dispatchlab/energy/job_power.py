"""Where a job's power comes from, when it is not the platform's node model.

- :class:`JobPower` — a per-job figure (W) for the whole job wherever it runs: the
  workload's ``power`` column, or an Eurora prediction file (``job_id;watts``, the
  ``eurora_power_predictions`` of Borghesi et al., matched on the numeric part of the id).
  Jobs without a figure get the ``fallback``: ``"node"`` (what the platform's node model
  says the job's units draw on the nodes they are placed on, idle power included — the
  figure a busy node's measured power would show), a fixed number of W, or ``"error"``. How
  many jobs had no figure and what they got is in :meth:`describe` (recorded in the run's
  engine settings).

:func:`job_power_source` turns the CLI's ``--job-power`` value into one: ``node`` (the
platform model, ``None``), ``column``, ``pa-hpc-sim`` (PA-HPC-SIM's formula,
:mod:`dispatchlab.energy.pa_hpc_sim_power`), or a prediction file path.
"""

from __future__ import annotations

import difflib
import math
import os
from pathlib import Path

import numpy as np

from dispatchlab.arrays import FloatArray, IntArray
from dispatchlab.errors import ConfigError
from dispatchlab.input_files import input_problem
from dispatchlab.platform.platform import Platform
from dispatchlab.workload.workload import Workload


class JobPower:
    """Each job draws one figure (W); jobs without one get the fallback."""

    def __init__(self, workload: Workload, watts: FloatArray, *, source: str,
                 platform: Platform | None = None, fallback: str | float = "node"):
        watts = np.asarray(watts, dtype=np.float64)
        if watts.shape != (workload.n_jobs,):
            raise ConfigError("one power figure per job is needed", field="power")
        bad = np.isfinite(watts) & (watts < 0)
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            raise ConfigError(f"{source}: job {int(workload.job_id[j])} has negative power "
                              f"{watts[j]}", field="power")
        missing = ~np.isfinite(watts)
        self.source, self.fallback = source, fallback
        self.missing = int(missing.sum())
        self._node_fallback: list[bool] = [False] * workload.n_jobs
        if self.missing:
            first = int(workload.job_id[np.flatnonzero(missing)[0]])
            if fallback == "error":
                raise ConfigError(f"{source}: {self.missing} job(s) have no power figure "
                                  f"(first: job {first}); give a fallback", field="power")
            if fallback == "node":
                if platform is None or platform.power_table is None:
                    raise ConfigError(
                        f"{source}: {self.missing} job(s) have no power figure (first: job "
                        f"{first}) and the platform has no node power model to fall back "
                        "on; give a fallback in W", field="power")
                self._node_fallback = missing.tolist()
                watts = np.where(missing, 0.0, watts)
            elif isinstance(fallback, int | float) and math.isfinite(fallback) \
                    and fallback >= 0:
                watts = np.where(missing, float(fallback), watts)
            else:
                raise ConfigError(f"fallback must be 'node', 'error' or W ≥ 0, got "
                                  f"{fallback!r}", field="fallback")
        self._watts: list[float] = watts.tolist()
        self._table = platform.power_table if platform is not None else None
        self._req: IntArray | None = None
        self._platform = platform
        self._workload = workload

    def has_figure(self, job: int) -> bool:
        """True when the job has its own figure (False: it falls back on the node model)."""
        return not self._node_fallback[job]

    def job_power(self, job: int, nodes: IntArray, counts: IntArray) -> float:
        """The job's figure, or the node model's power of its units where they are."""
        if not self._node_fallback[job]:
            return self._watts[job]
        assert self._table is not None and self._platform is not None
        if self._req is None:
            from dispatchlab.engine.simulator import map_requests

            self._req = map_requests(self._workload, self._platform)
        nodes = np.asarray(nodes, dtype=np.int64)
        usage = np.asarray(counts, dtype=np.int64)[:, None] * self._req[job]
        on = np.zeros(len(nodes), np.int64)
        return float(self._table.power(nodes, on, usage).sum())

    def describe(self) -> dict[str, object]:
        """Source, and how many jobs fell back on what."""
        return {"name": "job-power", "source": self.source, "jobs_without_figure":
                self.missing, "fallback": self.fallback}


def from_column(workload: Workload, platform: Platform | None = None,
                fallback: str | float = "error") -> JobPower:
    """The workload's ``power`` column."""
    return JobPower(workload, workload.power, source=f"{workload.source}: power column",
                    platform=platform, fallback=fallback)


def from_predictions(path: str | Path, workload: Workload, platform: Platform | None = None,
                     fallback: str | float = "node") -> JobPower:
    """An Eurora prediction file (``job_id;watts``)."""
    from dispatchlab.workload.eurora import load_power_predictions

    table = load_power_predictions(path)
    watts = np.array([table.get(int(j), math.nan) for j in workload.job_id.tolist()],
                     dtype=np.float64)
    if workload.n_jobs and not np.isfinite(watts).any():
        raise ConfigError(f"{path}: none of its {len(table):,} job ids is a job of the "
                          f"workload ({workload.n_jobs:,} jobs, ids {int(workload.job_id.min())}"
                          f"…{int(workload.job_id.max())}): wrong file?", field="job_power")
    return JobPower(workload, watts, source=str(path), platform=platform, fallback=fallback)


def job_power_source(spec: str | None, workload: Workload, platform: Platform,
                     fallback: str | float = "node") -> JobPower | None:
    """``None``/``node`` → the platform's node model (``None``); ``column`` → the power
    column; ``pa-hpc-sim`` → PA-HPC-SIM's formula; anything else → a prediction file."""
    if spec is None or spec == "node":
        if platform.power_table is None and spec == "node":
            raise ConfigError(f"platform '{platform.name}' has no node power model (give one "
                              "in its TOML file, or use --job-power column|FILE)",
                              field="job_power")
        return None
    if spec == "column":
        return from_column(workload, platform, fallback)
    if spec == "pa-hpc-sim":
        from dispatchlab.energy.pa_hpc_sim_power import peer_job_watts

        return JobPower(workload, peer_job_watts(workload), source="pa-hpc-sim formula",
                        platform=platform)
    if not spec.startswith("trace:") and not Path(spec).exists():
        if os.path.lexists(spec):  # a dangling or looping symbolic link
            raise ConfigError(f"'{spec}': {input_problem(Path(spec))}", field="job_power")
        close = difflib.get_close_matches(spec, ["node", "column", "pa-hpc-sim"], n=1,
                                          cutoff=0.6)
        hint = f"did you mean '{close[0]}'? " if close else ""
        raise ConfigError(f"'{spec}': no such file ({hint}give node, column, pa-hpc-sim or a "
                          "job_id;watts prediction file)", field="job_power")
    return from_predictions(spec, workload, platform, fallback)


def parse_fallback(text: str) -> str | float:
    """``node``, ``error`` or a number of W."""
    if text in ("node", "error"):
        return text
    try:
        return float(text)
    except ValueError:
        raise ConfigError(f"must be node, error or a number of W, got {text!r}",
                          field="job_power_fallback") from None
