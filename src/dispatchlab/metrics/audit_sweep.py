"""The audit's capacity sweep as one compiled loop over events.

Events are segment ends, node-state changes and segment starts, ordered by time and kind
(ends, then states, then starts). The loop keeps each node's usage per resource and its
state: a start on a node that is not on, a usage above capacity, or a node leaving while
used stops it with a code and the event's position. Memory is the nodes × resources usage
and the events — nothing per (segment, node) pair — so a trace of 300,000 jobs spanning
tens of millions of node placements is audited in a fraction of a second.

The loop itself is :func:`dispatchlab.engine.compiled.capacity_sweep.sweep`: taken from the
engine's ahead-of-time module (:data:`~dispatchlab.engine.compiled.compiled_ops.ENGINE_OPS`)
when it is there (no compilation in the run), else compiled by Numba's JIT, else plain
Python (``DISPATCHLAB_NO_NUMBA``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dispatchlab.engine.compiled.capacity_sweep import (
    LEFT_WHILE_USED,
    OK,
    OVER_CAPACITY,
    STARTED_ON_UNUSABLE,
    sweep,
)
from dispatchlab.engine.compiled.compiled_ops import aot_module
from dispatchlab.numba_loader import NUMBA, compiled

__all__ = ["LEFT_WHILE_USED", "OK", "OVER_CAPACITY", "STARTED_ON_UNUSABLE", "aot_sweep",
           "sweep", "sweep_kernel"]


def aot_sweep() -> Callable[..., Any] | None:
    """The sweep from the engine's ahead-of-time module (built on first use, once per
    machine), or ``None`` where Numba is off or the module cannot be built."""
    if not NUMBA:
        return None
    module = aot_module()
    return None if module is None else getattr(module, "audit_sweep", None)


def sweep_kernel() -> Callable[..., Any]:
    """The compiled sweep: ahead of time when available, else Numba's JIT (first use), else
    plain Python."""
    return compiled(sweep, aot_module=aot_module, aot_name="audit_sweep", fallback=sweep)
