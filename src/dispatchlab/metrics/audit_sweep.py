"""The audit's capacity sweep as one compiled loop over events.

Events are segment ends, node-state changes and segment starts, ordered by time and kind
(ends, then states, then starts). The loop keeps each node's usage per resource and its
state: a start on a node that is not on, a usage above capacity, or a node leaving while
used stops it with a code and the event's position. Memory is the nodes × resources usage
and the events — nothing per (segment, node) pair — so a trace of 300,000 jobs spanning
tens of millions of node placements is audited in a fraction of a second.

The loop itself is :func:`dispatchlab.engine.compiled.capacity_sweep.sweep`: taken from the
engine's ahead-of-time module when it is there (no compilation in the run), else compiled by
Numba's JIT, else plain Python (``DISPATCHLAB_NO_NUMBA``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from dispatchlab.engine.compiled.capacity_sweep import (
    LEFT_WHILE_USED,
    OK,
    OVER_CAPACITY,
    STARTED_ON_UNUSABLE,
    sweep,
)

__all__ = ["LEFT_WHILE_USED", "OK", "OVER_CAPACITY", "STARTED_ON_UNUSABLE", "aot_sweep",
           "sweep", "sweep_kernel"]


def _compiled() -> Callable[..., Any]:
    if os.environ.get("DISPATCHLAB_NO_NUMBA"):
        return sweep
    try:
        import numba
    except ImportError:  # pragma: no cover - exercised only without numba installed
        return sweep
    return numba.njit(cache=True, nogil=True)(sweep)


_KERNEL: Callable[..., Any] | None = None
_AOT: Callable[..., Any] | None = None
_AOT_LOOKED = False


def aot_sweep() -> Callable[..., Any] | None:
    """The sweep from the engine's ahead-of-time module (built on first use, once per
    machine), or ``None`` where Numba is off or the module cannot be built."""
    global _AOT, _AOT_LOOKED
    if not _AOT_LOOKED:
        _AOT_LOOKED = True
        if not os.environ.get("DISPATCHLAB_NO_NUMBA"):
            from dispatchlab.engine.compiled.aot import load_module

            module = load_module()
            _AOT = None if module is None else getattr(module, "audit_sweep", None)
    return _AOT


def sweep_kernel() -> Callable[..., Any]:
    """The compiled sweep: ahead of time when available, else Numba's JIT (first use)."""
    global _KERNEL
    if _KERNEL is None:
        _KERNEL = aot_sweep() or _compiled()
    return _KERNEL
