"""The selection-scheme interface: which queued jobs start now, given an ordered queue."""

from __future__ import annotations

from typing import Any

import numpy as np

from dispatchlab.dispatchers.machine import Machine
from dispatchlab.engine.decisions import Decision
from dispatchlab.engine.events import Events
from dispatchlab.engine.state import SystemView
from dispatchlab.errors import ConfigError
from dispatchlab.params import Parametrized


class Selection(Parametrized):
    """Base class. ``depth`` (when the scheme has one) limits how far past the first job
    that cannot start it looks: that job and the next ``depth − 1`` queued jobs count.
    """

    name = "selection"
    depth: int | None = None
    omitted_at_default = ("depth",)
    #: True when the scheme starts nothing while nothing is free (the policy then skips
    #: the call, and the re-sorting of dynamic orderings, altogether).
    idle_when_full = True
    #: True when the scheme plans future starts for every queued job (conservative): under
    #: operator rules it then sees jobs not eligible now too, and plans them for later.
    plans_ahead = False

    def needs_nodes(self, view: SystemView) -> bool:
        """True when the scheme needs concrete node placements (a
        :class:`~dispatchlab.dispatchers.machine.NodeMachine`) even where unit slots would
        do; False by default."""
        return False

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """Per-run state; nothing by default."""

    def select(
        self, view: SystemView, events: Events, order: list[int], machine: Machine
    ) -> list[Decision]:
        """Start decisions (and plans) for ``view.now``; ``order`` is the queue by priority."""
        raise NotImplementedError

    def run_stats(self) -> dict[str, Any]:
        """Per-run statistics of the scheme; none by default."""
        return {}


def check_depth(depth: int | None) -> int | None:
    """Validate a depth limit (``None`` = the whole queue)."""
    if depth is not None and depth < 1:
        raise ConfigError(f"depth must be at least 1, got {depth}", field="depth")
    return depth


def start_in_order(order: list[int], machine: Machine, out: list[Decision]) -> int:
    """Start queued jobs in priority order while they fit; the index of the first that
    does not (``len(order)`` when all started)."""
    i, n = 0, len(order)
    while i < n and machine.fits(order[i]):
        out.append(machine.start(order[i]))
        i += 1
    return i


def waiting_head(order: list[int], machine: Machine, out: list[Decision]) -> int:
    """Start the startable prefix of the queue (into ``out``); the position of the first
    job that must wait, or -1 when none does or nothing is free any more (a backfilling
    scheme has nothing else to do then)."""
    n = len(order)
    if not n or not machine.any_free():
        return -1
    i = start_in_order(order, machine, out)
    if i == n or not machine.any_free():
        return -1
    return i
