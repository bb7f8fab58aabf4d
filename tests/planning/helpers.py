"""Small planning instances for the tests."""

from __future__ import annotations

import numpy as np

from dispatchlab.dispatchers.offline_plan.planner.instance import PlanInstance


def instance(jobs: list[tuple[int, int, int, int]], nodes: int = 2, cores: int = 4,
             step: int = 1, power: list[float] | None = None) -> PlanInstance:
    """Jobs as (submit, duration, units, cores per unit) on ``nodes`` × ``cores``."""
    n = len(jobs)
    arr = np.array(jobs, dtype=np.int64).reshape(n, 4)
    return PlanInstance(
        rows=np.arange(n), job_ids=np.arange(1, n + 1), submit=arr[:, 0], duration=arr[:, 1],
        units=arr[:, 2], req=arr[:, 3:4].copy(),
        power=np.asarray(power if power is not None else [10.0 * c * u for _, _, u, c in jobs],
                         dtype=np.float64),
        capacity=np.full((nodes, 1), cores, dtype=np.int64), resources=("cores",),
        origin=0, step=step)


def check_feasible(inst: PlanInstance, start: np.ndarray, alloc: list) -> None:
    """Assert every job starts after release, places its units and no slot overflows."""
    slots = inst.slots
    horizon = int((start + slots).max()) + 1
    used = np.zeros((horizon, *inst.capacity.shape), dtype=np.int64)
    for j in range(len(inst)):
        assert start[j] >= inst.release_slot[j]
        assert sum(u for _, u in alloc[j]) == inst.units[j]
        for node, u in alloc[j]:
            used[start[j]:start[j] + slots[j], node] += u * inst.req[j]
    assert (used <= inst.capacity[None]).all()
