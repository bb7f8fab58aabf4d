"""Strict FIFO with first-fit: start jobs in arrival order, stop at the first that waits."""

from __future__ import annotations

from collections.abc import Sequence

from dispatchlab.dispatchers.base import BaseDispatcher
from dispatchlab.dispatchers.first_fit import first_fit
from dispatchlab.dispatchers.workspace import Workspace
from dispatchlab.engine.decisions import Decision
from dispatchlab.engine.events import Events
from dispatchlab.engine.state import SystemView


class StrictFifo(BaseDispatcher):
    """Start queued jobs in submission order; stop at the first one that cannot start."""

    name = "fifo"

    def decide(self, view: SystemView, events: Events) -> Sequence[Decision]:
        """Start the longest prefix of the queue that fits, first-fit on nodes."""
        if not view.queue:
            return ()
        if not view.fits_total(next(iter(view.queue))):
            return ()
        ws = Workspace(view)
        decisions: list[Decision] = []
        units = view.jobs.units
        for job in view.queue:
            if not ws.fits_total(job):
                break
            placed = first_fit(ws.free, view.req[job], int(units[job]))
            if placed is None:
                break
            decisions.append(ws.take(job, *placed))
        return decisions
