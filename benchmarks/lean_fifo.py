"""The leanest FIFO dispatcher a user could write for one-slot nodes (a benchmark probe).

It keeps its own free-node list and a FIFO queue, starts the head while it fits, and
leaves ``wakes_on`` so the engine calls it only when its answer can change. Run through
the general loop it measures what the engine itself costs per job (validation, records,
events), with a dispatcher that costs next to nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dispatchlab.dispatchers.base import BaseDispatcher
from dispatchlab.engine.decisions import Decision, Start
from dispatchlab.engine.events import WAKE_ON_END, WAKE_ON_SUBMIT, Events
from dispatchlab.engine.state import SystemView


class LeanFifo(BaseDispatcher):
    """Strict FIFO on nodes of one slot each; every job asks one slot per unit."""

    name = "lean-fifo"

    def __init__(self, units: Sequence[int]):
        self.units = list(units)  # each job's units (the whole workload, by job index)

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """Every node free, nothing queued."""
        self.free = list(range(view.platform.n_nodes))
        self.held: dict[int, list[int]] = {}
        self.queue: list[int] = []
        self.head = 0
        self.ones = np.ones(max(self.units, default=1), np.int64)
        self.wakes_on = WAKE_ON_SUBMIT

    def decide(self, view: SystemView, events: Events) -> Sequence[Decision]:
        """Nodes of ended jobs back (lowest first), arrivals queued, the head started while
        it fits; woken next by ends while the head waits, else by arrivals."""
        free, held, queue, units = self.free, self.held, self.queue, self.units
        if events.finished:
            for j in events.finished:
                free += held.pop(j)
            free.sort()
        queue += events.submitted
        out: list[Decision] = []
        head = self.head
        while head < len(queue):
            j = queue[head]
            u = units[j]
            if u > len(free):
                break
            held[j] = nodes = free[:u]
            del free[:u]
            out.append(Start(j, np.array(nodes, np.int64), self.ones[:u]))
            head += 1
        self.head = head
        self.wakes_on = WAKE_ON_END if head < len(queue) else WAKE_ON_SUBMIT
        return out

    def describe(self) -> dict[str, Any]:
        """Its name."""
        return {"name": self.name}
