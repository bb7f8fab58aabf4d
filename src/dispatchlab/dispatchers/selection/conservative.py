"""Conservative backfilling: every queued job holds a reservation; none is ever delayed.

Running jobs occupy a resource-time profile until their expected end; each queued job (the
first ``depth`` in priority order, or all) holds a reservation at the earliest time it
fits without touching any earlier reservation. A job starts when its reservation is now.

When a job ends before its expected end the profile gains a hole and is *compressed*:
in priority order each reservation is taken out and put back at its earliest fit, which is
never later than where it was — so no reservation ever moves later (Mu'alem & Feitelson
2001). Only a running job outliving its estimate (possible with learned predictors, never
with requested times) can break a reservation; then the running job is extended to
``now + 1`` and every reservation is rebuilt in priority order.
"""

from __future__ import annotations

from typing import Any

from dispatchlab.dispatchers.machine import Machine
from dispatchlab.dispatchers.profile import Profile
from dispatchlab.dispatchers.selection.base import Selection, check_depth
from dispatchlab.engine.decisions import Decision, Plan
from dispatchlab.engine.events import Events
from dispatchlab.engine.state import SystemView


class Conservative(Selection):
    """Conservative backfilling over a resource-time profile."""

    name = "conservative"

    def __init__(self, depth: int | None = None) -> None:
        self.depth = check_depth(depth)
        self._profile: Profile | None = None
        self._res: dict[int, tuple[int, int, Any]] = {}  # job → (start, end, placement)
        self._run: dict[int, tuple[int, Any]] = {}  # job → (expected end, placement)
        self.compressions = 0
        self.rebuilds = 0

    def reset(self, machine: Machine) -> None:
        """A fresh profile of the empty machine."""
        self._profile = machine.profile()
        self._res = {}
        self._run = {}
        self.compressions = 0
        self.rebuilds = 0

    def select(
        self, view: SystemView, events: Events, order: list[int], machine: Machine
    ) -> list[Decision]:
        """Update the profile, compress or extend reservations, start what is due now."""
        prof = self._profile
        if prof is None:
            raise RuntimeError("reset() was not called")
        now = view.now
        prof.advance(now)
        run, res = self._run, self._res
        freed = False
        for j in events.finished:
            end, held = run.pop(j)
            if end > now:
                prof.give(j, now, end, held)
                freed = True
        out: list[Decision] = []
        overdue = machine.overdue()
        if overdue:
            self._extend(overdue, now + 1, order, out)
        elif freed:
            self._compress(order, now, out)
        window = order if self.depth is None else order[: self.depth]
        estimate = machine.estimator.estimate
        for j in window:
            if j not in res:
                self._place(j, estimate(j), now, None, out)
        due = [j for j in window if res[j][0] == now]
        while due:
            for j in due:
                start, end, held = res.pop(j)
                out.append(machine.start_reserved(j, held))
                run[j] = (end, machine.held(j))
            if self.depth is None or len(order) <= self.depth:
                break
            # Jobs entering the depth window may be due now as well.
            started = set(due)
            window = [j for j in order if j not in started][: self.depth]
            due = []
            for j in window:
                if j not in res:
                    self._place(j, estimate(j), now, None, out)
                    if res[j][0] == now:
                        due.append(j)
        return out

    def _place(
        self, job: int, dur: int, now: int, before: int | None, out: list[Decision]
    ) -> None:
        """Reserve ``job`` at its earliest fit (``before``: only if earlier than that)."""
        prof = self._profile
        assert prof is not None
        found = prof.earliest(job, dur, before)
        if found is None:
            raise RuntimeError(f"no room for job {job} in the profile")
        t, held = found
        prof.take(job, t, t + dur, held)
        self._res[job] = (t, t + dur, held)
        out.append(Plan(job, t))

    def _compress(self, order: list[int], now: int, out: list[Decision]) -> None:
        """Move every reservation to its earliest fit, in priority order."""
        prof = self._profile
        assert prof is not None
        res = self._res
        self.compressions += 1
        for j in order:
            r = res.get(j)
            if r is None or r[0] <= now:
                continue
            start, end, held = r
            prof.give(j, start, end, held)
            found = prof.earliest(j, end - start, start)
            if found is None:
                prof.take(j, start, end, held)
                continue
            t, held = found
            prof.take(j, t, t + end - start, held)
            res[j] = (t, t + end - start, held)
            out.append(Plan(j, t))

    def _extend(self, overdue: list[int], until: int, order: list[int], out: list[Decision]) -> None:
        """Running jobs outlived their estimate: hold them to ``until``, re-plan everything."""
        prof = self._profile
        assert prof is not None
        self.rebuilds += 1
        for j in overdue:
            end, held = self._run[j]
            prof.take(j, end, until, held)
            self._run[j] = (until, held)
        for j, (start, end, held) in self._res.items():
            prof.give(j, start, end, held)
        old = self._res
        self._res = {}
        for j in order:
            if j in old:
                start, end, _ = old[j]
                self._place(j, end - start, until - 1, None, out)

    def describe(self) -> dict[str, Any]:
        """Name and depth."""
        return super().describe()
