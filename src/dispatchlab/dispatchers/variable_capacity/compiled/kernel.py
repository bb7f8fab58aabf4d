"""The first-fit loop, loaded through :func:`dispatchlab.numba_loader.compiled`: ahead of
time (the unit :data:`FIRST_FIT_LOOP`, exports declared in :mod:`.aot_build`) or, where that
cannot be built, through Numba's JIT with its disk cache."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from dispatchlab.engine.compiled.compiled_ops import heap_inlined
from dispatchlab.numba_aot import AotUnit, load
from dispatchlab.numba_loader import compiled

_HERE = "dispatchlab.dispatchers.variable_capacity.compiled."
#: The variable-capacity wing's ahead-of-time unit: the first-fit loop and what it calls.
FIRST_FIT_LOOP = AotUnit("vc_first_fit_loop", (
    _HERE + "first_fit_loop", _HERE + "kernel",
    "dispatchlab.dispatchers.rule_based.compiled.loop_parts",
    "dispatchlab.engine.core.parts",
    "dispatchlab.engine.compiled.slot_availability_ops",
    "dispatchlab.engine.compiled.compiled_ops"),
    _HERE + "aot_build:exports")


def loop_helpers() -> list[Callable[..., Any]]:
    """The functions the loop calls, for Numba to compile into it."""
    from dispatchlab.dispatchers.rule_based.compiled import loop_parts
    from dispatchlab.engine.compiled import slot_availability_ops as ops

    return [loop_parts.room, loop_parts.room_rows, loop_parts.idle_wait, loop_parts.ev_room,
            ops.grown]


def loop_inlined() -> list[Callable[..., Any]]:
    """The helpers Numba copies into the loop: the heap's steps and the growing arrays'
    check (as in the rule-based loops)."""
    from dispatchlab.dispatchers.rule_based.compiled import loop_parts

    return [*heap_inlined(), loop_parts.room]


def _aot_module() -> ModuleType | None:
    return load(FIRST_FIT_LOOP)


def first_fit_loop_kernel() -> Callable[..., Any]:
    """The compiled first-fit loop, loaded (or built) on first use."""
    from dispatchlab.dispatchers.variable_capacity.compiled.first_fit_loop import first_fit_loop

    def warm(fn: Callable[..., Any]) -> None:
        one, none = np.ones(1, np.int64), np.zeros(0, np.int64)
        fn(one - 1, one, one, True, one, one - 1, one, one, np.zeros(1, np.bool_), one,
           np.ones((1, 1), np.int64), none, np.zeros(0, np.bool_), one - 1, none, True,
           one - 1)

    return compiled(first_fit_loop, helpers=loop_helpers, inline=loop_inlined,
                    aot_module=_aot_module, warm=warm, what="the first-fit loop")
