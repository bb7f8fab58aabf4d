"""The PA-HPC-SIM family's catalogue record."""

from dispatchlab.dispatchers.family import Family
from dispatchlab.dispatchers.pa_hpc_sim.presets import entries

FAMILY = Family("pa-hpc-sim", "PA-HPC-SIM's schedulers, for comparison with numbers "
                "published from that simulator", entries)
