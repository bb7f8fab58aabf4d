"""Backfilling around the top jobs: PBS Professional's ``backfill_depth`` meaning.

PBS Professional (Administrator's Guide, "Using Backfilling" and "Using Strict Ordering";
scheduler parameters ``strict_ordering``, ``backfill`` and the server/queue attribute
``backfill_depth``): with strict ordering the scheduler walks the queue in priority order
and runs each job that can run now. A job that cannot run becomes a *top job* and gets a
reservation (PBS "calendars" it) at the earliest time it fits; ``backfill_depth`` is how
many top jobs get one (PBS's default is 1). *Every* later queued job may still run now —
it is backfilled — if it fits now without delaying any top job's reservation; jobs past the
last top job that cannot run now just wait. Depth 1 is EASY backfilling (the same starts
on interchangeable slots, tested; on node matrices the reservation's nodes may differ);
depth ``None`` (every waiting job a top job) is conservative backfilling whose
reservations are recomputed from scratch each cycle, as PBS does.

The other reading of "backfilling limited to the first N jobs" — only the first N queued
jobs are looked at — is :class:`~dispatchlab.dispatchers.rule_based.selection.easy.Easy` with
``depth=N`` (presets ``pbs-fifo-window`` / ``pbs-walltime-window``).

Each cycle builds a resource-time availability holding the running jobs until their expected
ends (an overdue one until ``now + 1``); the top jobs' reservations are added in priority
order, lazily — only when a later job that fits now must be checked against them. A
job starts now iff its earliest fit in that availability is now, on the placement the availability
found (so on no node a reservation holds). Every computed reservation is returned as a
:class:`~dispatchlab.engine.decisions.Plan` when it changed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dispatchlab.dispatchers.availability import Availability
from dispatchlab.dispatchers.machine import Machine
from dispatchlab.dispatchers.rule_based.selection.base import Backfilling, check_depth
from dispatchlab.engine.decisions import Decision, Plan
from dispatchlab.engine.events import Events
from dispatchlab.engine.state import SystemView


class TopJobs(Backfilling):
    """Strict ordering with backfilling around the first ``depth`` jobs that cannot run
    (PBS ``backfill_depth``); every other queued job may backfill."""

    name = "top-jobs"

    def __init__(self, depth: int | None = None) -> None:
        self.depth = check_depth(depth)
        self._planned: dict[int, int] = {}
        self._backfilled = 0
        self._max_tops = 0

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """Forget the previous run's reservations and counts."""
        self._planned = {}
        self._backfilled = 0
        self._max_tops = 0

    def run_stats(self) -> dict[str, int]:
        """Jobs started past a waiting top job; most top jobs reserved in one cycle."""
        return {"backfilled": self._backfilled, "max_top_jobs": self._max_tops}

    def behind(self, view: SystemView, events: Events, order: list[int], machine: Machine,
               i: int, out: list[Decision]) -> None:
        """Backfill every job behind the waiting ``order[i]`` that delays no top job."""
        n = len(order)
        now = view.now
        estimate = machine.estimator.estimate
        avail = self._running_availability(machine, now)
        limit = n if self.depth is None else self.depth
        pending = [order[i]]  # top jobs whose reservation is not in the availability yet
        tops = 1
        self._reserve(avail, pending, estimate, out)
        before = len(out)
        for k in range(i + 1, n):
            j = order[k]
            if machine.fits(j):
                self._reserve(avail, pending, estimate, out)
                dur = estimate(j)
                found = avail.earliest(j, dur, now + 1)
                if found is not None and machine.power_allows(j, found[1]):
                    out.append(machine.start_reserved(j, found[1]))
                    avail.take(j, now, now + dur, found[1])
                    if not machine.any_free():
                        break
                    continue
            if tops < limit:
                pending.append(j)
                tops += 1
            elif not machine.any_free():
                break
        self._backfilled += len(out) - before - sum(isinstance(d, Plan) for d in out[before:])
        self._max_tops = max(self._max_tops, tops)

    @staticmethod
    def _running_availability(machine: Machine, now: int) -> Availability:
        """The usable nodes with every running job held until its expected end."""
        avail = machine.availability()
        avail.advance(now)
        for end, job, part in machine.running_parts():
            avail.take(job, now, max(end, now + 1), part)
        return avail

    def _reserve(self, avail: Availability, pending: list[int], estimate: Any,
                 out: list[Decision]) -> None:
        """Put the pending top jobs' reservations in the availability, in priority order."""
        for j in pending:
            dur = estimate(j)
            found = avail.earliest(j, dur)
            if found is None:
                continue  # too large for the usable nodes now: nothing to protect
            t, held = found
            avail.take(j, t, t + dur, held)
            if self._planned.get(j) != t:
                self._planned[j] = t
                out.append(Plan(j, t))
        pending.clear()
