"""EASY backfilling with the reservation made in power as well as in nodes (``easy-power``).

As :mod:`~dispatchlab.dispatchers.rule_based.selection.easy`, under a machine-wide power cap: the
head's shadow time is the earliest expected end, from the node-based shadow time on, at
which its nodes are free *and* its power fits — the machine's power then is rebuilt from
the free capacity the expected ends leave (idle power included, through the engine's power
meter) and the head's increase is taken on the nodes the allocator would give it then. The
power left over at the shadow time is *extra power*. A later job starts now iff it fits now
(nodes and power) and either ends by the shadow time, or uses only extra nodes and no more
than the extra power (which it then consumes). The cap at each candidate time is the one
announced for then (``view.scenario``'s ``power_cap`` changes; the cap now when none is
announced), and a time the announced cap rises is a candidate too. Without a cap it is
plain EASY.
"""

from __future__ import annotations

import numpy as np

from dispatchlab.arrays import IntArray
from dispatchlab.dispatchers.machine import NEVER, Machine, NodeMachine, SlotMachine
from dispatchlab.dispatchers.rule_based.selection.easy import Easy
from dispatchlab.engine.budget import EPS
from dispatchlab.engine.cap_schedule import announced_caps
from dispatchlab.engine.events import Events
from dispatchlab.engine.state import SystemView


class EasyPower(Easy):
    """EASY whose reservation for the head holds in power too."""

    name = "easy-power"

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """Plain EASY's state, and no extra power yet."""
        super().reset(view, rng)
        self._spare = 0.0

    @staticmethod
    def _in_power(view: SystemView) -> bool:
        """A cap is in force and the engine's meter can rebuild the machine's power."""
        return view.budget is not None and hasattr(view.power_model, "nodes_power")

    def _reserve_head(self, view: SystemView, events: Events, machine: Machine, head: int,
                      position: int) -> int:
        """The first expected end from the node-based shadow time on at which the head's
        power fits too; the power left over then is the extra power."""
        if not self._in_power(view):
            return super()._reserve_head(view, events, machine, head, position)
        shadow, self._spare = self._power_shadow(view, machine, head, machine.reserve(head))
        return shadow

    def _beside_allowed(self, view: SystemView, machine: Machine, job: int) -> bool:
        """Only within the extra power (and the power left now), which it then consumes."""
        if not self._in_power(view):
            return True
        p = self._power_now(view, machine, job)
        if p > min(self._spare, machine.workspace().power_left) + EPS:
            return False
        self._spare -= max(p, 0.0)
        return True

    @staticmethod
    def _power_now(view: SystemView, machine: Machine, job: int) -> float:
        """What starting ``job`` now would add (on the allocator's nodes)."""
        ws = machine.workspace()
        placed = machine.alloc.place(ws.free, view.req[job], int(view.jobs.units[job]))
        return float("inf") if placed is None else ws.power_of(job, *placed)

    @staticmethod
    def _power_shadow(view: SystemView, machine: Machine, head: int, shadow: int
                      ) -> tuple[int, float]:
        """From the node-based ``shadow`` on, the first expected end at which the head's
        power fits too, and the power left over then."""
        if shadow >= NEVER:
            return NEVER, 0.0
        budget, meter = view.budget, view.power_model
        assert budget is not None
        ws = machine.workspace()
        cap_at = announced_caps(view, budget.cap)
        used_now = budget.used + ws.power_taken
        nodes_now = meter.nodes_power(ws.free)
        scratch = ws.free.copy()
        gone = 0.0
        req, units = view.req[head], int(view.jobs.units[head])
        ends = [(e, j) for e, j in machine.ends if j in view.running]
        # candidates: the node-based shadow, later expected ends, and announced cap
        # changes after now (one before the node-based shadow can let the head start
        # earlier when its nodes are free then and only power held it)
        times = sorted({shadow, *(e for e, _ in ends if e > shadow),
                        *(t for t in cap_at.times if t > view.now)})
        k = 0
        released = 0
        for t in times:
            cap = cap_at(t)
            while k < len(ends) and ends[k][0] <= t:
                j = ends[k][1]
                run = view.running[j]
                scratch[run.nodes] += run.counts[:, None] * view.req[j]
                gone += meter.job_part(j, run.nodes, run.counts)
                released += int(run.counts.sum())
                k += 1
            placed = machine.alloc.place(scratch, req, units)
            if placed is None:
                continue
            power = used_now - (nodes_now - meter.nodes_power(scratch)) - gone
            d = meter.start_delta(head, *placed, free=scratch)
            if power + d <= cap + EPS:
                if t < shadow:  # what stays free beside the head then, not at shadow
                    _extra_at(machine, scratch, placed, req, released, units)
                return int(t), cap - power - d
        return NEVER, 0.0


def _extra_at(machine: Machine, free: IntArray, placed: tuple[IntArray, IntArray],
              req: IntArray, released: int, units: int) -> None:
    """Set EASY's extra capacity to what ``free`` (the capacity free at the chosen shadow
    time) leaves beside the head's ``placed`` units."""
    if isinstance(machine, NodeMachine):
        extra = free.copy()
        extra[placed[0]] -= placed[1][:, None] * req
        machine.extra = extra
    elif isinstance(machine, SlotMachine):
        machine.extra = machine.free + released - units
