"""The catalogue: every built-in dispatcher family, in the order their spec parsers are
tried. A new family adds its record (:class:`~dispatchlab.dispatchers.family.Family`)
here; nothing else names it."""

from dispatchlab.dispatchers.cp.family import FAMILY as CP
from dispatchlab.dispatchers.dardis.family import FAMILY as DARDIS
from dispatchlab.dispatchers.dec.family import FAMILY as DEC
from dispatchlab.dispatchers.family import Family
from dispatchlab.dispatchers.malleable.family import FAMILY as MALLEABLE
from dispatchlab.dispatchers.offline_plan.family import FAMILY as OFFLINE_PLAN
from dispatchlab.dispatchers.pa_hpc_sim.family import FAMILY as PA_HPC_SIM
from dispatchlab.dispatchers.rule_based.family import FAMILY as RULE_BASED
from dispatchlab.dispatchers.slurm.family import FAMILY as SLURM
from dispatchlab.dispatchers.variable_capacity.family import FAMILY as VARIABLE_CAPACITY

FAMILIES: tuple[Family, ...] = (RULE_BASED, CP, DEC, MALLEABLE, DARDIS, VARIABLE_CAPACITY,
                                OFFLINE_PLAN, PA_HPC_SIM, SLURM)
