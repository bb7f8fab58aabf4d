"""Registers ``pa-list`` and ``pa-easy``: PA-HPC-SIM's schedulers, for comparison with
numbers published from the peer's simulator."""

from __future__ import annotations

from dispatchlab.dispatchers.family import Entry, preset

_ACCOUNTING = ("; its power accounting: --job-power pa-hpc-sim --no-idle-power; "
               "Eurora chunk counting: --eurora-units chunks")


def entries() -> list[Entry]:
    """The two schedulers of the ``pa-hpc-sim`` family."""
    from dispatchlab.dispatchers.pa_hpc_sim.easy import PaEasy
    from dispatchlab.dispatchers.pa_hpc_sim.list_scheduler import PaList

    return [preset("pa-list", PaList,
             "PA-HPC-SIM's list scheduler (Borghesi et al.): jobs by wall-time (std::sort "
             "ties), every one that fits now, its dispatching points and node order"
             + _ACCOUNTING),
            preset("pa-easy", PaEasy,
             "PA-HPC-SIM's EASY backfilling: its collection order, shadow time and "
             "backfilling from actual run times (oracle), in power and nodes"
             + _ACCOUNTING)]
