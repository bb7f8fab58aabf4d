"""PA-HPC-SIM's EASY backfilling (``opt_type`` 1: ``BackFillingScheduler.hpp``,
``schedule_easy`` with ``sorting_mode_`` 0 and ``backfill_mode_`` 1), as its online
dispatcher drives it (:mod:`online`).

Its rules, read from the peer's code and written here anew:

- **Order.** The waiting jobs in the stable collection's order (not sorted, not by
  arrival: the collection's swap-with-last removals reorder it). Jobs start in that order
  while they fit (nodes and power); the first that does not is the head.
- **Durations.** A waiting job and a job started in this call last their wall-time; a job
  started at an earlier call lasts its *actual* run time cut at the wall-time
  (``min(estimate, real)``, 0 s counting as 1 s): the peer's online dispatcher hands its
  scheduler the wall-time when a job arrives and the actual duration once it has started.
  The second is an oracle, so this dispatcher declares ``oracle = True``.
- **Reservation.** The running jobs (those started earlier and now) are taken by end time;
  each is released in turn from the free capacity and from the power in use, and the head
  is placed on what is free then (first fit, in the node order) with the power of the jobs
  still running plus its own under the current cap. The end time of the job whose release
  lets it fit is the shadow time; if none does, nothing is backfilled.
- **Backfilling.** Every job after the head, in order, starts now if its wall-time ends
  strictly before the shadow time and it fits now. There is no test of the head's nodes: a job that
  ends before the shadow time cannot delay it.
- The peer plans further events after now, but it recomputes its schedule at every
  dispatching point (every arrival and end changes its problem), so only the starts now
  are used.
"""

from __future__ import annotations

import numpy as np

from dispatchlab.dispatchers.pa_hpc_sim.online import PaOnline, Planned, place
from dispatchlab.engine.budget import fits_cap
from dispatchlab.engine.decisions import Start
from dispatchlab.engine.state import SystemView


class PaEasy(PaOnline):
    """The peer's EASY backfilling under its online dispatcher."""

    name = "pa-easy"
    oracle = True

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """Collections and node order (:class:`PaOnline`); no job power known yet."""
        super().reset(view, rng)
        self._watts: dict[int, float] = {}

    @staticmethod
    def _actual(view: SystemView, job: int) -> int:
        """A started job's duration for the peer: run time cut at the wall-time, ≥ 1 s."""
        assert view.oracle is not None
        return max(1, min(int(view.jobs.walltime[job]), int(view.oracle.runtime[job])))

    def schedule(self, view: SystemView, waiting: list[int]) -> list[Start]:
        """Start in order while jobs fit; reserve for the first that does not; backfill."""
        plan = Planned(view)
        for k, job in enumerate(waiting):
            if plan.try_start(job, self._nodes):
                continue
            shadow = self._shadow(view, plan, job)
            if shadow is not None:
                for other in waiting[k + 1:]:
                    if view.now + int(view.jobs.walltime[other]) < shadow:
                        plan.try_start(other, self._nodes)
            break
        self._watts.update(plan.added)
        return plan.starts

    def _shadow(self, view: SystemView, plan: Planned, head: int) -> int | None:
        """The end time at which, releasing running jobs by end time, the head fits."""
        req = view.req
        running = [(r.start + self._actual(view, j), j, r.nodes, r.counts)
                   for j, r in view.running.items()]
        running += [(view.now + int(view.jobs.walltime[s.job]), s.job, s.nodes, s.counts)
                    for s in plan.starts]
        running.sort(key=lambda t: t[0])
        free = plan.free.copy()
        power = plan.power
        units = int(view.jobs.units[head])
        for end, job, nodes, counts in running:
            free[nodes] += counts[:, None] * req[job]
            power -= plan.added.get(job, self._watts.get(job, 0.0))
            placed = place(free, req[head], units, self._nodes)
            if placed is None:
                continue
            watts = view.power_of(head, placed[0], placed[1], free) if view.budget else 0.0
            if fits_cap(power, watts, plan.cap):
                return int(end)
        return None
