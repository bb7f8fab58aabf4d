"""What a dispatcher may return at a decision point: small typed values.

The engine validates every decision before applying it. Later families extend this set
(power states, capacity changes, malleable reconfiguration) without changing the loop:
each new decision type gets its own validator and applier in the engine.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]


@dataclass(slots=True)
class Start:
    """Start queued job ``job`` now with ``counts[k]`` units on node ``nodes[k]``.

    ``nodes`` must be strictly increasing. Treat as immutable (not frozen only because
    frozen dataclasses are several times slower to build, and this one is built per start).
    """

    job: int
    nodes: IntArray
    counts: IntArray


@dataclass(frozen=True, slots=True)
class WakeAt:
    """Call the dispatcher again at ``time`` even if nothing else happens then."""

    time: int


@dataclass(frozen=True, slots=True)
class Plan:
    """An intended future start (a reservation) — recorded for analysis, not executed."""

    job: int
    time: int


Decision = Start | WakeAt | Plan
