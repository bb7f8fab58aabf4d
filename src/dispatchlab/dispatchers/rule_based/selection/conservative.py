"""Conservative backfilling: every queued job holds a reservation; none is ever delayed.

Running jobs occupy a resource-time availability until their expected end; each queued job (the
first ``depth`` in priority order, or all) holds a reservation at the earliest time it
fits without touching any earlier reservation. A job starts when its reservation is now.

When a job ends before its expected end the availability gains a hole and is *compressed*:
in priority order each reservation is taken out and put back at its earliest fit, which is
never later than where it was — so no reservation ever moves later (Mu'alem & Feitelson
2001). Only a running job outliving its estimate (possible with learned predictors, never
with requested times) can break reservations: it is then held until ``now + 1`` and every
reservation is rebuilt in priority order.

Every new or moved reservation is returned as a
:class:`~dispatchlab.engine.decisions.Plan`. A reservation need not coincide with any job's
end (its job stayed put in a compression while a later one moved away), so the scheme asks
to be woken (:class:`~dispatchlab.engine.decisions.WakeAt`) at the earliest reservation.
"""

from __future__ import annotations

import numpy as np

from dispatchlab.dispatchers.availability import Availability
from dispatchlab.dispatchers.machine import Machine
from dispatchlab.dispatchers.rule_based.selection.base import Selection, check_depth
from dispatchlab.dispatchers.rule_based.selection.reservations import NEVER, Book, Reservations
from dispatchlab.dispatchers.slot_availability import SlotAvailability, SlotReservations
from dispatchlab.engine.decisions import Decision, Plan, WakeAt
from dispatchlab.engine.events import Events
from dispatchlab.engine.state import SystemView


class Conservative(Selection):
    """Conservative backfilling over a resource-time availability."""

    name = "conservative"
    idle_when_full = False  # early ends must still compress the availability
    plans_ahead = True

    def __init__(self, depth: int | None = None) -> None:
        self.depth = check_depth(depth)
        self._availability: Availability | None = None
        self._book: Book | None = None
        self._run: dict[int, tuple[int, object]] = {}  # job → (expected end, placement)
        self._stats = {"compressions": 0, "rebuilds": 0, "moves": 0}
        self._wake = -1

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """No availability yet (the first call builds it from the machine); no reservation."""
        self._availability = None
        self._book = None
        self._run = {}
        self._stats = {"compressions": 0, "rebuilds": 0, "moves": 0}
        self._wake = -1

    def _rebuild_availability(self, machine: Machine, now: int) -> dict[int, int]:
        """An availability of the nodes usable now holding the running jobs until their expected
        ends, and an empty book (first call, or nodes left, came back, were switched off or
        on); returns the dropped reservations' durations, for the rebuild to re-place."""
        old = self._book.drain() if self._book is not None else []
        avail = self._availability = self._new_availability(machine)
        avail.advance(now)
        for j, (end, held) in self._run.items():
            if end > now:
                avail.take(j, now, end, held)
        self._book = SlotReservations(avail) if isinstance(avail, SlotAvailability) \
            else Reservations(avail)
        return {j: end - start for j, start, end, _ in old}

    def _new_availability(self, machine: Machine) -> Availability:
        """An empty availability of the machine (subclasses may keep more in it)."""
        return machine.availability()

    def run_stats(self) -> dict[str, int]:
        """How often the availability was compressed or rebuilt, and reservations moved."""
        return dict(self._stats)

    def select(
        self, view: SystemView, events: Events, order: list[int], machine: Machine
    ) -> list[Decision]:
        """Update the availability, compress or rebuild reservations, start what is due now."""
        now = view.now
        carried: dict[int, int] = {}
        if self._availability is None:
            for end, j in machine.ends:  # jobs running before the first call (warm start)
                self._run.setdefault(j, (end, machine.held(j)))
        if self._availability is None or events.nodes:
            carried = self._rebuild_availability(machine, now)
        avail, book = self._availability, self._book
        assert avail is not None and book is not None
        avail.advance(now)
        run = self._run
        freed = False
        for j in events.left_running:
            ran = run.pop(j, None)
            if ran is None:
                continue  # not started by this scheme (a reservation job or a component)
            end, held = ran
            if end > now:
                avail.give(j, now, end, held)
                freed = True
        out: list[Decision] = []
        estimate = machine.estimator.estimate
        overdue = [j for j in machine.overdue() if j in run]
        if overdue or book.next_due() < now or events.nodes:
            self._rebuild(machine, overdue, order, now, out, carried, bool(events.nodes))
        elif freed:
            self._stats["compressions"] += 1
            moved, starts = book.compress(order, now)
            if moved:
                self._stats["moves"] += len(moved)
                out.extend(map(Plan, moved, starts))
        if self.depth is None:
            new = events.submitted + events.requeued if events.requeued else events.submitted
            if len(new) > 1:  # simultaneous arrivals get their reservations by priority
                arrived = set(new)
                new = [j for j in order if j in arrived]
            for j in new:
                self._place(j, estimate(j), out)
        else:
            for j in order[: self.depth]:
                if j not in book:
                    self._place(j, estimate(j), out)
        started = self._start_due(machine, now, out)
        if self.depth is not None and started and len(order) > self.depth:
            # Starts let more jobs into the depth window; they may be due now as well.
            gone = set(started)
            while started:
                for j in [j for j in order if j not in gone][: self.depth]:
                    if j not in book:
                        self._place(j, estimate(j), out)
                started = self._start_due(machine, now, out)
                gone.update(started)
        wake = book.next_due()
        if wake != self._wake and now < wake < NEVER:
            self._wake = wake
            out.append(WakeAt(wake))
        return out

    def _start_due(self, machine: Machine, now: int, out: list[Decision]) -> list[int]:
        """Start every job whose reservation is now (one the power cap cannot take now is
        reserved again: the availability does not model power)."""
        assert self._book is not None and self._availability is not None
        started = []
        for j, end, held in self._book.pop_due(now):
            if not machine.power_allows(j, held):
                if end > now:
                    self._availability.give(j, now, end, held)
                self._place(j, machine.estimator.estimate(j), out)
                continue
            out.append(machine.start_reserved(j, held))
            self._run[j] = (end, machine.held(j))
            started.append(j)
        return started

    def _place(self, job: int, dur: int, out: list[Decision]) -> None:
        """Reserve ``job`` at its earliest fit (once: a job already reserved keeps its
        reservation)."""
        assert self._book is not None
        if job in self._book:
            return
        t = self._book.reserve(job, dur)
        if t is not None:
            out.append(Plan(job, t))

    def _rebuild(
        self,
        machine: Machine,
        overdue: list[int],
        order: list[int],
        now: int,
        out: list[Decision],
        carried: dict[int, int],
        nodes_changed: bool,
    ) -> None:
        """Hold overdue running jobs until ``now + 1``; re-plan every reservation (and those
        ``carried`` over from an availability dropped when nodes changed), in priority order."""
        avail, book = self._availability, self._book
        assert avail is not None and book is not None
        self._stats["rebuilds"] += 1
        until = now + 1
        for j in overdue:
            _, held = self._run[j]
            avail.take(j, now, until, held)
            self._run[j] = (until, held)
        machine.postpone(overdue, until)
        if isinstance(book, SlotReservations) and not carried and not nodes_changed:
            placed, starts = book.rebuild(order, now)  # the loop below, in one call
            out.extend(map(Plan, placed, starts))
            return
        old = dict(carried)
        for j, start, end, held in book.drain():
            if end > now:
                avail.give(j, max(start, now), end, held)
            old[j] = end - start
        estimate = machine.estimator.estimate
        for j in order:  # after a node change, also jobs that found no room before
            if j in old:
                self._place(j, old[j], out)
            elif nodes_changed and self.depth is None:
                self._place(j, estimate(j), out)
