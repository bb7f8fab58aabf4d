"""The compiled loops and slot-availability operations, loaded through
:func:`dispatchlab.numba_loader.compiled`: ahead of time (:mod:`~dispatchlab.engine.compiled.aot`)
or, where that cannot be built, through Numba's JIT with its disk cache.

Unavailable when Numba is missing or disabled (``DISPATCHLAB_NO_NUMBA``): the general
engine then runs every simulation, and slot availabilities run their operations as plain Python.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np

from dispatchlab.engine.compiled import loop_parts, power_shadow, start_scan
from dispatchlab.engine.compiled import slot_availability_ops as ops_source
from dispatchlab.numba_loader import NUMBA, compiled, kind

#: Whether the compiled loops can run in this process.
AVAILABLE = NUMBA

#: The functions of :mod:`~dispatchlab.engine.compiled.slot_availability_ops` an availability calls.
SLOT_AVAILABILITY_OPS = ("avail_advance", "avail_add", "avail_fit", "avail_compress",
                    "avail_reserve", "book_pop_due", "avail_min_free")
#: The ones those call.
SLOT_AVAILABILITY_HELPERS = ("bisect_left", "avail_split", "avail_remove", "heap_fix",
                             "heap_push", "heap_pop", "grown")
#: The pieces the loops are made of (:mod:`.loop_parts`).
LOOP_PARTS = ("room", "room_rows", "idle_wait", "ev_room", "queue_arrays", "shift_in",
              "q_insert", "q_compact", "ends_find", "ends_insert", "ends_remove",
              "easy_shadow", "backfill_kind", "first_fit", "take", "give_back",
              "reread_nodes", "release_power", "least_power", "fixed_machine", "gather")


def availability_helpers() -> list[Callable[..., Any]]:
    """Every slot-availability function, for Numba to compile into its callers."""
    names = (*SLOT_AVAILABILITY_HELPERS, *SLOT_AVAILABILITY_OPS)
    return [getattr(ops_source, name) for name in names]


def inlined() -> list[Callable[..., Any]]:
    """The helpers Numba copies into their callers (a call costs more than their work):
    the heap's and the per-start placement steps, on the loops' hottest path, and the
    scenario loop's decision (``start_scan``, which copies the placement steps in turn).
    (Copies of copies of copies were miscompiled by Numba 0.68: nothing copied here goes
    deeper than two levels.)"""
    return [ops_source.heap_fix, ops_source.heap_push,
            ops_source.heap_pop, loop_parts.room, loop_parts.first_fit, loop_parts.take,
            loop_parts.give_back, loop_parts.q_compact, loop_parts.backfill_kind,
            loop_parts.shift_in, start_scan.start_scan]


def loop_helpers() -> list[Callable[..., Any]]:
    """Every function the compiled loops call, for Numba to compile into them."""
    from dispatchlab.engine.compiled import queue_index

    return [*availability_helpers(), *(getattr(loop_parts, name) for name in LOOP_PARTS),
            queue_index.idx_new, queue_index.idx_put, queue_index.idx_next,
            queue_index.idx_jump, start_scan.start_scan, power_shadow.block_sum,
            power_shadow.pairwise_sum, power_shadow.power_shadow]


def _aot_module() -> Any:
    from dispatchlab.engine.compiled.aot import load_module

    return load_module()


def _loop(source: Callable[..., Any], warm: Callable[[Callable[..., Any]], None]
          ) -> Callable[..., Any]:
    """A compiled loop: ahead of time, else Numba's JIT (compiled now by ``warm``)."""
    return compiled(source, helpers=loop_helpers(), inline=inlined(), aot_module=_aot_module,
                    warm=warm, what="the compiled loops")


def slot_loop_kernel() -> Callable[..., Any]:
    """The compiled strict/EASY loop, loaded (or built) on first use."""
    from dispatchlab.engine.compiled.slot_loop import slot_loop

    def warm(fn: Callable[..., Any]) -> None:
        one = np.ones(1, np.int64)
        fn(one, one, one, one, one, np.zeros(1, np.bool_), one, True, -1, False, False, 0.0,
           0.0, np.zeros((1, 2)), np.zeros(1), 0.0, np.zeros(0, np.int64), np.zeros(0))

    return _loop(slot_loop, warm)


def scenario_loop_kernel() -> Callable[..., Any]:
    """The compiled loop of a machine whose nodes change, loaded (or built) on first use."""
    from dispatchlab.engine.compiled.scenario_loop import scenario_loop

    def warm(fn: Callable[..., Any]) -> None:
        one, none = np.ones(1, np.int64), np.zeros(0, np.int64)
        fn(one - 1, one, one, True, one, one, one - 1, np.zeros(1, np.bool_), one, True, -1,
           False, np.ones((1, 1), np.int64), one, none, none, none, one - 1, none, True, one - 1,
           False, 0.0, 0.0, np.zeros((1, 2)), np.zeros(1), np.zeros(1), 0.0, none,
           np.zeros(0))

    return _loop(scenario_loop, warm)


def conservative_loop_kernel() -> Callable[..., Any]:
    """The compiled conservative-backfilling loop, loaded (or built) on first use."""
    from dispatchlab.engine.compiled.conservative_loop import conservative_loop

    def warm(fn: Callable[..., Any]) -> None:
        one = np.ones(1, np.int64)
        fn(one, one, one, one, np.zeros(1, np.int64), np.zeros(1, np.bool_), one)

    return _loop(conservative_loop, warm)


def kernel_kind() -> str:
    """``"aot"`` or ``"jit"``: how the strict/EASY loop was compiled (empty before first
    use)."""
    from dispatchlab.engine.compiled.slot_loop import slot_loop

    return kind(slot_loop)


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
        fns = {name: compiled(getattr(ops_source, name), helpers=helpers, inline=inlined(),
                              aot_module=_aot_module) for name in SLOT_AVAILABILITY_OPS}
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
