"""Machine-wide resources: a budget that is not per node, checked by the engine at every start.

Power (W) is the first: each running job draws its power, and the engine refuses a start
(or a reconfiguration) that would take the total above the cap in force. The cap may
change over time (scenario ``power_cap``); when it falls below what already runs, the
policy :data:`OVER_CAP_POLICIES` applies (default: nothing is killed, no start that raises
the power is accepted until enough is freed), and the time spent over the cap is reported
(``over_cap_seconds``). The machine's power, idle nodes included, is kept by
:class:`~dispatchlab.engine.power_meter.MachinePower`.

A :class:`PowerModel` says what a job draws on a placement and what the nodes draw on their
own; :class:`JobColumnPower` (the default) takes each job's power from the workload's
``power`` column and gives nodes no power of their own.
"""

from __future__ import annotations

import math
from typing import Protocol

import numpy as np

from dispatchlab.arrays import IntArray
from dispatchlab.errors import ConfigError
from dispatchlab.workload.workload import Workload

#: Tolerance of the cap check (W): sums of float powers drift by far less.
EPS = 1e-6

#: What the engine does when the cap falls below the power in use: ``wait`` (default) —
#: nothing is stopped, no start that raises the power is accepted until it is under the
#: cap again; ``kill-youngest`` — the most recently started jobs are stopped for good
#: until it is (outcome ``aborted``, counted as failed); ``requeue-youngest`` — they go back
#: to the queue instead (restarting from zero or their last checkpoint). Either way the
#: dispatcher sees them in ``events.aborted``.
OVER_CAP_POLICIES = ("wait", "kill-youngest", "requeue-youngest")


class PowerModel(Protocol):
    """What the engine needs to account for power."""

    def job_power(self, job: int, nodes: IntArray, counts: IntArray) -> float:
        """Power (W) job ``job`` draws on ``nodes`` × ``counts`` units."""
        ...

    def describe(self) -> dict[str, object]:
        """JSON-ready configuration."""
        ...


class JobColumnPower:
    """Each job draws the power of the workload's ``power`` column, wherever it runs."""

    def __init__(self, workload: Workload):
        power = workload.power
        missing = ~np.isfinite(power)
        if missing.any():
            j = int(np.flatnonzero(missing)[0])
            raise ConfigError(
                f"{workload.source}: a power budget needs each job's power, and "
                f"{int(missing.sum())} job(s) have none (first: job {int(workload.job_id[j])});"
                " give the workload a power column", field="power")
        if (power < 0).any():
            j = int(np.flatnonzero(power < 0)[0])
            raise ConfigError(f"{workload.source}: job {int(workload.job_id[j])} has "
                              "negative power", field="power")
        self._power: list[float] = power.tolist()

    def job_power(self, job: int, nodes: IntArray, counts: IntArray) -> float:
        """The job's column value."""
        return self._power[job]

    def describe(self) -> dict[str, object]:
        """Name only."""
        return {"name": "job-column"}


def fits_cap(used: float, extra: float, cap: float) -> bool:
    """True when ``used + extra`` stays within ``cap`` (``inf`` = no cap)."""
    return math.isinf(cap) or used + extra <= cap + EPS
