"""Conservative backfilling: every queued job holds a reservation; none is ever delayed.

Running jobs occupy a resource-time profile until their expected end; each queued job (the
first ``depth`` in priority order, or all) holds a reservation at the earliest time it
fits without touching any earlier reservation. A job starts when its reservation is now.

When a job ends before its expected end the profile gains a hole and is *compressed*:
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

import heapq
from typing import Any

from dispatchlab.dispatchers.machine import Machine
from dispatchlab.dispatchers.profile import Profile
from dispatchlab.dispatchers.selection.base import Selection, check_depth
from dispatchlab.engine.decisions import Decision, Plan, WakeAt
from dispatchlab.engine.events import Events
from dispatchlab.engine.state import SystemView

_NEVER = 1 << 62


class Conservative(Selection):
    """Conservative backfilling over a resource-time profile."""

    name = "conservative"
    idle_when_full = False  # early ends must still compress the profile
    plans_ahead = True

    def __init__(self, depth: int | None = None) -> None:
        self.depth = check_depth(depth)
        self._profile: Profile | None = None
        self._res: dict[int, tuple[int, int, Any]] = {}  # job → (start, end, placement)
        self._due: list[tuple[int, int]] = []  # (reserved start, job), stale entries skipped
        self._run: dict[int, tuple[int, Any]] = {}  # job → (expected end, placement)
        self._stats = {"compressions": 0, "rebuilds": 0, "moves": 0}
        self._wake = -1

    def reset(self, machine: Machine) -> None:
        """A fresh profile of the empty machine."""
        self._profile = machine.profile()
        self._res, self._due, self._run = {}, [], {}
        self._stats = {"compressions": 0, "rebuilds": 0, "moves": 0}
        self._wake = -1

    def run_stats(self) -> dict[str, int]:
        """How often the profile was compressed or rebuilt, and reservations moved."""
        return dict(self._stats)

    def select(
        self, view: SystemView, events: Events, order: list[int], machine: Machine
    ) -> list[Decision]:
        """Update the profile, compress or rebuild reservations, start what is due now."""
        prof = self._profile
        if prof is None:
            raise RuntimeError("reset() was not called")
        now = view.now
        prof.advance(now)
        run, res = self._run, self._res
        freed = False
        for j in events.finished:
            ran = run.pop(j, None)
            if ran is None:
                continue  # not started by this scheme (a reservation job or a component)
            end, held = ran
            if end > now:
                prof.give(j, now, end, held)
                freed = True
        out: list[Decision] = []
        estimate = machine.estimator.estimate
        overdue = [j for j in machine.overdue() if j in run]
        if overdue or self._next_due() < now:
            self._rebuild(machine, overdue, order, now, out)
        elif freed:
            self._compress(order, now, out)
        if self.depth is None:
            new = events.submitted
            if len(new) > 1:  # simultaneous arrivals get their reservations by priority
                arrived = set(new)
                new = [j for j in order if j in arrived]
            for j in new:
                self._place(j, estimate(j), None, out)
        else:
            for j in order[: self.depth]:
                if j not in res:
                    self._place(j, estimate(j), None, out)
        started = self._start_due(machine, now, out)
        if self.depth is not None and started and len(order) > self.depth:
            # Starts let more jobs into the depth window; they may be due now as well.
            gone = set(started)
            while started:
                for j in [j for j in order if j not in gone][: self.depth]:
                    if j not in res:
                        self._place(j, estimate(j), None, out)
                started = self._start_due(machine, now, out)
                gone.update(started)
        wake = self._next_due()
        if wake != self._wake and now < wake < _NEVER:
            self._wake = wake
            out.append(WakeAt(wake))
        return out

    def _next_due(self) -> int:
        """Earliest live reservation start (dropping stale heap entries), or a huge value."""
        due, res = self._due, self._res
        while due:
            t, j = due[0]
            r = res.get(j)
            if r is not None and r[0] == t:
                return t
            heapq.heappop(due)
        return _NEVER

    def _start_due(self, machine: Machine, now: int, out: list[Decision]) -> list[int]:
        """Start every job whose reservation is now."""
        due, res = self._due, self._res
        started = []
        while due and due[0][0] <= now:
            t, j = heapq.heappop(due)
            r = res.get(j)
            if r is None or r[0] != t:
                continue  # a stale heap entry: the reservation moved
            del res[j]
            out.append(machine.start_reserved(j, r[2]))
            self._run[j] = (r[1], machine.held(j))
            started.append(j)
        return started

    def _place(self, job: int, dur: int, before: int | None, out: list[Decision]) -> bool:
        """Reserve ``job`` at its earliest fit; with ``before``, only if earlier than that."""
        prof = self._profile
        assert prof is not None
        found = prof.earliest(job, dur, before)
        if found is None:
            return False
        t, held = found
        prof.take(job, t, t + dur, held)
        self._res[job] = (t, t + dur, held)
        heapq.heappush(self._due, (t, job))
        out.append(Plan(job, t))
        return True

    def _compress(self, order: list[int], now: int, out: list[Decision]) -> None:
        """Move every reservation to its earliest fit, in priority order."""
        prof = self._profile
        assert prof is not None
        res = self._res
        self._stats["compressions"] += 1
        for j in order:
            r = res.get(j)
            if r is None or r[0] <= now:
                continue
            start, end, held = r
            prof.give(j, start, end, held)
            if self._place(j, end - start, start, out):
                self._stats["moves"] += 1
            else:
                prof.take(j, start, end, held)

    def _rebuild(
        self,
        machine: Machine,
        overdue: list[int],
        order: list[int],
        now: int,
        out: list[Decision],
    ) -> None:
        """Hold overdue running jobs until ``now + 1``; re-plan every reservation."""
        prof = self._profile
        assert prof is not None
        self._stats["rebuilds"] += 1
        until = now + 1
        for j in overdue:
            _, held = self._run[j]
            prof.take(j, now, until, held)
            self._run[j] = (until, held)
        machine.postpone(overdue, until)
        old = self._res
        for j, (start, end, held) in old.items():
            if end > now:
                prof.give(j, max(start, now), end, held)
        self._res, self._due = {}, []
        for j in order:
            if j in old:
                start, end, _ = old[j]
                self._place(j, end - start, None, out)
