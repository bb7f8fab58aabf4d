"""Queue orderings: which queued job a selection scheme looks at first.

An ordering gives every job a score, smallest first; ties always break by submit time,
then job id (the engine's job index follows that order), so runs are reproducible.
*Static* orderings score a job once for the whole run (FIFO, SJF, EDF, …): the queue is
kept sorted incrementally. *Dynamic* ones depend on the current time (WFP3, UNI, slowdown)
and are re-sorted at every decision point.

Notation: ``r`` requested time, ``n`` processors (cores of all units), ``w`` wait so far,
``s`` submit time, ``d`` the dispatcher's duration estimate.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Any

import numpy as np
import numpy.typing as npt

from dispatchlab.engine.state import SystemView
from dispatchlab.errors import ConfigError
from dispatchlab.estimates.base import DurationEstimator
from dispatchlab.platform.platform import CORES

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


class Ordering:
    """Base class. Static orderings implement :meth:`keys`, dynamic ones :meth:`scores`."""

    name = "ordering"
    dynamic = False

    def keys(self, view: SystemView) -> tuple[npt.NDArray[Any], ...]:
        """Per-job sort keys for the whole workload, most significant first."""
        raise NotImplementedError

    def scores(
        self, view: SystemView, jobs: IntArray, est: FloatArray, now: int
    ) -> FloatArray:
        """Scores of queued ``jobs`` at time ``now`` (``est``: their duration estimates)."""
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        """JSON-ready configuration."""
        return {"name": self.name}


def _cores(view: SystemView) -> FloatArray:
    """Processors per job: cores of all units (at least 1)."""
    col = view.platform.resources.index(CORES)
    return np.maximum(view.demand[:, col], 1).astype(np.float64)


class Fifo(Ordering):
    """First come, first served: by submit time."""

    name = "fifo"

    def keys(self, view: SystemView) -> tuple[npt.NDArray[Any], ...]:
        """Submit time."""
        return (view.jobs.submit,)


class ShortestFirst(Ordering):
    """SJF: shortest requested time first."""

    name = "sjf"

    def keys(self, view: SystemView) -> tuple[npt.NDArray[Any], ...]:
        """Requested time."""
        return (view.jobs.walltime,)


class LongestFirst(Ordering):
    """LJF: longest requested time first."""

    name = "ljf"

    def keys(self, view: SystemView) -> tuple[npt.NDArray[Any], ...]:
        """Minus the requested time."""
        return (-view.jobs.walltime,)


class EarliestDeadline(Ordering):
    """EDF: earliest latest-start time ``lst`` first.

    Jobs without a known ``lst`` use ``submit + ewt`` of their queue: the time by which the
    queue promises a start.
    """

    name = "edf"

    def keys(self, view: SystemView) -> tuple[npt.NDArray[Any], ...]:
        """Latest start time."""
        wl = view.jobs
        ewt = np.array([q.ewt for q in wl.queues] or [0], dtype=np.int64)[wl.queue]
        return (np.where(wl.lst >= 0, wl.lst, wl.submit + ewt),)


class ExpectedWait(Ordering):
    """PRB rule: shortest expected wait (queue ``ewt``) first, then the smallest demand.

    Demand is ``r × Σ_res units·req / total`` — request times requested time, each
    resource normalized by the platform total so that MB of memory do not outweigh cores.
    """

    name = "prb"

    def keys(self, view: SystemView) -> tuple[npt.NDArray[Any], ...]:
        """Queue ewt, then demand."""
        wl = view.jobs
        ewt = np.array([q.ewt for q in wl.queues] or [0], dtype=np.int64)[wl.queue]
        total = np.asarray(view.total, dtype=np.float64)
        share = view.demand / np.where(total > 0, total, 1.0)
        return (ewt, share.sum(axis=1) * wl.walltime)


class ResourceOrdering(Ordering):
    """By total requested amount of one resource (e.g. most GPUs first, thesis §4.2.1)."""

    def __init__(self, resource: str, descending: bool = True) -> None:
        self.resource = resource
        self.descending = descending
        self.name = f"{'most' if descending else 'least'}:{resource}"

    def keys(self, view: SystemView) -> tuple[npt.NDArray[Any], ...]:
        """Requested amount of the resource, negated when descending."""
        amount = view.demand[:, view.platform.resource_index(self.resource)]
        return (-amount if self.descending else amount,)


class F1(Ordering):
    """F1 (Carastan-Santos & de Camargo 2017): ``log10(r)·n + 870·log10(s)``.

    ``s`` is clamped to 1 s so the job arriving at time 0 has a finite score.
    """

    name = "f1"

    def keys(self, view: SystemView) -> tuple[npt.NDArray[Any], ...]:
        """The F1 score."""
        wl = view.jobs
        r = np.log10(np.maximum(wl.walltime, 1).astype(np.float64))
        s = np.log10(np.maximum(wl.submit, 1).astype(np.float64))
        return (r * _cores(view) + 870.0 * s,)


class _Dynamic(Ordering):
    dynamic = True

    def keys(self, view: SystemView) -> tuple[npt.NDArray[Any], ...]:
        """Dynamic orderings have no static key."""
        raise TypeError(f"{self.name} is a dynamic ordering")


class Wfp3(_Dynamic):
    """WFP3 (Tang et al. 2009): ``−(w/r)³·n``, long waits relative to size come first."""

    name = "wfp3"

    def scores(
        self, view: SystemView, jobs: IntArray, est: FloatArray, now: int
    ) -> FloatArray:
        """The WFP3 score."""
        wl = view.jobs
        w = (now - wl.submit[jobs]).astype(np.float64)
        r = wl.walltime[jobs].astype(np.float64)
        return np.asarray(-((w / r) ** 3) * _cores(view)[jobs], dtype=np.float64)


class Uni(_Dynamic):
    """UNI (Tang et al. 2009): ``−w/(log2(n)·r)``.

    ``log2(1) = 0`` would divide by zero, so ``n`` is clamped to 2: one-processor jobs rank
    like two-processor ones.
    """

    name = "uni"

    def scores(
        self, view: SystemView, jobs: IntArray, est: FloatArray, now: int
    ) -> FloatArray:
        """The UNI score."""
        wl = view.jobs
        w = (now - wl.submit[jobs]).astype(np.float64)
        r = wl.walltime[jobs].astype(np.float64)
        n = np.maximum(_cores(view)[jobs], 2.0)
        return np.asarray(-w / (np.log2(n) * r), dtype=np.float64)


class Slowdown(_Dynamic):
    """Slowdown priority (Galleguillos et al.): ``(t − q + d)/d``, largest first."""

    name = "slowdown"

    def scores(
        self, view: SystemView, jobs: IntArray, est: FloatArray, now: int
    ) -> FloatArray:
        """Minus the slowdown the job would have if started now."""
        w = (now - view.jobs.submit[jobs]).astype(np.float64)
        return np.asarray(-(w + est) / est, dtype=np.float64)


ORDERINGS: dict[str, type[Ordering]] = {
    "fifo": Fifo,
    "sjf": ShortestFirst,
    "ljf": LongestFirst,
    "edf": EarliestDeadline,
    "prb": ExpectedWait,
    "f1": F1,
    "wfp3": Wfp3,
    "uni": Uni,
    "slowdown": Slowdown,
}


def get_ordering(name: str) -> Ordering:
    """A new ordering by name; ``most:<res>`` / ``least:<res>`` order by a resource."""
    kind, sep, resource = name.partition(":")
    if sep and kind in ("most", "least") and resource:
        return ResourceOrdering(resource, descending=kind == "most")
    try:
        return ORDERINGS[name]()
    except KeyError:
        known = ", ".join([*ORDERINGS, "most:<resource>", "least:<resource>"])
        raise ConfigError(f"unknown ordering '{name}' (known: {known})", field="order") from None


class JobQueue:
    """The queued jobs in priority order, kept up to date with one call per decision point.

    Static orderings rank every job once per run (ties by job index = submit time, then id)
    and keep the queue as a sorted list of ranks: an arrival is one ``bisect``, a start one
    deletion. Dynamic orderings sort the queue at every call.
    """

    __slots__ = ("_jobs", "_ranks", "_rank_of", "ordering")

    def __init__(self, ordering: Ordering) -> None:
        self.ordering = ordering
        self._ranks: list[int] = []
        self._jobs: list[int] = []
        self._rank_of: list[int] = []

    def reset(self, view: SystemView) -> None:
        """Rank all jobs of the run (static orderings)."""
        self._ranks, self._jobs = [], []
        if self.ordering.dynamic:
            self._rank_of = []
            return
        keys = self.ordering.keys(view)
        idx = np.arange(view.jobs.n_jobs)
        if len(keys) == 1 and keys[0] is view.jobs.submit:
            self._rank_of = idx.tolist()  # FIFO: the job index already is the rank
            return
        order = np.lexsort((idx, *reversed(keys)))
        rank = np.empty_like(order)
        rank[order] = idx
        self._rank_of = rank.tolist()

    def add(self, jobs: list[int]) -> None:
        """Newly submitted jobs (static orderings)."""
        if self.ordering.dynamic:
            return
        ranks, order, rank_of = self._ranks, self._jobs, self._rank_of
        for j in jobs:
            r = rank_of[j]
            if not ranks or r > ranks[-1]:
                ranks.append(r)
                order.append(j)
            else:
                k = bisect_left(ranks, r)
                ranks.insert(k, r)
                order.insert(k, j)

    def remove(self, job: int) -> None:
        """A job left the queue (it started)."""
        if self.ordering.dynamic:
            return
        k = bisect_left(self._ranks, self._rank_of[job])
        del self._ranks[k]
        del self._jobs[k]

    def order(self, view: SystemView, est: list[int]) -> list[int]:
        """Queued jobs, highest priority first (do not mutate the returned list)."""
        if not self.ordering.dynamic:
            return self._jobs
        q = view.queue
        if len(q) < 2:
            return list(q)
        jobs = np.fromiter(q, dtype=np.int64, count=len(q))
        d = np.array([est[j] for j in jobs.tolist()], dtype=np.float64)
        score = self.ordering.scores(view, jobs, d, view.now)
        result: list[int] = jobs[np.lexsort((jobs, score))].tolist()
        return result
