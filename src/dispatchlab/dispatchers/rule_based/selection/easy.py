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

from dispatchlab.dispatchers.machine import NEVER, Machine
from dispatchlab.dispatchers.rule_based.selection.base import Selection, check_depth, start_in_order
from dispatchlab.engine.decisions import Decision, Plan
from dispatchlab.engine.events import Events
from dispatchlab.engine.state import SystemView


class Easy(Selection):
    """EASY backfilling; ``depth`` limits backfilling to the first ``depth`` queued jobs
    counted from the head (PBS-style ``backfill depth``)."""

    name = "easy"

    def __init__(self, depth: int | None = None) -> None:
        self.depth = check_depth(depth)
        self._head = -1
        self._shadow = -1
        self._planned: tuple[int, int] = (-1, -1)
        self._backfilled = 0

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """Forget the previous run's reservation."""
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
        out: list[Decision] = []
        n = len(order)
        if not n or not machine.any_free():
            return out
        i = start_in_order(order, machine, out)
        if i == n or not machine.any_free():
            return out
        head = order[i]
        now = view.now
        shadow = self._reserve_head(view, events, machine, head, i)
        if self._planned != (head, shadow) and shadow < NEVER:
            self._planned = (head, shadow)
            out.append(Plan(head, shadow))
        stop = n if self.depth is None else min(n, i + self.depth)
        estimate = machine.estimator.estimate
        before = len(out)
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
        return out

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
