"""The duration-estimate interface shared by every dispatcher that plans ahead.

An estimator is reset once per run, asked ``estimate(job)`` for queued and running jobs,
and told ``observe(job, runtime)`` when a job ends so learned predictors can update online.
Estimates are integer seconds ≥ 1; the engine still kills at the requested wall-time.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from dispatchlab.workload.workload import Workload

IntArray = npt.NDArray[np.int64]


@runtime_checkable
class DurationEstimator(Protocol):
    """What planning dispatchers need to know about durations."""

    name: str

    def reset(self, workload: Workload) -> None:
        """Prepare for a run on ``workload``."""

    def estimate(self, job: int) -> int:
        """Expected duration of job ``job`` (engine index), in seconds ≥ 1."""
        ...

    def observe(self, job: int, runtime: int) -> None:
        """Job ``job`` ended after ``runtime`` seconds."""

    def describe(self) -> dict[str, Any]:
        """JSON-ready configuration."""
        ...


class WalltimeEstimate:
    """The user's requested time (the default everywhere)."""

    name = "walltime"

    def __init__(self) -> None:
        self._values: list[int] = []

    def reset(self, workload: Workload) -> None:
        """Cache the requested times as Python ints."""
        self._values = np.maximum(workload.walltime, 1).tolist()

    def estimate(self, job: int) -> int:
        """The requested time."""
        return self._values[job]

    def observe(self, job: int, runtime: int) -> None:
        """Nothing to learn."""

    def describe(self) -> dict[str, Any]:
        """Name only."""
        return {"name": self.name}


class OracleEstimate(WalltimeEstimate):
    """The actual run time, capped by the wall-time (for studies only: it sees the future)."""

    name = "real"

    def reset(self, workload: Workload) -> None:
        """Cache min(runtime, walltime) as Python ints."""
        self._values = np.maximum(np.minimum(workload.runtime, workload.walltime), 1).tolist()
