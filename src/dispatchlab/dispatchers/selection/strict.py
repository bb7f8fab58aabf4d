"""Strict and non-strict list scheduling (thesis §2.2.1)."""

from __future__ import annotations

from dispatchlab.dispatchers.machine import Machine
from dispatchlab.dispatchers.selection.base import Selection, check_depth
from dispatchlab.engine.decisions import Decision
from dispatchlab.engine.events import Events
from dispatchlab.engine.state import SystemView


class Strict(Selection):
    """Start jobs in priority order; stop at the first one that cannot start."""

    name = "strict"

    def select(
        self, view: SystemView, events: Events, order: list[int], machine: Machine
    ) -> list[Decision]:
        """The longest startable prefix of the queue."""
        out: list[Decision] = []
        if not order or not machine.any_free():
            return out
        for j in order:
            if not machine.fits(j):
                break
            out.append(machine.start(j))
        return out


class NonStrict(Selection):
    """Start every job that fits, in priority order, skipping those that do not."""

    name = "nonstrict"

    def __init__(self, depth: int | None = None) -> None:
        self.depth = check_depth(depth)

    def select(
        self, view: SystemView, events: Events, order: list[int], machine: Machine
    ) -> list[Decision]:
        """Every job that fits, up to ``depth`` jobs past the first that does not."""
        out: list[Decision] = []
        if not order or not machine.any_free():
            return out
        stop = len(order)
        for k, j in enumerate(order):
            if k >= stop:
                break
            if machine.fits(j):
                out.append(machine.start(j))
                if not machine.any_free():
                    break
            elif stop == len(order) and self.depth is not None:
                stop = min(stop, k + self.depth)
        return out
