"""PA-HPC-SIM's list scheduler (``opt_type`` 0, ``ListScheduler.hpp``): the waiting jobs
by wall-time, each started now if it fits (nodes and power), none reserved.

The order is libstdc++'s ``std::sort`` by wall-time (not stable: ties come out in the order
that algorithm leaves them, :mod:`cxx_sort`), applied twice to the stable collection's order
(the peer sorts before its event loop and again at the current time).
"""

from __future__ import annotations

from dispatchlab.dispatchers.pa_hpc_sim.cxx_sort import cxx_sort
from dispatchlab.dispatchers.pa_hpc_sim.online import PaOnline, Planned
from dispatchlab.engine.decisions import Start
from dispatchlab.engine.state import SystemView


class PaList(PaOnline):
    """The peer's list scheduler under its online dispatcher."""

    name = "pa-list"

    def schedule(self, view: SystemView, waiting: list[int]) -> list[Start]:
        """Every waiting job, by wall-time, that fits now."""
        wall = view.jobs.walltime

        def shorter(a: int, b: int) -> bool:
            return bool(wall[a] < wall[b])

        cxx_sort(waiting, shorter)
        cxx_sort(waiting, shorter)
        plan = Planned(view)
        for j in waiting:
            plan.try_start(j, self._nodes)
        return plan.starts
