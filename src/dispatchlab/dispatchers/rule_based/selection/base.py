"""The selection-scheme interface: which queued jobs start now, given an ordered queue."""

from __future__ import annotations

from typing import Any

import numpy as np

from dispatchlab.dispatchers.machine import Machine, SlotMachine
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
    start = machine.start
    if type(machine) is SlotMachine and machine.view.budget is None:
        units = machine.units  # (its fits, inlined: enough free slots)
        while i < n and units[order[i]] <= machine.free:
            out.append(start(order[i]))
            i += 1
        return i
    fits = machine.fits
    while i < n and fits(order[i]):
        out.append(start(order[i]))
        i += 1
    return i


class Backfilling(Selection):
    """A scheme that starts the startable prefix of the queue, then works behind the first
    job that must wait (:meth:`behind`: reserve for it, backfill others)."""

    def select(
        self, view: SystemView, events: Events, order: list[int], machine: Machine
    ) -> list[Decision]:
        """The startable prefix, then what :meth:`behind` decides."""
        out: list[Decision] = []
        n = len(order)
        if not n or not machine.any_free():
            return out
        i = start_in_order(order, machine, out)
        if i < n and machine.any_free():
            self.behind(view, events, order, machine, i, out)
        return out

    def behind(self, view: SystemView, events: Events, order: list[int], machine: Machine,
               i: int, out: list[Decision]) -> None:
        """Decisions (appended to ``out``) now that ``order[i]`` must wait and something
        is still free."""
        raise NotImplementedError
