"""Queue orderings: which queued job a selection scheme looks at first.

An ordering gives every job a score, smallest first; ties always break by submit time,
then job id (the engine's job index follows that order), so runs are reproducible.
*Static* orderings score a job once, when it arrives (FIFO, SJF, EDF, …): the queue is
kept sorted incrementally. *Dynamic* ones depend on the current time (WFP3, UNI, slowdown)
and are re-sorted at every decision point. Both read only what the view shows of the jobs
submitted so far.

Notation: ``r`` requested time, ``n`` processors (cores of all units), ``w`` wait so far,
``s`` submit time, ``d`` the dispatcher's duration estimate.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Any

import numpy as np
import numpy.typing as npt

from dispatchlab.arrays import FloatArray, IntArray
from dispatchlab.engine.state import SystemView
from dispatchlab.errors import ConfigError
from dispatchlab.estimates.base import DurationEstimator
from dispatchlab.params import Parametrized
from dispatchlab.platform.platform import CORES


class Ordering(Parametrized):
    """Base class. Static orderings implement :meth:`keys`, dynamic ones :meth:`scores`."""

    name = "ordering"
    dynamic = False
    #: True when the only key is the submit time: the job index already is the rank.
    by_arrival = False

    def keys(self, view: SystemView, jobs: IntArray) -> tuple[npt.NDArray[Any], ...]:
        """Sort keys of the (submitted) ``jobs``, most significant first."""
        raise NotImplementedError

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """Per-run preparation; nothing by default."""

    def scores(self, view: SystemView, jobs: IntArray, estimator: DurationEstimator
               ) -> FloatArray:
        """Scores of queued ``jobs`` at ``view.now``."""
        raise NotImplementedError


def _cores(view: SystemView, jobs: IntArray) -> FloatArray:
    """Processors of ``jobs``: cores of all units (at least 1)."""
    col = view.platform.resources.index(CORES)
    return np.maximum(view.demand[jobs, col], 1).astype(np.float64)


class Fifo(Ordering):
    """First come, first served: by submit time."""

    name = "fifo"
    by_arrival = True

    def keys(self, view: SystemView, jobs: IntArray) -> tuple[npt.NDArray[Any], ...]:
        """Submit time."""
        return (view.jobs.submit[jobs],)


class QueuePriority(Ordering):
    """PBS ``by_queue``: highest queue priority first (the platform's queue
    configuration, 0 for queues it does not define), then by submit time."""

    name = "queue"

    def keys(self, view: SystemView, jobs: IntArray) -> tuple[npt.NDArray[Any], ...]:
        """Minus the queue priority, then submit time."""
        configs = view.platform.queues
        prio = np.array([configs[q.name].priority if q.name in configs else 0
                         for q in view.jobs.queues] or [0], dtype=np.int64)
        return (-prio[view.jobs.queue[jobs]], view.jobs.submit[jobs])


class ShortestFirst(Ordering):
    """SJF: shortest requested time first."""

    name = "sjf"

    def keys(self, view: SystemView, jobs: IntArray) -> tuple[npt.NDArray[Any], ...]:
        """Requested time."""
        return (view.jobs.walltime[jobs],)


class LongestFirst(Ordering):
    """LJF: longest requested time first."""

    name = "ljf"

    def keys(self, view: SystemView, jobs: IntArray) -> tuple[npt.NDArray[Any], ...]:
        """Minus the requested time."""
        return (-view.jobs.walltime[jobs],)


class EarliestDeadline(Ordering):
    """EDF: earliest latest-start time ``lst`` first.

    Jobs without a known ``lst`` use ``submit + ewt`` of their queue: the time by which the
    queue promises a start.
    """

    name = "edf"

    def keys(self, view: SystemView, jobs: IntArray) -> tuple[npt.NDArray[Any], ...]:
        """Latest start time."""
        wl = view.jobs
        lst = wl.lst[jobs]
        return (np.where(lst >= 0, lst, wl.submit[jobs] + wl.ewt()[jobs]),)


class ExpectedWait(Ordering):
    """PRB rule: shortest expected wait (queue ``ewt``) first, then the smallest demand.

    Demand is ``r × Σ_res units·req / total`` — request times requested time, each
    resource normalized by the platform total so that MB of memory do not outweigh cores.
    """

    name = "prb"

    def keys(self, view: SystemView, jobs: IntArray) -> tuple[npt.NDArray[Any], ...]:
        """Queue ewt, then demand."""
        wl = view.jobs
        total = np.asarray(view.total, dtype=np.float64)
        share = view.demand[jobs] / np.where(total > 0, total, 1.0)
        return (wl.ewt()[jobs], share.sum(axis=1) * wl.walltime[jobs])


class ResourceOrdering(Ordering):
    """By total requested amount of one resource (e.g. most GPUs first, thesis §4.2.1)."""

    def __init__(self, resource: str, descending: bool = True) -> None:
        self.resource = resource
        self.descending = descending
        self.name = f"{'most' if descending else 'least'}:{resource}"

    def keys(self, view: SystemView, jobs: IntArray) -> tuple[npt.NDArray[Any], ...]:
        """Requested amount of the resource, negated when descending."""
        amount = view.demand[jobs, view.platform.resource_index(self.resource)]
        return (-amount if self.descending else amount,)


class F1(Ordering):
    """F1 (Carastan-Santos & de Camargo 2017): ``log10(r)·n + 870·log10(s)``.

    ``s`` is clamped to 1 s so the job arriving at time 0 has a finite score.
    """

    name = "f1"

    def keys(self, view: SystemView, jobs: IntArray) -> tuple[npt.NDArray[Any], ...]:
        """The F1 score."""
        wl = view.jobs
        r = np.log10(np.maximum(wl.walltime[jobs], 1).astype(np.float64))
        s = np.log10(np.maximum(wl.submit[jobs], 1).astype(np.float64))
        return (r * _cores(view, jobs) + 870.0 * s,)


class ProfitPerCost(Ordering):
    """Profit rule (Bridi's thesis §6.3): profit of the job / its cost, decreasing.

    A job earns ``K1 · n · d`` and costs ``K2 · P · d · PUE`` (``P`` its power): the ratio
    ``K1 · n / (K2 · P · PUE)`` does not depend on the duration, the prices or the (machine-
    wide) PUE, so the rule is the smallest power per core ``P / n`` first; jobs with no
    power figure come last.
    """

    name = "profit"

    def keys(self, view: SystemView, jobs: IntArray) -> tuple[npt.NDArray[Any], ...]:
        """Power per core (W), unknown as +inf."""
        per_core = view.jobs.power[jobs] / _cores(view, jobs)
        return (np.where(np.isfinite(per_core), per_core, np.inf),)


class _Dynamic(Ordering):
    """Scores from the wait so far ``w``, requested time ``r`` and processors ``n``."""

    dynamic = True

    def keys(self, view: SystemView, jobs: IntArray) -> tuple[npt.NDArray[Any], ...]:
        """Dynamic orderings have no static key."""
        raise TypeError(f"{self.name} is a dynamic ordering")


def _wait_r_n(view: SystemView, jobs: IntArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Wait so far, requested time and processors of ``jobs``."""
    w = (view.now - view.jobs.submit[jobs]).astype(np.float64)
    return (w, *requested_and_cores(view, jobs))


def requested_and_cores(view: SystemView, jobs: IntArray) -> tuple[FloatArray, FloatArray]:
    """Requested time ``r`` and processors ``n`` of ``jobs`` as the dynamic scores read
    them (floats)."""
    return view.jobs.walltime[jobs].astype(np.float64), _cores(view, jobs)


class Wfp3(_Dynamic):
    """WFP3 (Tang et al. 2009): ``−(w/r)³·n``, long waits relative to size come first.

    The cube is two products, not numpy's ``** 3``: numpy's ``pow`` (a SIMD one on some
    processors) rounds differently from one processor to the next and from the compiled
    loops' in ~5 % of values, and not even alike for ``x`` and ``2x``, so ties such as
    ``(2x)³·n = x³·8n`` broke by a last bit; products are exact to the IEEE rule everywhere.
    """

    name = "wfp3"

    def scores(self, view: SystemView, jobs: IntArray, estimator: DurationEstimator
               ) -> FloatArray:
        """The WFP3 score."""
        w, r, n = _wait_r_n(view, jobs)
        x = w / r
        return np.asarray(-(x * x * x) * n, dtype=np.float64)


class Uni(_Dynamic):
    """UNI (Tang et al. 2009): ``−w/(log2(n)·r)``.

    ``log2(1) = 0`` would divide by zero, so ``n`` is clamped to 2: one-processor jobs rank
    like two-processor ones.
    """

    name = "uni"

    def scores(self, view: SystemView, jobs: IntArray, estimator: DurationEstimator
               ) -> FloatArray:
        """The UNI score."""
        w, r, n = _wait_r_n(view, jobs)
        return np.asarray(-w / uni_divisor(r, n), dtype=np.float64)


def uni_divisor(r: FloatArray, n: FloatArray) -> FloatArray:
    """UNI's divisor ``log2(max(n, 2))·r`` (requested times ``r``, processors ``n``): it
    does not change while a job waits, so the compiled loops take it per job from here."""
    return np.asarray(np.log2(np.maximum(n, 2.0)) * r, dtype=np.float64)


class Slowdown(_Dynamic):
    """Slowdown priority (Galleguillos et al.): ``(t − q + d)/d``, largest first.

    ``d`` is the dispatcher's duration estimate (the requested time by default).
    """

    name = "slowdown"

    def scores(self, view: SystemView, jobs: IntArray, estimator: DurationEstimator
               ) -> FloatArray:
        """Minus the slowdown each job would have if started now."""
        estimate = estimator.estimate
        d = np.array([estimate(j) for j in jobs.tolist()], dtype=np.float64)
        w = (view.now - view.jobs.submit[jobs]).astype(np.float64)
        return np.asarray(-(w + d) / d, dtype=np.float64)


#: The orderings by name, each under the ``name`` its class declares.
ORDERINGS: dict[str, type[Ordering]] = {o.name: o for o in (
    Fifo, ShortestFirst, LongestFirst, EarliestDeadline, ExpectedWait, F1, QueuePriority, Wfp3,
    Uni, Slowdown, ProfitPerCost)}


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

    Static orderings key each job when it arrives (ties by job index = submit time, then
    id) and keep the queue as a sorted list of keys: an arrival is one ``bisect``, a start
    one deletion. Dynamic orderings sort the queue at every call.
    """

    __slots__ = ("_jobs", "_key_of", "_keys", "ordering")

    def __init__(self, ordering: Ordering) -> None:
        self.ordering = ordering
        self._keys: list[Any] = []
        self._jobs: list[int] = []
        self._key_of: dict[int, Any] = {}

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """An empty queue; the ordering's own preparation."""
        self._keys, self._jobs, self._key_of = [], [], {}
        self.ordering.reset(view, rng)

    def add(self, view: SystemView, jobs: list[int]) -> None:
        """Newly submitted (or requeued) jobs."""
        if self.ordering.dynamic or not jobs:
            return
        if self.ordering.by_arrival:
            keys: list[Any] = jobs
        else:
            cols = [k.tolist() for k in self.ordering.keys(view, np.asarray(jobs, np.int64))]
            keys = list(zip(*cols, jobs, strict=True))
        ks, order, key_of = self._keys, self._jobs, self._key_of
        for key, j in zip(keys, jobs, strict=True):
            key_of[j] = key
            if not ks or key > ks[-1]:
                ks.append(key)
                order.append(j)
            else:
                k = bisect_left(ks, key)
                ks.insert(k, key)
                order.insert(k, j)

    def remove(self, job: int) -> None:
        """A job left the queue (it started)."""
        if self.ordering.dynamic:
            return
        k = bisect_left(self._keys, self._key_of.pop(job))
        del self._keys[k]
        del self._jobs[k]

    def order(self, view: SystemView, estimator: DurationEstimator) -> list[int]:
        """Queued jobs, highest priority first (do not mutate the returned list)."""
        if not self.ordering.dynamic:
            return self._jobs
        q = view.queue
        if len(q) < 2:
            return list(q)
        jobs = np.fromiter(q, dtype=np.int64, count=len(q))
        score = self.ordering.scores(view, jobs, estimator)
        result: list[int] = jobs[np.lexsort((jobs, score))].tolist()
        return result
