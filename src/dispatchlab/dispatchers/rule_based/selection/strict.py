"""Strict and non-strict list scheduling (thesis §2.2.1)."""

from __future__ import annotations

from dispatchlab.dispatchers.machine import Machine
from dispatchlab.dispatchers.rule_based.selection.base import Selection, check_depth, start_in_order
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
        if order and machine.any_free():
            start_in_order(order, machine, out)
        return out


class NonStrict(Selection):
    """Start every job that fits, in priority order, skipping those that do not."""

    name = "nonstrict"

    def __init__(self, depth: int | None = None) -> None:
        self.depth = check_depth(depth)

    def select(
        self, view: SystemView, events: Events, order: list[int], machine: Machine
    ) -> list[Decision]:
        """The startable prefix, then every later job (within ``depth``) that fits."""
        out: list[Decision] = []
        if not order or not machine.any_free():
            return out
        i = start_in_order(order, machine, out)
        n = len(order)
        stop = n if self.depth is None else min(n, i + self.depth)
        for k in range(i + 1, stop):
            if not machine.any_free():
                break
            if machine.fits(order[k]):
                out.append(machine.start(order[k]))
        return out
