"""The engine's compiled operations — the slot-availability operations (conservative
backfilling's availability and book: :mod:`.slot_availability_ops`), the audit's capacity
sweep (:mod:`.capacity_sweep`) and the general loop's placement kernels
(:mod:`dispatchlab.engine.kernels`: check-and-take, release, first-fit) — as one
ahead-of-time unit (:data:`ENGINE_OPS`; its exports and signatures in :mod:`.aot_build`,
which the build process alone imports), and their loader.

They are loaded through :func:`dispatchlab.numba_loader.compiled`: ahead of time, else
Numba's JIT with its disk cache; the plain Python source (on lists) when Numba is missing or
disabled (``DISPATCHLAB_NO_NUMBA``).
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType, SimpleNamespace
from typing import Any

import numpy as np

from dispatchlab.engine.compiled import slot_availability_ops as ops_source
from dispatchlab.numba_aot import AotUnit, load
from dispatchlab.numba_loader import NUMBA, compiled

#: The functions of :mod:`.slot_availability_ops` an availability calls.
SLOT_AVAILABILITY_OPS = ("avail_advance", "avail_add", "avail_fit", "avail_compress",
                         "avail_reserve", "book_pop_due", "avail_min_free")
#: The ones those call.
SLOT_AVAILABILITY_HELPERS = ("bisect_left", "avail_split", "avail_remove", "heap_fix",
                             "heap_push", "heap_pop", "grown")


def availability_helpers() -> list[Callable[..., Any]]:
    """Every slot-availability function, for Numba to compile into its callers."""
    names = (*SLOT_AVAILABILITY_HELPERS, *SLOT_AVAILABILITY_OPS)
    return [getattr(ops_source, name) for name in names]


def heap_inlined() -> list[Callable[..., Any]]:
    """The heap's steps, which Numba copies into their callers (a call costs more than their
    work)."""
    return [ops_source.heap_fix, ops_source.heap_push, ops_source.heap_pop]


#: The engine's ahead-of-time unit: the slot-availability operations, the audit sweep and
#: the placement kernels (its exports are listed in :mod:`.aot_build`).
ENGINE_OPS = AotUnit("engine_ops", ("dispatchlab.engine.compiled.slot_availability_ops",
                                    "dispatchlab.engine.compiled.capacity_sweep",
                                    "dispatchlab.engine.kernels",
                                    "dispatchlab.engine.compiled.compiled_ops"),
                     "dispatchlab.engine.compiled.aot_build:exports")


def aot_module() -> ModuleType | None:
    """The engine's ahead-of-time module (built on first use), or ``None``."""
    return load(ENGINE_OPS)


_ops: SimpleNamespace | None = None


def slot_availability_ops() -> SimpleNamespace:
    """The slot-availability operations, loaded on first use: ahead of time compiled, else
    jitted (compiled now or loaded from Numba's cache), both on int64 arrays (attribute
    ``compiled`` true); the plain Python source on lists when Numba is unavailable."""
    global _ops
    if _ops is None:
        if not NUMBA:
            _ops = python_slot_availability_ops()
            return _ops
        helpers = availability_helpers()
        fns = {name: compiled(getattr(ops_source, name), helpers=helpers,
                              inline=heap_inlined(), aot_module=aot_module)
               for name in SLOT_AVAILABILITY_OPS}
        _ops = SimpleNamespace(compiled=True, **fns)
        _exercise(_ops)
    return _ops


def python_slot_availability_ops() -> SimpleNamespace:
    """The slot-availability operations as plain Python (on lists), whatever Numba's state."""
    return SimpleNamespace(compiled=False,
                           **{name: getattr(ops_source, name) for name in SLOT_AVAILABILITY_OPS})


def _exercise(ops: SimpleNamespace) -> None:
    """Call every operation once on a tiny availability, so a JIT compiles them now."""
    times, free, jobs = np.zeros(8, np.int64), np.zeros(8, np.int64), np.zeros(1, np.int64)
    start, end = np.full(1, -1, np.int64), np.full(1, -1, np.int64)
    heap, pos, out = np.zeros(1, np.int64), np.full(1, -1, np.int64), np.zeros(1, np.int64)
    key = np.zeros(1, np.int64)
    free[0] = 1
    n = ops.avail_advance(times, free, 1, 0)
    n = ops.avail_add(times, free, n, 0, 1, 0)
    ops.avail_fit(times, free, n, 1, 1, 1, 1)
    n, hn, _ = ops.avail_reserve(times, free, n, 0, 1, 1, 9, start, end, key, heap, pos, 0)
    ops.avail_compress(times, free, n, jobs, 0, 1, start, end, jobs, 0, key, heap, pos, out)
    ops.book_pop_due(start, key, heap, pos, hn, 9, out)
    ops.avail_min_free(free, n)
