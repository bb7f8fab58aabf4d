"""The compiled loops, loaded through :func:`dispatchlab.numba_loader.compiled`: ahead of time
(the unit :data:`LOOPS`, exports declared in :mod:`.aot_build`) or, where that cannot be
built, through Numba's JIT with its disk cache.

Unavailable when Numba is missing or disabled (``DISPATCHLAB_NO_NUMBA``): the general
engine then runs every simulation.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from dispatchlab.dispatchers.rule_based.compiled import (
    book_parts,
    conservative_order,
    dynamic_order,
    loop_parts,
    power_shadow,
    start_scan,
    vector_parts,
    vector_rows,
    vector_shadow,
)
from dispatchlab.engine.compiled.compiled_ops import availability_helpers, heap_inlined
from dispatchlab.engine.core import loop as core_loop
from dispatchlab.engine.core import node_rows, segment_parts
from dispatchlab.numba_aot import AotUnit, load
from dispatchlab.numba_loader import NUMBA, compiled, kind

#: Whether the compiled loops can run in this process.
AVAILABLE = NUMBA

#: The pieces the loops are made of (:mod:`.loop_parts`).
LOOP_PARTS = ("room", "room_rows", "idle_wait", "ev_room", "queue_arrays", "shift_in",
              "next_joiner", "q_insert", "q_compact", "ends_find", "ends_insert", "ends_remove",
              "easy_shadow", "backfill_kind", "first_fit", "take", "give_back",
              "reread_nodes", "release_power", "least_power", "fixed_machine", "gather",
              "sample_point", "log_node")
#: The dynamic orderings' parts (:mod:`.dynamic_order`).
DYNAMIC_ORDER = ("score_of", "score_before", "sort_by_score", "order_queue", "order_work")

#: The pieces of the loop of jobs asking different unit vectors (:mod:`.vector_parts`).
VECTOR_PARTS = ("vfirst_fit", "fits_total", "any_free", "take_v", "give_v", "vreserve",
                "_on_w", "_active", "_used", "_busy", "node_part", "reread", "start_delta",
                "nodes_power", "vplace_energy", "vplace")


def inlined() -> list[Callable[..., Any]]:
    """The helpers Numba copies into their callers (a call costs more than their work):
    the heap's and the per-start placement steps, on the loops' hottest path, and the
    scenario loop's decision (``start_scan``, which copies the placement steps in turn).
    (Copies of copies of copies were miscompiled by Numba 0.68: nothing copied here goes
    deeper than two levels.)"""
    return [*heap_inlined(), loop_parts.room, loop_parts.first_fit, loop_parts.take,
            loop_parts.give_back, loop_parts.q_compact, loop_parts.backfill_kind,
            loop_parts.shift_in, start_scan.start_scan, *core_inlined()]


def core_inlined() -> list[Callable[..., Any]]:
    """The engine core's phases and the strict/EASY kernel's queue steps, copied into the
    core's loop (the decision itself is a call)."""
    from dispatchlab.dispatchers.rule_based.compiled import slot_book

    return [core_loop.next_time, core_loop.end_segments, core_loop.scenario_rows,
            core_loop.open_segments, core_loop.sample, core_loop.arrivals,
            slot_book.slot_arrive, slot_book.slot_leave]


def loop_helpers() -> list[Callable[..., Any]]:
    """Every function the compiled loops call, for Numba to compile into them."""
    from dispatchlab.dispatchers.rule_based.compiled import poweroff_loop, queue_index
    from dispatchlab.dispatchers.slot_book_ops import (
        compress_skipping,
        fit_runs,
        may_move,
        rebuild_book,
    )

    return [*availability_helpers(), *(getattr(loop_parts, name) for name in LOOP_PARTS),
            node_rows.stop_run, node_rows.apply_node_rows, node_rows.leave_running,
            node_rows.row_moves, node_rows.next_victim, node_rows.bank_abort, rebuild_book,
            fit_runs, may_move, compress_skipping, book_parts.compress_book,
            conservative_order.reserve_window,
            queue_index.idx_new, queue_index.idx_put, queue_index.idx_next,
            queue_index.idx_jump, start_scan.start_scan, power_shadow.block_sum,
            power_shadow.pairwise_sum, power_shadow.power_shadow, poweroff_loop.touch,
            poweroff_loop.fitting, poweroff_loop.starts_power,
            *(getattr(dynamic_order, name) for name in DYNAMIC_ORDER),
            *(getattr(vector_parts, name) for name in VECTOR_PARTS),
            vector_shadow.vpower_shadow, vector_rows.apply_vector_rows,
            segment_parts.seg_room, segment_parts.run_end, *core_helpers()]


def core_helpers() -> list[Callable[..., Any]]:
    """The engine core's loop, phases and record, and the strict/EASY kernel on it
    (:mod:`.slot_book`); these import Numba."""
    from dispatchlab.dispatchers.rule_based.compiled import slot_book
    from dispatchlab.engine.core import record

    return [record.new_core, record._machine_sums, core_loop.next_time,
            core_loop.end_segments, core_loop.scenario_rows, core_loop.open_segments,
            core_loop.sample, core_loop.arrivals, core_loop.run_core, core_loop.outcome,
            slot_book.new_slot_book, slot_book.slot_arrive, slot_book.slot_leave,
            slot_book.slot_decide]


_HERE = "dispatchlab.dispatchers.rule_based.compiled."
#: The rule-based wing's ahead-of-time unit: its loops and everything compiled into them, one
#: module per loop (each 40-60 s of CPU to build: they build in parallel, each when needed).
LOOPS = AotUnit("rule_based_loops", (
    *(_HERE + m for m in ("slot_loop", "slot_book", "conservative_loop", "start_scan",
                          "queue_index", "loop_parts", "power_shadow", "kernel",
                          "poweroff_loop", "dynamic_order", "conservative_scenario_loop",
                          "book_parts", "conservative_order", "vector_loop", "vector_parts",
                          "vector_shadow", "vector_rows")),
    *("dispatchlab.engine.core." + m for m in ("codes", "parts", "node_rows",
                                               "segment_parts", "record", "loop")),
    "dispatchlab.dispatchers.slot_book_ops",
    "dispatchlab.engine.compiled.slot_availability_ops",
    "dispatchlab.engine.compiled.compiled_ops"),
    _HERE + "aot_build:exports",
    parts=(("poweroff_loop",), ("vector_loop",), ("conservative_scenario_loop",),
           ("scenario_slots",), ("slot_loop",), ("conservative_loop",)))


def _aot_module() -> ModuleType | None:
    return load(LOOPS)


def _loop(source: Callable[..., Any], warm: Callable[[Callable[..., Any]], None]
          ) -> Callable[..., Any]:
    """A compiled loop: ahead of time, else Numba's JIT (compiled now by ``warm``)."""
    return compiled(source, helpers=loop_helpers, inline=inlined, aot_module=_aot_module,
                    warm=warm, what="the compiled loops")


def slot_loop_kernel() -> Callable[..., Any]:
    """The compiled strict/EASY loop, loaded (or built) on first use."""
    from dispatchlab.dispatchers.rule_based.compiled.slot_loop import slot_loop

    def warm(fn: Callable[..., Any]) -> None:
        one = np.ones(1, np.int64)
        fn(one, one, one, one, one, np.zeros(1, np.bool_), one, True, -1, False, False, 0.0,
           0.0, np.zeros((1, 2)), np.zeros(1), 0.0, np.zeros(0, np.int64), np.zeros(0), 0,
           np.zeros(0), np.zeros(0))

    return _loop(slot_loop, warm)


def scenario_loop_kernel() -> Callable[..., Any]:
    """The strict/EASY kernel on the engine core (:func:`.slot_book.scenario_slots`: a
    machine whose nodes change, or a fixed one), loaded (or built) on first use."""
    from dispatchlab.dispatchers.rule_based.compiled.slot_book import scenario_slots

    def warm(fn: Callable[..., Any]) -> None:
        one, none = np.ones(1, np.int64), np.zeros(0, np.int64)
        fn((one - 1, one, one, one, one - 1, np.zeros(1, np.bool_), True, True),
           (one, np.ones((1, 1), np.int64), one), (none, none, none, one - 1, none),
           (False, 0.0, 0.0, np.zeros((1, 2)), np.zeros(1), np.zeros(1), none, np.zeros(0)),
           (one, one - 1, True, -1, False, 0.0, 0, np.zeros(0), np.zeros(0)))

    return _loop(scenario_slots, warm)


def poweroff_loop_kernel() -> Callable[..., Any]:
    """The compiled loop of a fixed machine whose idle nodes are switched off (the
    ``+poweroff`` wrapper), loaded (or built) on first use."""
    from dispatchlab.dispatchers.rule_based.compiled.poweroff_loop import poweroff_loop

    def warm(fn: Callable[..., Any]) -> None:
        one, zero, none = np.ones(1, np.int64), np.zeros(1, np.int64), np.zeros(0, np.int64)
        fn(zero, one, one, True, one, one, zero, np.zeros(1, np.bool_), one, True, -1, False,
           np.ones((1, 1), np.int64), one, zero, zero, zero, 900, none, none, none, zero, none,
           True, zero, False, 0.0, 0.0, np.zeros((1, 2)), np.zeros(1), np.zeros(1), 0.0,
           np.zeros((1, 4)), none, np.zeros(0), 0, np.zeros(0), np.zeros(0))

    return _loop(poweroff_loop, warm)


def conservative_loop_kernel() -> Callable[..., Any]:
    """The compiled conservative-backfilling loop, loaded (or built) on first use."""
    from dispatchlab.dispatchers.rule_based.compiled.conservative_loop import conservative_loop

    def warm(fn: Callable[..., Any]) -> None:
        one = np.ones(1, np.int64)
        fn(one, one, one, one, np.zeros(1, np.int64), np.zeros(1, np.bool_), one, -1, 0,
           np.zeros(0), np.zeros(0))

    return _loop(conservative_loop, warm)


def conservative_scenario_loop_kernel() -> Callable[..., Any]:
    """The compiled loop of conservative backfilling on a machine that changes (nodes, a
    power cap), loaded (or built) on first use."""
    from dispatchlab.dispatchers.rule_based.compiled.conservative_scenario_loop import (
        conservative_scenario_loop,
    )

    def warm(fn: Callable[..., Any]) -> None:
        one, none = np.ones(1, np.int64), np.zeros(0, np.int64)
        fn(one - 1, one, one, True, one, one, one - 1, np.zeros(1, np.bool_), one,
           np.ones((1, 1), np.int64), one, none, none, none, one - 1, none, True, one - 1,
           False, 0.0, 0.0, np.zeros((1, 2)), np.zeros(1), np.zeros(1), none, np.zeros(0))

    return _loop(conservative_scenario_loop, warm)


def vector_loop_kernel() -> Callable[..., Any]:
    """The compiled loop of jobs asking different unit vectors, loaded (or built) on first
    use."""
    from dispatchlab.dispatchers.rule_based.compiled.vector_loop import vector_loop

    def warm(fn: Callable[..., Any]) -> None:
        one, none = np.ones(1, np.int64), np.zeros(0, np.int64)
        fn(one - 1, one, one, True, one, one, one - 1, np.zeros(1, np.bool_),
           np.ones((1, 1), np.int64), np.ones((1, 1), np.int64), 1, -1, False, False, 0.0, 0.0,
           0, np.zeros((1, 5)), np.full(3, -1, np.int64), False, np.zeros(1), np.zeros(1),
           np.zeros(1), none, np.zeros(0), False, np.zeros((1, 5)), np.full(3, -1, np.int64),
           np.ones(1), none, none, none, one - 1, none, True, one - 1)

    return _loop(vector_loop, warm)


def kernel_kind() -> str:
    """``"aot"`` or ``"jit"``: how the strict/EASY loop was compiled (empty before first
    use)."""
    from dispatchlab.dispatchers.rule_based.compiled.slot_loop import slot_loop

    return kind(slot_loop)
