"""What the offline planner plans: a chunk of jobs on a platform, in time slots.

Time is discretised in slots of ``step`` seconds from ``origin`` (slot ``k`` covers
``[origin + k·step, origin + (k+1)·step)``): a job submitted at ``q`` may start at slot
``ceil((q − origin)/step)`` or later (never before its submission), and holds its nodes for
``ceil(duration/step)`` slots (at least one), so a plan made in slots is feasible in
seconds. ``busy`` is capacity already taken when the chunk starts (jobs still running from
the previous chunk, or planned by it): ``(since, until, usage)``, usage a nodes ×
resources matrix held over ``[since, until)`` seconds (slots rounded outwards). ``lst`` is
each job's latest desired start (the workload's ``lst``, else its submission plus its
queue's expected wait), an ordering criterion.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dispatchlab.arrays import FloatArray, IntArray
from dispatchlab.engine.simulator import map_requests
from dispatchlab.errors import ConfigError
from dispatchlab.platform.platform import CORES, Platform
from dispatchlab.workload.workload import Workload

#: Which duration the planner assumes: the requested wall-time or the actual run time.
DURATIONS = ("walltime", "runtime")


#: Longest plan slot (s): one day already rounds every job up to whole days.
MAX_STEP = 86400


@dataclass(frozen=True, eq=False)
class PlanInstance:
    """Jobs (rows of a workload) to plan on ``capacity`` (nodes × resources)."""

    rows: IntArray
    job_ids: IntArray
    submit: IntArray
    duration: IntArray
    units: IntArray
    req: IntArray
    power: FloatArray
    capacity: IntArray
    resources: tuple[str, ...]
    origin: int = 0
    step: int = 60
    busy: tuple[tuple[int, int, IntArray], ...] = ()
    meta: dict[str, Any] = field(default_factory=dict)
    lst: IntArray = field(default_factory=lambda: np.empty(0, np.int64))

    def __post_init__(self) -> None:
        if len(self.lst) == 0:
            object.__setattr__(self, "lst", np.asarray(self.submit, dtype=np.int64).copy())
        if not 0 < self.step <= MAX_STEP:
            raise ConfigError(f"plan step must be between 1 s and one day ({MAX_STEP} s), "
                              f"got {self.step}", field="step")
        n = len(self.rows)
        for name in ("job_ids", "submit", "duration", "units"):
            if len(getattr(self, name)) != n:
                raise ConfigError(f"instance column {name}: {len(getattr(self, name))} "
                                  f"values for {n} jobs", field=name)
        if self.req.shape != (n, self.capacity.shape[1]):
            raise ConfigError("req must be jobs × platform resources", field="req")

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def n_nodes(self) -> int:
        """Nodes of the platform."""
        return int(self.capacity.shape[0])

    @property
    def cores_col(self) -> int:
        """Column of the cores resource."""
        return self.resources.index(CORES)

    @property
    def total_cores(self) -> int:
        """Cores of the whole machine."""
        return int(self.capacity[:, self.cores_col].sum())

    @property
    def release_slot(self) -> IntArray:
        """First slot each job may start in (its submission, rounded up)."""
        rel = -(-(self.submit - self.origin) // self.step)
        return np.maximum(rel, 0).astype(np.int64)

    @property
    def slots(self) -> IntArray:
        """Slots each job holds its nodes (its duration rounded up, at least one)."""
        return np.maximum(-(-self.duration // self.step), 1).astype(np.int64)

    @property
    def cores_per_unit(self) -> IntArray:
        """Cores one unit of each job asks."""
        return self.req[:, self.cores_col].copy()

    def subset(self, keep: Sequence[int] | IntArray) -> PlanInstance:
        """The instance restricted to positions ``keep``."""
        k = np.asarray(keep, dtype=np.int64)
        return PlanInstance(self.rows[k], self.job_ids[k], self.submit[k], self.duration[k],
                            self.units[k], self.req[k], self.power[k], self.capacity,
                            self.resources, self.origin, self.step, self.busy, dict(self.meta),
                            self.lst[k])


def from_workload(
    workload: Workload,
    platform: Platform,
    rows: Sequence[int] | IntArray | None = None,
    duration: str = "walltime",
    origin: int | None = None,
    step: int = 60,
    busy: Sequence[tuple[int, int, IntArray]] = (),
    watts_per_core: float | None = None,
    watts_name: str = "watts_per_core",
) -> PlanInstance:
    """An instance of the workload's ``rows`` (default: all) on ``platform``.

    ``duration``: ``walltime`` (what a scheduler knows) or ``runtime`` (the thesis's
    offline study: durations from the logs). ``origin`` defaults to the first submission.
    A job's power (W, the whole job) is the workload's ``power`` column; a job without a
    figure gets ``watts_per_core`` × its cores, or is a :class:`ConfigError` naming it when
    that is not given (``watts_name``: how the caller spells it, e.g. ``--watts-per-core``).
    A job larger than the empty machine is a :class:`ConfigError`."""
    if duration not in DURATIONS:
        raise ConfigError(f"plan duration must be one of {DURATIONS}, got '{duration}'",
                          field="duration")
    if watts_per_core is not None and not (math.isfinite(watts_per_core)
                                           and watts_per_core >= 0):
        raise ConfigError(f"must be a finite number of W ≥ 0, got {watts_per_core}",
                          field=watts_name)
    idx = np.arange(workload.n_jobs) if rows is None else np.asarray(rows, dtype=np.int64)
    req = map_requests(workload, platform)[idx]
    dur = (workload.walltime if duration == "walltime" else workload.runtime)[idx]
    if (dur < 0).any():
        j = int(idx[np.flatnonzero(dur < 0)[0]])
        raise ConfigError(f"{workload.source}: job {int(workload.job_id[j])}: unknown "
                          f"{duration} (negative)", field=duration)
    power = workload.power[idx].astype(np.float64)
    missing = ~np.isfinite(power)
    if missing.any():
        if watts_per_core is None:
            j = int(idx[np.flatnonzero(missing)[0]])
            raise ConfigError(f"{workload.source}: job {int(workload.job_id[j])} has no power "
                              f"figure; give {watts_name} (W per core) for such jobs",
                              field="power")
        cores = req[:, platform.resources.index(CORES)] * workload.units[idx]
        power[missing] = watts_per_core * cores[missing]
    ewt = np.array([q.ewt for q in workload.queues], dtype=np.int64)
    lst = np.where(workload.lst[idx] >= 0, workload.lst[idx],
                   workload.submit[idx] + (ewt[workload.queue[idx]] if len(ewt) else 0))
    inst = PlanInstance(
        rows=idx, job_ids=workload.job_id[idx].astype(np.int64),
        submit=workload.submit[idx].astype(np.int64), duration=dur.astype(np.int64),
        units=workload.units[idx].astype(np.int64), req=req, power=power,
        capacity=np.asarray(platform.capacity, dtype=np.int64), resources=platform.resources,
        origin=int(workload.submit[idx].min()) if origin is None and len(idx) else int(origin or 0),
        step=step, busy=tuple((int(a), int(b), np.asarray(u, np.int64)) for a, b, u in busy),
        meta={"workload": workload.source, "platform": platform.name,
              "nodes": int(platform.capacity.shape[0]), "duration": duration, "step": step},
        lst=lst.astype(np.int64),
    )
    check_hostable(inst, workload.source)
    return inst


def check_hostable(inst: PlanInstance, source: str = "<instance>") -> None:
    """Raise :class:`ConfigError` for a job that does not fit the empty machine."""
    from dispatchlab.platform.platform import units_fitting

    for k in range(len(inst)):
        if not inst.req[k].any():
            raise ConfigError(f"{source}: job {int(inst.job_ids[k])} requests no resource",
                              field="req")
        if int(units_fitting(inst.capacity, inst.req[k]).sum()) < inst.units[k]:
            raise ConfigError(f"{source}: job {int(inst.job_ids[k])} needs {inst.units[k]} "
                              "units, more than the empty machine holds", field="units")
