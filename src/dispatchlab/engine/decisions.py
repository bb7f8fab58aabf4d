"""What a dispatcher may return at a decision point: small typed values.

The engine validates every decision before applying it (one validator per type, looked up
in a table: :mod:`dispatchlab.engine.appliers`) and raises
:class:`~dispatchlab.errors.InvalidDecision` naming the job, node and value at fault.
"""

from __future__ import annotations

from dataclasses import dataclass

from dispatchlab.arrays import IntArray


@dataclass(slots=True)
class Placed:
    """A decision placing job ``job`` with ``counts[k]`` units on node ``nodes[k]``
    (``nodes`` strictly increasing). Treat as immutable (not frozen only because frozen
    dataclasses are several times slower to build, and a start builds one)."""

    job: int
    nodes: IntArray
    counts: IntArray


@dataclass(slots=True)
class Start(Placed):
    """Start queued job ``job`` now on its placement. A rigid job places exactly its
    units; a malleable job any number within its ``[min_units, max_units]``."""


@dataclass(frozen=True, slots=True)
class WakeAt:
    """Call the dispatcher again at ``time`` even if nothing else happens then."""

    time: int


@dataclass(frozen=True, slots=True)
class Plan:
    """An intended future start (a reservation) — recorded for analysis, not executed."""

    job: int
    time: int


@dataclass(frozen=True, slots=True)
class PowerOff:
    """Switch idle, powered-on ``nodes`` off (they shut down for their shutdown delay)."""

    nodes: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class PowerOn:
    """Switch ``nodes`` that are off on (usable after their boot delay)."""

    nodes: tuple[int, ...]


@dataclass(slots=True)
class Reconfigure(Placed):
    """Move running malleable job ``job`` onto its new placement now.

    The engine banks the work done so far, charges the reconfiguration cost of the job's
    speed-up model and recomputes its end (:mod:`dispatchlab.engine.work`).
    """


@dataclass(frozen=True, slots=True)
class Kill:
    """Stop running job ``job`` for good (outcome ``cancelled``)."""

    job: int


@dataclass(frozen=True, slots=True)
class Requeue:
    """Stop running job ``job`` and put it back in the queue (outcome ``preempted``).

    ``keep_progress``: resume from the work done (as after a checkpoint taken now) instead
    of from zero.
    """

    job: int
    keep_progress: bool = False


Decision = Start | WakeAt | Plan | PowerOff | PowerOn | Reconfigure | Kill | Requeue
