"""Data-driven duration prediction from each user's recent history (Galleguillos 2017).

A job's prediction is the mean of the last ``history`` completed run times of the same
user and executable; without such history, of the same user; without that, the
requested wall-time. It is capped by the wall-time (the engine kills there anyway) and
fixed when the job is first asked about — its submission, for an on-line dispatcher —
so a running job keeps the prediction it was dispatched with. The history is updated
on-line by :meth:`observe` as jobs finish: nothing from the future is used.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np

from dispatchlab.engine.state import SystemView
from dispatchlab.errors import ConfigError


class HeuristicEstimate:
    """Per (user, executable) then per user moving mean of the last run times."""

    name = "heuristic"
    oracle = False

    def __init__(self, history: int = 2) -> None:
        if history < 1:
            raise ConfigError("history must be >= 1", field="history")
        self.history = history
        self._walltime: list[int] = []
        self._user: list[int] = []
        self._app: list[int] = []
        self._by_key: dict[tuple[int, int], deque[int]] = {}
        self._by_user: dict[int, deque[int]] = {}
        self._fixed: dict[int, int] = {}

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """Forget all history; read the columns (lists that grow as jobs arrive)."""
        self._walltime = view.jobs.ints("walltime")
        self._user = view.jobs.ints("user")
        self._app = view.jobs.ints("app")
        self._by_key = {}
        self._by_user = {}
        self._fixed = {}

    def _predict(self, job: int) -> int:
        user = self._user[job]
        wall = max(self._walltime[job], 1)
        if user < 0:
            return wall
        hist = self._by_key.get((user, self._app[job])) or self._by_user.get(user)
        if not hist:
            return wall
        return max(1, min(wall, round(sum(hist) / len(hist))))

    def estimate(self, job: int) -> int:
        """The job's prediction, made the first time it is asked for."""
        value = self._fixed.get(job)
        if value is None:
            value = self._fixed[job] = self._predict(job)
        return value

    def observe(self, job: int, runtime: int) -> None:
        """Add a finished job's run time to its user's and executable's history."""
        user = self._user[job]
        if user < 0:
            return
        value = max(1, int(runtime))
        key = (user, self._app[job])
        by_key = self._by_key.get(key)
        if by_key is None:
            by_key = self._by_key[key] = deque(maxlen=self.history)
        by_key.append(value)
        by_user = self._by_user.get(user)
        if by_user is None:
            by_user = self._by_user[user] = deque(maxlen=self.history)
        by_user.append(value)

    def describe(self) -> dict[str, Any]:
        """Name and history length."""
        return {"name": self.name, "history": self.history}
