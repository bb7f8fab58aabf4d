"""Run times learned from each user's recent jobs, as a share of their time limits.

Tsafrir, Etsion and Feitelson ("Backfilling using system-generated predictions rather
than user runtime estimates", IEEE TPDS 18(6), 2007) predict a job's run time as the
average run time of its user's last two jobs, capped by the job's limit. A user's jobs
often differ in length but ask limits in proportion, so this estimator averages the
*ratio* run time / limit of the user's last ``history`` finished jobs and applies it to
the job's own limit: estimate = limit × mean ratio, at least 1 s, at most the limit. A
user with no finished job yet gets the limit (what Slurm itself plans with).

The estimate is fixed when the job is first asked about, and the history grows on-line by
:meth:`observe` as jobs end: nothing from the future is read.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from dispatchlab.engine.state import SystemView
from dispatchlab.errors import ConfigError
from dispatchlab.params import Parametrized


class UserRatioEstimate(Parametrized):
    """Limit × the mean run-time/limit ratio of the user's last ``history`` jobs."""

    name = "user-ratio"
    oracle = False

    def __init__(self, history: int = 2) -> None:
        if history < 1:
            raise ConfigError("history must be >= 1", field="history")
        self.history = history
        self._walltime: list[int] = []
        self._user: list[int] = []
        self._ratios: dict[int, deque[float]] = {}
        self._fixed: dict[int, int] = {}

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """Forget all history; read the limit and user columns."""
        self._walltime = view.jobs.ints("walltime")
        self._user = view.jobs.ints("user")
        self._ratios = {}
        self._fixed = {}

    def estimate(self, job: int) -> int:
        """The job's limit × its user's recent ratio (fixed at the first call)."""
        got = self._fixed.get(job)
        if got is not None:
            return got
        limit = max(int(self._walltime[job]), 1)
        seen = self._ratios.get(self._user[job])
        value = limit if not seen else min(limit, max(1, round(limit * sum(seen) / len(seen))))
        self._fixed[job] = value
        return value

    def observe(self, job: int, runtime: int) -> None:
        """Job ``job`` ran ``runtime`` s: its ratio joins its user's history."""
        limit = max(int(self._walltime[job]), 1)
        hist = self._ratios.setdefault(self._user[job], deque(maxlen=self.history))
        hist.append(min(max(runtime, 0) / limit, 1.0))
