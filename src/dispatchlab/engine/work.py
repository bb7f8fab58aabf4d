"""How much work a job holds and how fast it runs: the engine's model of execution.

A job's work is measured in *reference seconds*: its actual run time on the units it asks
for (``runtime`` on ``units``). On ``n`` units a malleable job runs ``(units / n)^α`` times
as long (``α`` = its speed-up exponent: time ``mass / n^α`` with ``mass = runtime ·
units^α``, Mejri et al. §3); a rigid job always runs on its own units, factor 1, so its
times stay whole seconds.

- A segment that starts with ``w`` reference seconds left on ``n`` units ends
  ``ceil(w · factor(n))`` seconds after its work begins, unless the wall-time kill comes
  first (``run start + walltime``; a reconfiguration keeps the run going, an abort or a
  requeue starts a new run).
- A reconfiguration ``n → m`` banks the work done so far and charges a pause during which
  the job does no work: ``(D/n)(ceil(n/m) − 1)`` seconds when shrinking, ``(D/m)(ceil(m/n)
  − 1)`` when growing, ``D`` the job's data (Mejri et al. eq. 3; 0 without data), rounded
  up to whole seconds.
- An aborted or requeued job loses the work of its segment, unless it is checkpointable
  (``checkpoint`` interval > 0): it then keeps what its last checkpoint saved — one every
  ``checkpoint`` seconds of work since its segment's work began.
"""

from __future__ import annotations

import math

from dispatchlab.workload.workload import Workload


class WorkModel:
    """Per-job execution constants of one run (Python lists: read per event)."""

    __slots__ = ("alpha", "checkpoint", "data", "malleable", "max_units", "min_units",
                 "runtime", "units", "walltime")

    def __init__(self, workload: Workload):
        self.runtime: list[int] = workload.runtime.tolist()
        self.walltime: list[int] = workload.walltime.tolist()
        self.units: list[int] = workload.units.tolist()
        self.min_units: list[int] = workload.min_units.tolist()
        self.max_units: list[int] = workload.max_units.tolist()
        self.alpha: list[float] = workload.alpha.tolist()
        self.data: list[float] = workload.data.tolist()
        self.checkpoint: list[int] = workload.checkpoint.tolist()
        self.malleable = bool(((workload.min_units != workload.units)
                               | (workload.max_units != workload.units)).any())

    def factor(self, job: int, n: int) -> float:
        """Wall seconds per reference second on ``n`` units."""
        u = self.units[job]
        return 1.0 if n == u else (u / n) ** self.alpha[job]

    def duration(self, job: int, left: float, n: int) -> int:
        """Whole seconds to finish ``left`` reference seconds on ``n`` units."""
        u = self.units[job]
        if n == u:
            return math.ceil(left)
        return math.ceil(left * (u / n) ** self.alpha[job] - 1e-9)

    def done(self, job: int, seconds: int, n: int) -> float:
        """Reference seconds done by ``seconds`` of work on ``n`` units."""
        return seconds / self.factor(job, n)

    def reconfiguration_pause(self, job: int, n: int, m: int) -> int:
        """Seconds without progress when the job moves from ``n`` to ``m`` units."""
        d = self.data[job]
        if d <= 0 or n == m:
            return 0
        return math.ceil(reconfiguration_time(d, n, m) - 1e-9)

    def saved(self, job: int, seconds: int) -> int:
        """Seconds of work a checkpointable job keeps after ``seconds`` of work (0 if none)."""
        c = self.checkpoint[job]
        return 0 if c <= 0 else (seconds // c) * c


def reconfiguration_time(data: float, n: int, m: int) -> float:
    """Mejri et al. eq. 3: seconds to move ``data`` from ``n`` to ``m`` units (not rounded)."""
    if n >= m:
        return (data / n) * (math.ceil(n / m) - 1)
    return (data / m) * (math.ceil(m / n) - 1)
