"""Power and energy: node power models and energy accounting from the run's logs."""

from dispatchlab.energy.accounting import (
    J_PER_KWH,
    Energy,
    NodePowerModel,
    StatePowerModel,
    node_energy,
)

__all__ = ["J_PER_KWH", "Energy", "NodePowerModel", "StatePowerModel", "node_energy"]
