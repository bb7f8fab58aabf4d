"""Variable-capacity strategies of Robert et al. (SPEC §7): first-fit aware/unaware and the
risk-aware target strategies (TargetStretch, TargetASAP, PackedTargetASAP).

See docs/variable_capacity.md for the model, the parameters and where each comes from.
"""

from dispatchlab.dispatchers.variable_capacity.first_fit import FirstFitVC
from dispatchlab.dispatchers.variable_capacity.target import TargetVC

__all__ = ["FirstFitVC", "TargetVC"]
