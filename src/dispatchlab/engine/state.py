"""The system state a dispatcher reads: queue, running jobs and free resources.

The engine owns it and mutates it only while applying validated decisions and events;
dispatchers must treat every attribute as read-only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from dispatchlab.platform.platform import Platform
from dispatchlab.workload.workload import Workload

if TYPE_CHECKING:
    from dispatchlab.engine.constraints import Constraints

IntArray = npt.NDArray[np.int64]


@dataclass(slots=True)
class Running:
    """A running job: when it started, where, and when the engine will end it.

    ``end`` is the engine's knowledge of the future (actual end or kill time): dispatchers
        must plan with ``start`` plus their own estimate instead.
    """

    start: int
    nodes: IntArray
    counts: IntArray
    end: int


class SystemView:
    """Read-only view of the simulated system at decision time ``now``.

    ``req[i]`` is job ``i``'s per-unit request over the *platform's* resources,
    ``demand[i]`` its total (``units × req``) and ``demand_nz[i]`` the non-zero
    ``(resource, amount)`` pairs of that total. ``queue`` holds queued job indices in
    arrival order; ``running`` maps job index → :class:`Running`. ``rules`` holds the
    queue rules, reservations and heterogeneous jobs the engine enforces
    (:class:`~dispatchlab.engine.constraints.Constraints`), or ``None`` when none apply.
    """

    __slots__ = (
        "capacity",
        "demand",
        "demand_nz",
        "free",
        "free_total",
        "jobs",
        "now",
        "platform",
        "queue",
        "req",
        "rules",
        "running",
        "total",
    )

    def __init__(self, workload: Workload, platform: Platform, req: IntArray):
        self.jobs = workload
        self.platform = platform
        self.capacity: IntArray = platform.capacity
        self.total: list[int] = platform.total.tolist()
        self.free: IntArray = platform.capacity.copy()
        self.free_total: list[int] = list(self.total)
        self.req: IntArray = req
        self.demand: IntArray = req * workload.units[:, None]
        self.demand_nz: list[tuple[tuple[int, int], ...]] = _nonzero_pairs(self.demand)
        self.queue: dict[int, None] = {}
        self.running: dict[int, Running] = {}
        self.now = 0
        self.rules: Constraints | None = None

    def fits_total(self, job: int) -> bool:
        """Cheap necessary condition: the job's total demand fits the pooled free capacity."""
        ft = self.free_total
        for r, amount in self.demand_nz[job]:
            if amount > ft[r]:
                return False
        return True


def _nonzero_pairs(demand: IntArray) -> list[tuple[tuple[int, int], ...]]:
    """Per job, the ``(resource, total amount)`` pairs it actually asks for."""
    if demand.shape[1] == 1:
        return [((0, v),) for v in demand[:, 0].tolist()]
    return [tuple((r, v) for r, v in enumerate(row) if v) for row in demand.tolist()]
