"""Replaying a plan in the engine: start each job at its planned time on its planned nodes.

Rules (docs/planning.md, "Replay"):

- A job starts at its planned start, never before (and never before its submission: the
  engine only hands over submitted jobs). A job that ends before its planned end frees its
  nodes at once, but later planned jobs still wait for their planned starts — unless
  ``compress`` is on: then a queued planned job starts as soon as its planned nodes are
  free, provided its planned duration ends before any other not-yet-started job's planned
  start on those nodes (it cannot delay anyone's plan).
- **Fallback** when a due job's planned nodes are not free (a job before it overran its
  planned end, or a plan made from wall-times meets longer real runs): the job goes on any
  nodes free now, first-fit in node order; if the machine has no room, it waits and is
  retried at the next decision point (every job end is one), in planned-start order ahead
  of later planned jobs. Counted in :meth:`PlanReplay.stats`.
- Jobs the plan does not cover start first-fit, in submission order, after the planned
  ones of the same instant (counted as ``unplanned``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from dispatchlab.arrays import IntArray
from dispatchlab.engine.decisions import Decision, Start
from dispatchlab.engine.state import SystemView
from dispatchlab.platform.platform import units_fitting


@dataclass(frozen=True, slots=True)
class Planned:
    """One job's planned start (s), nodes, units per node and planned duration (s)."""

    start: int
    nodes: IntArray
    counts: IntArray
    duration: int


class PlanReplay:
    """Start the planned jobs of ``plan`` (engine row → :class:`Planned`) on time."""

    def __init__(self, compress: bool = False):
        self.compress = compress
        self.plan: dict[int, Planned] = {}
        self.pending: dict[int, Planned] = {}  # planned and not started yet
        self.counts = {"on_plan": 0, "moved": 0, "waited": 0, "compressed": 0,
                       "unplanned": 0, "late_s": 0}

    def add(self, entries: Mapping[int, Planned]) -> None:
        """Add (or replace) planned jobs."""
        self.plan.update(entries)
        self.pending.update(entries)

    def next_start(self, view: SystemView) -> int | None:
        """The earliest planned start after now among queued jobs (for a wake-up)."""
        later = [self.plan[j].start for j in view.queue if j in self.plan
                 and self.plan[j].start > view.now]
        return min(later) if later else None

    def decide(self, view: SystemView) -> list[Decision]:
        """Starts for now (module doc)."""
        now = view.now
        free = view.free.copy()
        out: list[Decision] = []
        queued = list(view.queue)
        due = sorted((self.plan[j].start, j) for j in queued
                     if j in self.plan and self.plan[j].start <= now)
        stuck: list[int] = []
        for _, j in due:
            p = self.plan[j]
            req = view.req[j]
            need = p.counts[:, None] * req[None, :]
            if (free[p.nodes] >= need).all():
                free[p.nodes] -= need
                out.append(Start(j, p.nodes, p.counts))
                self.pending.pop(j, None)
                self.counts["on_plan"] += 1
                self.counts["late_s"] += now - p.start
                continue
            start = _first_fit(view, free, j, int(p.counts.sum()))
            if start is None:
                self.counts["waited"] += 1
                stuck.append(j)
                continue
            out.append(start)
            self.pending.pop(j, None)
            self.counts["moved"] += 1
            self.counts["late_s"] += now - p.start
        if self.compress:
            out.extend(self._compressed(view, free, queued, stuck))
        for j in queued:
            if j in self.plan:
                continue
            start = _first_fit(view, free, j, int(view.jobs.units[j]))
            if start is not None:
                out.append(start)
                self.counts["unplanned"] += 1
        return out

    def _compressed(self, view: SystemView, free: IntArray, queued: list[int],
                    stuck: list[int]) -> list[Decision]:
        """Early starts that cannot delay any other job's plan — queued or still to be
        submitted (due jobs still waiting count as planned now)."""
        now = view.now
        later = sorted((self.plan[j].start, j) for j in queued
                       if j in self.plan and self.plan[j].start > now)
        if not later:
            return []
        waiting = [(now, j) for j in stuck] + sorted(
            (p.start, j) for j, p in self.pending.items() if p.start > now)
        big = np.iinfo(np.int64).max
        n_nodes = free.shape[0]
        # per node, the earliest planned start among waiting jobs, its job, and the second
        first = np.full(n_nodes, big, dtype=np.int64)
        owner = np.full(n_nodes, -1, dtype=np.int64)
        second = np.full(n_nodes, big, dtype=np.int64)
        for s, j in waiting:  # ascending starts: the first owner of a node is its earliest
            for node in self.plan[j].nodes:
                if owner[node] < 0:
                    first[node], owner[node] = s, j
                elif second[node] == big and owner[node] != j:
                    second[node] = s
        out: list[Decision] = []
        for _, j in later:
            p = self.plan[j]
            nodes = p.nodes
            others = np.where(owner[nodes] == j, second[nodes], first[nodes])
            limit = int(others.min())
            need = p.counts[:, None] * view.req[j][None, :]
            if now + p.duration <= limit and (free[nodes] >= need).all():
                free[nodes] -= need
                out.append(Start(j, nodes, p.counts))
                self.pending.pop(j, None)
                self.counts["compressed"] += 1
                self.counts["on_plan"] += 1
        return out

    def stats(self) -> dict[str, int]:
        """How the replay went: jobs started on plan, moved to other nodes, waits, early
        (compressed) starts, unplanned jobs, total lateness (s) against the plan."""
        return dict(self.counts)


def _first_fit(view: SystemView, free: IntArray, j: int, units: int) -> Start | None:
    """``units`` of job ``j`` on the lowest nodes with room now, taken from ``free``."""
    req = view.req[j]
    fit = np.minimum(units_fitting(free, req), units)
    fit = np.where(view.alive, fit, 0)
    if int(fit.sum()) < units:
        return None
    before = np.cumsum(fit) - fit
    counts = np.clip(units - before, 0, fit)
    nodes = np.flatnonzero(counts).astype(np.int64)
    counts = counts[nodes].astype(np.int64)
    free[nodes] -= counts[:, None] * req[None, :]
    return Start(j, nodes, counts)
