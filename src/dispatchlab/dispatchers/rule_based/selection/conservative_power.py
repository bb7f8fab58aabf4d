"""Conservative backfilling with every reservation made in power as well as in nodes
(``conservative-power``).

As :mod:`~dispatchlab.dispatchers.rule_based.selection.conservative`, under a machine-wide power
cap:
the availability is a
:class:`~dispatchlab.dispatchers.rule_based.power_availability.PowerAvailability`, so each
queued job's reservation is the earliest time at which its nodes are free for its whole
expected run *and* the IT power then (idle nodes included, through the engine's power
meter), with every running job and earlier reservation held, leaves room for it on the
nodes the allocator gives it. Reservations are placed on concrete nodes (a node machine even
where unit slots would do) and jobs start on them, so the power a reservation was costed at
is the power its start adds. Compression keeps the guarantee: power only falls when
capacity is given back. The cap is the one now, then the announced ``power_cap`` changes
(each window checked against the lowest cap announced over it); a cap that falls below a
due reservation's power without notice sends it to a new reservation. Without a budget it
is plain conservative backfilling.
"""

from __future__ import annotations

from dispatchlab.dispatchers.availability import Availability, LiveRequests
from dispatchlab.dispatchers.machine import Machine, NodeMachine, alive_capacity
from dispatchlab.dispatchers.rule_based.power_availability import PowerAvailability
from dispatchlab.dispatchers.rule_based.selection.conservative import Conservative
from dispatchlab.engine.power_meter import MachinePower
from dispatchlab.engine.state import SystemView


class ConservativePower(Conservative):
    """Conservative backfilling whose reservations hold in power too."""

    name = "conservative-power"

    def needs_nodes(self, view: SystemView) -> bool:
        """Concrete nodes under a power budget: a reservation's power depends on them."""
        return _metered(view)

    def _new_availability(self, machine: Machine) -> Availability:
        view = machine.view
        if not (_metered(view) and isinstance(machine, NodeMachine)):
            return machine.availability()
        assert view.budget is not None
        return PowerAvailability(view, alive_capacity(view), LiveRequests(view), machine.units,
                            machine.alloc, view.rules, view.power_model, view.budget)


def _metered(view: SystemView) -> bool:
    """A power budget kept by the engine's meter."""
    return view.budget is not None and isinstance(view.power_model, MachinePower)
