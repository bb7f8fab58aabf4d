"""Data-driven duration prediction from recent history (Galleguillos 2017).

A job's prediction is the mean of the last ``history`` completed run times of the jobs
sharing its first key that has any history; without any, the requested wall-time. Keys,
most specific first:

- ``key="user"`` (the paper's): same user and executable, then same user;
- ``key="request"``: same queue, requested wall-time and request (units and per-unit
  resources), then same queue and wall-time — for traces whose users and executables
  are hidden (the Eurora batches name every job's user ``yyy``, executable ``xxx``, which
  collapses the user key into "the last jobs that finished, anyone's").

The prediction is capped by the wall-time (the engine kills there anyway) and fixed when
the job is first asked about — its submission, for an on-line dispatcher — so a running
job keeps the prediction it was dispatched with. The history is updated on-line by
:meth:`observe` as jobs finish: nothing from the future is used.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable

import numpy as np

from dispatchlab.engine.state import SystemView
from dispatchlab.errors import ConfigError
from dispatchlab.params import Parametrized

KEYS = ("user", "request")


class HeuristicEstimate(Parametrized):
    """Moving mean of the last run times per history key (user/executable or request)."""

    name = "heuristic"
    oracle = False
    #: the paper's user key goes unsaid
    omitted_at_default = ("key",)

    def __init__(self, history: int = 2, key: str = "user") -> None:
        if history < 1:
            raise ConfigError("history must be >= 1", field="history")
        if key not in KEYS:
            raise ConfigError(f"unknown history key '{key}' (known: {', '.join(KEYS)})",
                              field="key")
        self.history = history
        self.key = key
        if key != "user":
            self.name = f"heuristic-{key}"
        self._walltime: list[int] = []
        self._user: list[int] = []
        self._app: list[int] = []
        self._queue: list[int] = []
        self._units: list[int] = []
        self._req: list[list[int]] = []
        self._hist: dict[Hashable, deque[int]] = {}
        self._fixed: dict[int, int] = {}

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """Forget all history; read the columns (lists that grow as jobs arrive)."""
        self._walltime = view.jobs.ints("walltime")
        if self.key == "user":
            self._user = view.jobs.ints("user")
            self._app = view.jobs.ints("app")
        else:
            self._queue = view.jobs.ints("queue")
            self._units = view.jobs.ints("units")
            self._req = view.jobs.ints("req")
        self._hist = {}
        self._fixed = {}

    def _keys(self, job: int) -> list[Hashable]:
        """The job's history keys, most specific first."""
        if self.key == "user":
            user = self._user[job]
            return [] if user < 0 else [("ua", user, self._app[job]), ("u", user)]
        queue, wall = self._queue[job], self._walltime[job]
        return [("qwr", queue, wall, self._units[job], tuple(self._req[job])),
                ("qw", queue, wall)]

    def _predict(self, job: int) -> int:
        wall = max(self._walltime[job], 1)
        for key in self._keys(job):
            hist = self._hist.get(key)
            if hist:
                return max(1, min(wall, round(sum(hist) / len(hist))))
        return wall

    def estimate(self, job: int) -> int:
        """The job's prediction, made the first time it is asked for."""
        value = self._fixed.get(job)
        if value is None:
            value = self._fixed[job] = self._predict(job)
        return value

    def observe(self, job: int, runtime: int) -> None:
        """Add a finished job's run time to the history of each of its keys."""
        value = max(1, int(runtime))
        for key in self._keys(job):
            hist = self._hist.get(key)
            if hist is None:
                hist = self._hist[key] = deque(maxlen=self.history)
            hist.append(value)
