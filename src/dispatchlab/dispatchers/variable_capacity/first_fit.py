"""FirstFitAware and FirstFitUnaware (Robert et al., slides "FirstFitAware").

Greedy list scheduling, no reservations: whenever a job arrives, ends or machines change,
the queue is scanned by increasing release date (a re-queued job keeps its original one)
and each job that fits now goes to the smallest-index alive machine with enough free
cores. *Aware*: the highest indices leave first (the engine's risk order), so jobs pile on
the safe low indices. *Unaware*: the leaving (and returning) machines are drawn at random
with the run's generator.

Equivalent scan: a job fits somewhere iff the largest free count of a machine is at least
its cores, so the scan takes, among the per-size queues whose size fits the largest free
count, the head with the smallest ``(release, job)``, until none fits.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from dispatchlab.dispatchers.base import BaseDispatcher
from dispatchlab.dispatchers.variable_capacity.common import (
    CAPABILITIES,
    WITH_FAMILY,
    check_job,
    chosen_nodes,
    cores_column,
)
from dispatchlab.engine.decisions import Decision, Start
from dispatchlab.engine.events import Events
from dispatchlab.engine.state import SystemView
from dispatchlab.workload.workload import Workload

if TYPE_CHECKING:
    from dispatchlab.engine.compiled.plan import CompiledPlan

_ONE = np.ones(1, dtype=np.int64)


class FirstFitVC(BaseDispatcher):
    """First-fit on machines in index order; ``aware`` picks which machines leave."""

    capabilities = CAPABILITIES
    described_attributes = WITH_FAMILY

    def __init__(self, aware: bool = True):
        self.aware = aware
        self.name = "ff-aware" if aware else "ff-unaware"

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """Per-run state: per-size queues."""
        self.rng = rng
        self._ridx = cores_column(view)
        self._cores: dict[int, int] = {}
        self._heaps: dict[int, list[tuple[int, int]]] = {}
        self._starts = 0

    def choose_nodes(self, view: SystemView, candidates: np.ndarray, count: int,
                     leaving: bool) -> list[int]:
        """Aware: highest indices leave, lowest come back; unaware: at random."""
        return chosen_nodes(self.aware, self.rng, candidates, count, leaving)

    def compiled_plan(self, workload: Workload, view: SystemView) -> CompiledPlan | str:
        """Its compiled loop (:mod:`.compiled`), or why the general loop must run it."""
        from dispatchlab.dispatchers.variable_capacity.compiled.plan import first_fit_plan

        return first_fit_plan(self.aware, workload, view)

    def decide(self, view: SystemView, events: Events) -> Sequence[Decision]:
        """Queue the arrivals and re-queued jobs, then first-fit the queue."""
        submit = view.jobs.submit
        for j in (*events.submitted, *events.requeued):
            c = self._cores.get(j)
            if c is None:
                c = self._cores[j] = check_job(view, j, self._ridx)
            heapq.heappush(self._heaps.setdefault(c, []), (int(submit[j]), j))
        if not (events.submitted or events.requeued or events.left_running or events.nodes):
            return []
        free: list[int] = view.free[:, self._ridx].tolist()
        best = max(free)
        out: list[Decision] = []
        heaps = self._heaps
        while best > 0:
            top: tuple[int, int] | None = None
            size = 0
            for c, h in heaps.items():
                if h and c <= best and (top is None or h[0] < top):
                    top, size = h[0], c
            if top is None:
                break
            heapq.heappop(heaps[size])
            j = top[1]
            node = next(m for m, f in enumerate(free) if f >= size)
            free[node] -= size
            if free[node] + size == best:
                best = max(free)
            out.append(Start(j, np.array([node], dtype=np.int64), _ONE))
        self._starts += len(out)
        return out

    def run_stats(self) -> dict[str, Any]:
        """Starts issued (restarts included)."""
        return {"starts": self._starts}
