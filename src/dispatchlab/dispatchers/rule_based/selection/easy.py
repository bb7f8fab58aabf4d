"""EASY backfilling: protect the first waiting job, fill holes with the others.

Textbook rule (Lifka 1995; Mu'alem & Feitelson 2001). Jobs start in priority order while
they fit. The first that does not (the *head*) gets a reservation: the earliest time it
fits if running jobs end at their expected ends (the *shadow* time), on resources chosen
then; what else is free at the shadow time is *extra*. A later job starts now iff it fits
now and either ends by the shadow time or uses only extra resources, so the head's start
never moves later — given that jobs end no later than expected (true for requested times,
which the engine enforces by killing).

The reservation is kept between calls while nothing but submissions happened and the head
is the same job: it cannot change then. Each reservation is also returned as a
:class:`~dispatchlab.engine.decisions.Plan` for the head, when it changes.
"""

from __future__ import annotations

import numpy as np

from dispatchlab.dispatchers.machine import NEVER, Machine, SlotMachine
from dispatchlab.dispatchers.rule_based.selection.base import Backfilling, check_depth
from dispatchlab.dispatchers.rule_based.selection.queue_index import BackfillIndex
from dispatchlab.engine.decisions import Decision, Plan, Start
from dispatchlab.engine.events import Events
from dispatchlab.engine.state import SystemView

#: Queued jobs behind the head from which the backfill scan jumps with a unit index.
_INDEX_FROM = 256


class Easy(Backfilling):
    """EASY backfilling; ``depth`` limits backfilling to the first ``depth`` queued jobs
    counted from the head (PBS-style ``backfill depth``)."""

    name = "easy"

    def __init__(self, depth: int | None = None) -> None:
        self.depth = check_depth(depth)
        self._head = -1
        self._shadow = -1
        self._planned: tuple[int, int] = (-1, -1)
        self._backfilled = 0
        self._index: BackfillIndex | None = None
        self._unit_floor = -1.0
        #: (set by the policy) the order passed to :meth:`select` is the queue by job index
        self.by_index = False

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """Forget the previous run's reservation and queue index."""
        self._index = None
        self._unit_floor = -1.0  # computed by the first backfill scan on unit slots
        self._head = -1
        self._shadow = -1
        self._planned = (-1, -1)
        self._backfilled = 0

    def run_stats(self) -> dict[str, int]:
        """How many jobs started ahead of a waiting head."""
        return {"backfilled": self._backfilled}

    def select(
        self, view: SystemView, events: Events, order: list[int], machine: Machine
    ) -> list[Decision]:
        """Start the startable prefix, reserve for the head, backfill behind it."""
        self._sync_index(view, events, order, machine)
        out = super().select(view, events, order, machine)
        index = self._index
        if index is not None:
            for d in out:
                if type(d) is Start:
                    index.drop(d.job)
        return out

    def behind(self, view: SystemView, events: Events, order: list[int], machine: Machine,
               i: int, out: list[Decision]) -> None:
        """Reserve for the waiting head ``order[i]``, backfill behind it."""
        n = len(order)
        head = order[i]
        now = view.now
        first = i + 1
        if self._arrivals_only(view, events, machine, head, i):
            first = max(first, n - len(events.submitted))
        shadow = self._reserve_head(view, events, machine, head, i)
        if self._planned != (head, shadow) and shadow < NEVER:
            self._planned = (head, shadow)
            out.append(Plan(head, shadow))
        stop = n if self.depth is None else min(n, i + self.depth)
        before = len(out)
        if type(machine) is SlotMachine and type(self)._beside_allowed is Easy._beside_allowed:
            if self._unit_floor < 0:
                self._unit_floor = unit_power_floor(view)
            index = self._index
            if index is not None and self.depth is None and view.rules is None:
                if first < n:
                    self._backfill_indexed(index, order[first], now, shadow, machine, out)
            else:
                self._backfill_slots(order, first, stop, now, shadow, machine, out)
        else:
            estimate = machine.estimator.estimate
            for k in range(i + 1, stop):
                j = order[k]
                if now + estimate(j) <= shadow:
                    if machine.fits(j):
                        out.append(machine.start(j))
                    else:
                        continue
                elif machine.fits_beside(j) and self._beside_allowed(view, machine, j):
                    out.append(machine.start_beside(j))
                else:
                    continue
                if not machine.any_free():
                    break
        self._backfilled += len(out) - before

    def _backfill_slots(self, order: list[int], first: int, stop: int, now: int, shadow: int,
                        machine: SlotMachine, out: list[Decision]) -> None:
        """The backfill scan on unit slots, where a job fits only if its units are free
        and, under a power budget, the least its units draw fits what is left: a job asking
        more is passed over at once (one comparison), the others are checked and start as
        in the general scan (by the shadow time, or on the extra slots)."""
        units, estimate = machine.units, machine.estimator.estimate
        floor = self._unit_floor
        limit = self._limit(machine, floor)
        # without a budget a job within the limit (the free slots) fits: no call to ask
        budget = machine.view.budget is not None
        for k in range(first, stop):
            j = order[k]
            u = units[j]
            if u > limit:
                continue
            if now + estimate(j) <= shadow:
                if budget and not machine.fits(j):
                    continue
                out.append(machine.start(j))
            elif u <= machine.extra and (not budget or machine.fits(j)):
                out.append(machine.start_beside(j))
            else:
                continue
            if machine.free <= 0:
                break
            limit = self._limit(machine, floor)

    def _backfill_indexed(self, index: BackfillIndex, first: int, now: int, shadow: int,
                          machine: SlotMachine, out: list[Decision]) -> None:
        """The same scan over a queue kept by job index, from job ``first`` on, jumping with
        ``index`` from one job that may start (its units are free and, under a power
        budget, its units' least power fits what is left; it ends by the shadow time or
        fits the extra slots) to the next: the jobs skipped could not start."""
        estimate = machine.estimator.estimate
        floor = self._unit_floor
        limit = self._limit(machine, floor)
        within = shadow - now
        j = index.next_candidate(first, limit, within, machine.extra)
        while j >= 0:
            if estimate(j) <= within:
                started = machine.fits(j)
                if started:
                    out.append(machine.start(j))
            else:
                started = machine.units[j] <= machine.extra and machine.fits(j)
                if started:
                    out.append(machine.start_beside(j))
            if started:
                if machine.free <= 0:
                    break
                limit = self._limit(machine, floor)
            j = index.next_candidate(j + 1, limit, within, machine.extra)

    @staticmethod
    def _limit(machine: SlotMachine, floor: float) -> int:
        """The most units a job may ask and still possibly start now: the free slots and,
        with a per-unit power floor, what the power left pays for (rounded up)."""
        if floor <= 0:
            return machine.free
        left = machine.workspace().power_left
        if left == float("inf"):
            return machine.free
        return min(machine.free, int((left + 1e-6) * (1 + 1e-9) / floor) + 1)

    def _sync_index(self, view: SystemView, events: Events, order: list[int],
                    machine: Machine) -> None:
        """Keep the unit index of the queue while the queue is long (built when it reaches
        :data:`_INDEX_FROM` jobs, dropped below half that); brought up to date with the
        jobs that arrived or came back (started jobs leave it after each call), rebuilt if
        it lost track."""
        if not self.by_index or self.depth is not None or view.rules is not None \
                or type(machine) is not SlotMachine or machine.learns \
                or type(self)._beside_allowed is not Easy._beside_allowed:
            self._index = None
            return
        behind = len(order)
        index = self._index
        if index is None:
            if behind < _INDEX_FROM:
                return
            self._index = index = BackfillIndex(view.jobs.n_jobs)
            index.known = -1
        elif behind < _INDEX_FROM // 2:
            self._index = None
            return
        units, estimate = machine.units, machine.estimator.estimate
        known = view.jobs.known
        if index.known >= 0:
            queued = view.queue
            for j in range(index.known, known):
                if j in queued:
                    index.put(j, units[j], estimate(j))
            for j in events.requeued:
                index.put(j, units[j], estimate(j))
        index.known = known
        if index.count != len(order):  # new, or calls it did not see re-queued jobs
            fresh = BackfillIndex(view.jobs.n_jobs)
            for j in order:
                fresh.put(j, units[j], estimate(j))
            fresh.known = known
            self._index = fresh

    def _arrivals_only(self, view: SystemView, events: Events, machine: SlotMachine | Machine,
                       head: int, position: int) -> bool:
        """True when only arrivals happened since the previous call, which scanned the
        queue behind this same waiting head on unit slots: the jobs it scanned still cannot
        start (nothing was freed, the reservation and the extra slots are the same, time
        only moved on), so only the arrivals — the tail of a queue kept by arrival — need
        the scan. Not under a depth limit: starts behind the head slide later jobs into
        its window."""
        return (position == 0 and head == self._head and self._shadow > view.now
                and self.by_index and self.depth is None  # (a depth window slides on)
                and bool(events.submitted) and view.rules is None
                and type(machine) is SlotMachine and not machine.learns
                and not (events.finished or events.aborted or events.requeued
                         or events.withdrawn or events.nodes or events.scenario
                         or events.woken))

    def _reserve_head(self, view: SystemView, events: Events, machine: Machine, head: int,
                      position: int) -> int:
        """The head's shadow time (its reservation made on ``machine``), kept from the
        previous call while it cannot have changed."""
        if (position or events.finished or events.woken or events.aborted or events.nodes
                or head != self._head or self._shadow <= view.now):
            self._head = head
            self._shadow = machine.reserve(head)
        return self._shadow

    def _beside_allowed(self, view: SystemView, machine: Machine, job: int) -> bool:
        """Whether ``job``, which fits on the extra capacity, may start there now."""
        return True


def unit_power_floor(view: SystemView) -> float:
    """The least power one unit adds wherever it starts under the run's power budget (the
    engine's node model), 0 without a budget or such a bound."""
    model = view.power_model if view.budget is not None else None
    floor = getattr(model, "unit_floor", None)
    if floor is None or view.unit_request is None:
        return 0.0
    return float(floor(view.unit_request))
