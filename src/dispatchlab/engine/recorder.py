"""Records what happened during a run: starts, ends, placements, samples, overheads."""

from __future__ import annotations

from array import array
from typing import Any

import numpy as np
import numpy.typing as npt

from dispatchlab.errors import DispatchlabError
from dispatchlab.platform.platform import Platform
from dispatchlab.workload.workload import Workload

IntArray = npt.NDArray[np.int64]


class Recorder:
    """Append-only log of one run; :mod:`dispatchlab.metrics` turns it into tables."""

    def __init__(self, workload: Workload, platform: Platform, req: IntArray):
        n = workload.n_jobs
        self.workload = workload
        self.platform = platform
        self.req = req  # per-unit requests over the platform's resources (engine's mapping)
        self._start: list[int] = [-1] * n
        self._end: list[int] = [-1] * n
        # filled from the lists by finish(); -1 = never started / never ended
        self.start_time = np.empty(0, dtype=np.int64)
        self.end_time = np.empty(0, dtype=np.int64)
        self.planned = np.full(n, -1, dtype=np.int64)
        self.alloc_nodes: list[IntArray | None] = [None] * n
        self.alloc_counts: list[IntArray | None] = [None] * n
        self.rejected: dict[int, str] = {}
        # appended by the engine's loop directly (hot path): time and duration of each
        # dispatcher call; per decision point, flat: time, queue length, running jobs,
        # free capacity per resource (several rows at one time: the last one counts)
        self.decision_at = array("q")
        self.decision_cpu = array("d")
        self.sample_width = 3 + len(platform.resources)
        self.samples = array("q")
        self.sim_seconds = 0.0
        self.dispatcher_stats: dict[str, Any] = {}
        self.rules_info: dict[str, Any] | None = None  # what operator rules were enforced

    def start(self, job: int, t: int, nodes: IntArray, counts: IntArray) -> None:
        """Job ``job`` started at ``t`` on ``nodes`` × ``counts`` units."""
        self._start[job] = t
        self.alloc_nodes[job] = nodes.astype(np.int32)
        self.alloc_counts[job] = counts.astype(np.int32)

    def end(self, job: int, t: int) -> None:
        """Job ``job`` ended (completed or killed) at ``t``."""
        if self._end[job] >= 0:
            raise DispatchlabError(f"job {int(self.workload.job_id[job])} ended twice")
        self._end[job] = t

    def plan(self, job: int, t: int) -> None:
        """The dispatcher's latest planned start for ``job``."""
        self.planned[job] = t

    def reject(self, job: int, reason: str) -> None:
        """Job ``job`` will never run, for ``reason``."""
        self.rejected[job] = reason

    def finish(self, sim_seconds: float, dispatcher_stats: dict[str, Any]) -> None:
        """Close the run: check every job is accounted for, store overall figures."""
        self.sim_seconds = sim_seconds
        self.dispatcher_stats = dispatcher_stats
        self.start_time = np.array(self._start, dtype=np.int64)
        self.end_time = np.array(self._end, dtype=np.int64)
        ran = self.start_time >= 0
        rejected = np.zeros(len(ran), dtype=bool)
        if self.rejected:
            rejected[list(self.rejected)] = True
        missing = ~ran & ~rejected
        if missing.any():
            j = int(np.flatnonzero(missing)[0])
            raise DispatchlabError(
                f"{int(missing.sum())} job(s) never started (first: job "
                f"{int(self.workload.job_id[j])})"
            )
        unfinished = ran & (self.end_time < 0)
        if unfinished.any():
            j = int(np.flatnonzero(unfinished)[0])
            raise DispatchlabError(f"job {int(self.workload.job_id[j])} started but never ended")
