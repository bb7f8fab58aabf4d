"""Records what happened during a run: a segment log, node states, samples, overheads.

A *segment* is one stretch of a job running on one set of nodes: ``(job, t0, t1, nodes,
counts, outcome)``; one job's segments are logged in the order they ran. A rigid job that
runs once has one segment; a job aborted by a node leaving, requeued, or reconfigured has
several. Node state changes are logged as ``(time, node, state)``. Everything else —
per-job table, audit, utilization, energy, goodput — is computed from these logs.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

import numpy as np
import numpy.typing as npt

from dispatchlab.arrays import IntArray, one_of, with_zero
from dispatchlab.engine.placements import Placements, job_placements
from dispatchlab.errors import DispatchlabError
from dispatchlab.platform.platform import Platform
from dispatchlab.workload.workload import Workload

Int32Array = npt.NDArray[np.int32]

#: Segment outcomes.
COMPLETED, KILLED, ABORTED, RECONFIGURED, PREEMPTED, CANCELLED = 0, 1, 2, 3, 4, 5
OUTCOMES = ("completed", "killed", "aborted", "reconfigured", "preempted", "cancelled")
#: Outcomes after which the job does not run again.
FINAL = (COMPLETED, KILLED, CANCELLED)


@dataclass
class Segments:
    """The segment log as arrays, in the order segments started.

    Segment ``k`` is job ``job[k]`` running over ``[t0[k], t1[k])`` on
    ``nodes[offsets[k]:offsets[k+1]]`` with ``counts[...]`` units each, ended by
    ``outcome[k]``; ``lost[k]`` is the wall time of its work that was lost (aborted or
    preempted without a checkpoint keeping it).
    """

    job: IntArray
    t0: IntArray
    t1: IntArray
    outcome: npt.NDArray[np.int8]
    lost: IntArray
    offsets: IntArray
    nodes: Int32Array
    counts: Int32Array
    power: npt.NDArray[np.float64] | None = None  # W drawn, when the run had a budget

    def __len__(self) -> int:
        return len(self.job)

    @property
    def sizes(self) -> IntArray:
        """Nodes per segment."""
        return np.diff(self.offsets)

    @classmethod
    def empty(cls) -> Segments:
        """No segment at all."""
        z = np.empty(0, np.int64)
        return cls(z, z, z, np.empty(0, np.int8), z, np.zeros(1, np.int64),
                   np.empty(0, np.int32), np.empty(0, np.int32))


class Recorder:
    """Append-only log of one run; :mod:`dispatchlab.metrics` turns it into tables."""

    def __init__(self, workload: Workload, platform: Platform, req: IntArray):
        n = workload.n_jobs
        self.workload = workload
        self.platform = platform
        self.req = req  # per-unit requests over the platform's resources (engine's mapping)
        self.walltime_kill = True
        # open log (lists while running; arrays after finish()): one tuple per segment opened
        # (job, t0, nodes, counts), one per segment closed (its index, t1, outcome, lost)
        self._opened: list[tuple[int, int, IntArray, IntArray]] = []
        self._closed: list[tuple[int, int, int, int]] = []
        self._power: list[float] = []
        self._open: dict[int, int] = {}
        self.segments = Segments.empty()
        self.node_log = array("q")  # flat (time, node, state) triples
        self.planned = np.full(n, -1, dtype=np.int64)
        self.rejected: dict[int, str] = {}
        # per job, filled by finish(): first start, final end (-1 = never), final segment
        self.start_time = np.empty(0, dtype=np.int64)
        self.end_time = np.empty(0, dtype=np.int64)
        self.final_seg = np.empty(0, dtype=np.int64)
        self.last_seg = np.empty(0, dtype=np.int64)
        # appended by the engine's loop directly (hot path): time and duration of each
        # dispatcher call; per decision point, flat: time, queue length, running jobs,
        # free and alive capacity per resource (several rows at one time: the last counts)
        self.decision_at = array("q")
        self.decision_cpu = array("d")
        self.sample_width = 3 + 2 * len(platform.resources)  # … then alive capacity
        self.samples = array("q")
        self.power_samples = array("d")  # (time, used W, cap W) per decision point, if any
        self.sim_seconds = 0.0
        self.dispatcher_stats: dict[str, Any] = {}
        self.rules_info: dict[str, Any] | None = None  # what operator rules were enforced
        self.power_mode: dict[str, bool] | None = None  # how the engine counted power
        self.engine_info: dict[str, Any] = {}  # scenario, abort policy, over-cap time, …
        #: resource → (change times, desired shares) of the run's desired profile
        self.desired: dict[str, tuple[Any, Any]] = {}
        self.failed: set[int] = set()  # jobs aborted for good (abort policy "fail")

    # ---- the log ------------------------------------------------------------------------

    def open(self, job: int, t: int, nodes: IntArray, counts: IntArray,
             power: float | None = None) -> None:
        """Job ``job`` starts a segment at ``t`` on ``nodes`` × ``counts`` units (drawing
        ``power`` W when the run has a power budget)."""
        opened = self._opened
        if self._open.setdefault(job, len(opened)) != len(opened):
            raise DispatchlabError(f"job {int(self.workload.job_id[job])} started while "
                                   "running")
        opened.append((job, t, nodes, counts))
        if power is not None:
            self._power.append(power)

    def close(self, job: int, t: int, outcome: int, lost: int = 0) -> None:
        """Job ``job``'s open segment ends at ``t`` with ``outcome``."""
        k = self._open.pop(job, -1)
        if k < 0:
            raise DispatchlabError(f"job {int(self.workload.job_id[job])} ended while not "
                                   "running")
        self._closed.append((k, t, outcome, lost))

    def node_state(self, t: int, node: int, state: int) -> None:
        """Node ``node`` enters ``state`` at ``t``."""
        self.node_log.extend((t, node, state))

    def plan(self, job: int, t: int) -> None:
        """The dispatcher's latest planned start for ``job``."""
        self.planned[job] = t

    def reject(self, job: int, reason: str) -> None:
        """Job ``job`` will never run, for ``reason``."""
        self.rejected[job] = reason

    def running_jobs(self) -> list[int]:
        """Jobs with an open segment."""
        return list(self._open)

    # ---- closing ------------------------------------------------------------------------

    def finish(self, sim_seconds: float, dispatcher_stats: dict[str, Any]) -> None:
        """Close the run: arrays from the log, every job accounted for."""
        self.sim_seconds = sim_seconds
        self.dispatcher_stats = dispatcher_stats
        if self._opened:
            self.segments = self._segments()
        self._opened, self._closed, self._power = [], [], []
        self.index_jobs()

    def _segments(self) -> Segments:
        """The open log as arrays (segments still open have ``t1 = outcome = -1``); columns
        are taken with ``itemgetter`` (unpacking ``zip(*log)`` over 10⁵ tuples costs ~10×
        more)."""
        opened = self._opened
        jobs, t0, nodes, counts = (list(map(itemgetter(c), opened)) for c in range(4))
        n = len(jobs)
        t1 = np.full(n, -1, np.int64)
        out = np.full(n, -1, np.int8)
        lost = np.zeros(n, np.int64)
        if self._closed:
            k, end, outcome, lost_s = np.array(self._closed, np.int64).T
            t1[k], out[k], lost[k] = end, outcome, lost_s
        sizes = np.fromiter(map(len, nodes), np.int64, n)
        return Segments(
            job=np.array(jobs, np.int64), t0=np.array(t0, np.int64), t1=t1, outcome=out,
            lost=lost, offsets=with_zero(np.cumsum(sizes)),
            nodes=np.concatenate(nodes).astype(np.int32, copy=False),
            counts=np.concatenate(counts).astype(np.int32, copy=False),
            power=np.array(self._power) if self._power else None)

    def index_jobs(self) -> None:
        """Per-job first start, final end and final segment from the segment log."""
        n = self.workload.n_jobs
        seg = self.segments
        if self._open:
            j = next(iter(self._open))
            raise DispatchlabError(f"job {int(self.workload.job_id[j])} started but never "
                                   "ended")
        first = np.full(n, -1, np.int64)
        final = np.full(n, -1, np.int64)
        self.last_seg = np.full(n, -1, np.int64)
        if len(seg):
            idx = np.arange(len(seg))
            first_k = np.full(n, -1, np.int64)
            first_k[seg.job[::-1]] = idx[::-1]  # segments are in start order
            last_k = self.last_seg
            last_k[seg.job] = idx
            started = first_k >= 0
            first[started] = seg.t0[first_k[started]]
            last_out = np.full(n, -1, np.int8)
            last_out[started] = seg.outcome[last_k[started]]
            ends = one_of(last_out, FINAL)
            if self.failed:
                gave_up = np.zeros(n, dtype=bool)
                gave_up[list(self.failed)] = True
                ends |= gave_up & (last_out == ABORTED)
            final[ends] = last_k[ends]
        self.start_time = first
        self.final_seg = final
        self.end_time = np.full(n, -1, np.int64)
        ok = final >= 0
        self.end_time[ok] = seg.t1[final[ok]]
        rejected = np.zeros(n, dtype=bool)
        if self.rejected:
            rejected[list(self.rejected)] = True
        missing = ~ok & ~rejected
        if missing.any():
            j = int(np.flatnonzero(missing)[0])
            what = "never started" if first[j] < 0 else "never finished"
            raise DispatchlabError(f"{int(missing.sum())} job(s) {what} (first: job "
                                   f"{int(self.workload.job_id[j])})")

    def _placements(self) -> tuple[Placements, Placements]:
        """Both per-job placement views, built once per segment log."""
        key = (self.segments, self.last_seg)
        cached = getattr(self, "_placements_of", None)
        if cached is None or cached[0][0] is not key[0] or cached[0][1] is not key[1]:
            cached = (key, job_placements(self))
            self._placements_of = cached
        return cached[1]

    @property
    def alloc_nodes(self) -> Placements:
        """Per job the nodes of its last segment (``None``: never ran)."""
        return self._placements()[0]

    @property
    def alloc_counts(self) -> Placements:
        """Per job the unit counts of its last segment (``None``: never ran)."""
        return self._placements()[1]

    def job_outcomes(self) -> npt.NDArray[np.int8]:
        """Per job the outcome of its final segment (``ABORTED``: it failed for good when a
        node left), -1 when it never ran."""
        out = np.full(self.workload.n_jobs, -1, np.int8)
        fin = self.final_seg >= 0
        out[fin] = self.segments.outcome[self.final_seg[fin]]
        return out
