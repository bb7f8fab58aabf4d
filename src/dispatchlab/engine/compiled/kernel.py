"""The compiled slot loop and slot-profile operations: ahead of time
(:mod:`~dispatchlab.engine.compiled.aot`) or, where that cannot be built, through Numba's JIT
with its disk cache.

Unavailable when Numba is missing or disabled (``DISPATCHLAB_NO_NUMBA``): the general
engine then runs every simulation, and slot profiles run their operations as plain Python.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np

from dispatchlab.engine.kernels import COMPILED

#: Whether the compiled engine can run in this process.
AVAILABLE = COMPILED

_loop: Callable[..., Any] | None = None
_kind = ""


def slot_loop_kernel() -> Callable[..., Any]:
    """The compiled loop, loaded (or built) on first use."""
    global _loop, _kind
    if _loop is None:
        if not AVAILABLE:
            raise RuntimeError("the compiled engine needs Numba (DISPATCHLAB_NO_NUMBA is set "
                               "or Numba is missing)")
        from dispatchlab.engine.compiled.aot import load_aot

        _loop, _kind = load_aot(), "aot"
        if _loop is None:
            import numba

            from dispatchlab.engine.compiled.slot_loop import slot_loop

            register_slot_loop_helpers()
            _loop, _kind = numba.njit(cache=True, nogil=True)(slot_loop), "jit"
            one = np.ones(1, np.int64)  # compile or load from Numba's cache now
            _loop(one, one, one, one, one, np.zeros(1, np.bool_), one, True, -1, False, 0.0,
                  0.0, np.zeros((1, 2)), np.zeros(1), 0.0, np.zeros(0, np.int64), np.zeros(0))
    return _loop


_scenario: Callable[..., Any] | None = None


def scenario_loop_kernel() -> Callable[..., Any]:
    """The compiled loop of a machine whose nodes change (Numba's JIT, disk-cached),
    loaded on first use."""
    global _scenario
    if _scenario is None:
        if not AVAILABLE:
            raise RuntimeError("the compiled engine needs Numba (DISPATCHLAB_NO_NUMBA is set "
                               "or Numba is missing)")
        import numba
        from numba.extending import register_jitable

        from dispatchlab.engine.compiled import scenario_loop as src

        register_slot_loop_helpers()
        register_jitable(src._grow)
        register_jitable(src._grow2)
        _scenario = numba.njit(cache=True, nogil=True)(src.scenario_loop)
        one, none = np.ones(1, np.int64), np.zeros(0, np.int64)  # compile or load it now
        _scenario(one - 1, one, one, True, one, one, one - 1, np.zeros(1, np.bool_), one, True,
                  -1, np.ones((1, 1), np.int64), one, none, none, none, one - 1, none, True,
                  one - 1)
    return _scenario


_conservative: Callable[..., Any] | None = None


def conservative_loop_kernel() -> Callable[..., Any]:
    """The compiled conservative-backfilling loop, loaded (or built) on first use."""
    global _conservative
    if _conservative is None:
        if not AVAILABLE:
            raise RuntimeError("the compiled engine needs Numba (DISPATCHLAB_NO_NUMBA is set "
                               "or Numba is missing)")
        from dispatchlab.engine.compiled.aot import load_module

        module = load_module()
        if module is not None:
            _conservative = module.conservative_loop
        else:
            import numba

            from dispatchlab.engine.compiled.conservative_loop import conservative_loop

            register_slot_profile_ops()
            _conservative = numba.njit(cache=True, nogil=True)(conservative_loop)
            one = np.ones(1, np.int64)  # compile or load from Numba's cache now
            _conservative(one, one, one, one, np.zeros(1, np.int64), np.zeros(1, np.bool_),
                          one)
    assert _conservative is not None
    return _conservative


_helpers_registered = False


def register_slot_loop_helpers() -> None:
    """Let Numba compile the slot loop's queue-index helpers into the loops (once)."""
    global _helpers_registered
    if _helpers_registered:
        return
    from numba.extending import register_jitable

    from dispatchlab.engine.compiled import slot_loop as src

    for fn in (src.idx_put, src.idx_next, src._jump):
        register_jitable(fn)
    _helpers_registered = True


def kernel_kind() -> str:
    """``"aot"`` or ``"jit"``: how the loaded loop was compiled (empty before first use)."""
    return _kind


#: The functions of :mod:`~dispatchlab.engine.compiled.slot_profile_ops` a profile calls.
SLOT_PROFILE_OPS = ("prof_advance", "prof_add", "prof_fit", "prof_compress",
                    "prof_reserve", "book_pop_due", "prof_min_free")
#: The ones those call.
SLOT_PROFILE_HELPERS = ("prof_split", "prof_remove", "heap_up", "heap_down", "grown")

_ops: SimpleNamespace | None = None


def slot_profile_ops() -> SimpleNamespace:
    """The slot-profile operations, loaded on first use: ahead of time compiled, else
    jitted (compiled now or loaded from Numba's cache), both on int64 arrays (attribute
    ``compiled`` true); the plain Python source on lists when Numba is unavailable."""
    global _ops
    if _ops is None:
        from dispatchlab.engine.compiled import slot_profile_ops as src

        if not AVAILABLE:
            _ops = python_slot_profile_ops()
            return _ops
        from dispatchlab.engine.compiled.aot import load_module

        module = load_module()
        if module is not None:
            _ops = SimpleNamespace(compiled=True,
                                   **{name: getattr(module, name) for name in SLOT_PROFILE_OPS})
            return _ops
        import numba

        register_slot_profile_ops()
        jit = numba.njit(cache=True, nogil=True)
        _ops = SimpleNamespace(compiled=True, **{name: jit(getattr(src, name))
                                                 for name in SLOT_PROFILE_OPS})
        _exercise(_ops)
    return _ops


def python_slot_profile_ops() -> SimpleNamespace:
    """The slot-profile operations as plain Python (on lists), whatever Numba's state."""
    from dispatchlab.engine.compiled import slot_profile_ops as src

    return SimpleNamespace(compiled=False,
                           **{name: getattr(src, name) for name in SLOT_PROFILE_OPS})


def register_slot_profile_ops() -> None:
    """Let Numba compile calls to the slot-profile operations into the functions calling
    them (the operations stay plain Python functions)."""
    from numba.extending import register_jitable

    from dispatchlab.engine.compiled import slot_profile_ops as src

    for name in (*SLOT_PROFILE_HELPERS, *SLOT_PROFILE_OPS):
        register_jitable(getattr(src, name))


def _exercise(ops: SimpleNamespace) -> None:
    """Call every operation once on a tiny profile, so the JIT compiles them now."""
    times, free, jobs = np.zeros(8, np.int64), np.zeros(8, np.int64), np.zeros(1, np.int64)
    start, end = np.full(1, -1, np.int64), np.full(1, -1, np.int64)
    heap, pos, out = np.zeros(1, np.int64), np.full(1, -1, np.int64), np.zeros(1, np.int64)
    free[0] = 1
    n = ops.prof_advance(times, free, 1, 0)
    n = ops.prof_add(times, free, n, 0, 1, 0)
    ops.prof_fit(times, free, n, 1, 1, 1, 1)
    n, hn, _ = ops.prof_reserve(times, free, n, 0, 1, 1, 9, start, end, heap, pos, 0)
    ops.prof_compress(times, free, n, jobs, 0, 1, start, end, jobs, 0, heap, pos, out)
    ops.book_pop_due(start, heap, pos, hn, 9, out)
    ops.prof_min_free(free, n)
