"""The duration-estimate interface shared by every dispatcher that plans ahead.

An estimator is reset once per run with the dispatcher's view and random generator, asked
``estimate(job)`` for queued and running jobs, and told ``observe(job, runtime)`` when a
job ends so learned predictors can update online. Estimates are integer seconds ≥ 1; the
engine still kills at the requested wall-time. An estimator that reads actual run times
declares ``oracle = True``; the dispatcher using it then declares it too, and only then does
the engine hand over the future (``view.oracle``).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from dispatchlab.engine.state import SystemView
from dispatchlab.errors import ConfigError
from dispatchlab.params import Parametrized


@runtime_checkable
class DurationEstimator(Protocol):
    """What planning dispatchers need to know about durations."""

    name: str
    oracle: bool

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """Prepare for a run on ``view``'s jobs."""

    def estimate(self, job: int) -> int:
        """Expected duration of job ``job`` (engine index), in seconds ≥ 1."""
        ...

    def observe(self, job: int, runtime: int) -> None:
        """Job ``job`` ended after ``runtime`` seconds."""

    def describe(self) -> dict[str, Any]:
        """JSON-ready configuration."""
        ...


class WalltimeEstimate(Parametrized):
    """The user's requested time (the default everywhere)."""

    name = "walltime"
    oracle = False

    def __init__(self) -> None:
        self._values: list[int] = []

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """Read the requested times (a list that grows as jobs arrive)."""
        self._values = view.jobs.ints("walltime")

    def estimate(self, job: int) -> int:
        """The requested time (at least 1 s)."""
        value = self._values[job]
        return value if value > 0 else 1

    def observe(self, job: int, runtime: int) -> None:
        """Nothing to learn."""


class OracleEstimate(WalltimeEstimate):
    """The actual run time, capped by the wall-time (for studies only: it sees the future)."""

    name = "real"
    oracle = True

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """Cache min(runtime, walltime) from the oracle the engine handed over."""
        if view.oracle is None:
            raise ConfigError("the 'real' duration estimate reads actual run times: the "
                              "dispatcher using it must declare oracle = True", field="estimate")
        wl = view.oracle.workload
        self._values = np.maximum(np.minimum(wl.runtime, wl.walltime), 1).tolist()

    def estimate(self, job: int) -> int:
        """The actual run time, capped by the wall-time."""
        return self._values[job]
