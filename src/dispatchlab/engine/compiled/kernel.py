"""The compiled slot loop: ahead of time (:mod:`~dispatchlab.engine.compiled.aot`) or, where
that cannot be built, through Numba's JIT with its disk cache.

Unavailable when Numba is missing or disabled (``DISPATCHLAB_NO_NUMBA``): the general
engine then runs every simulation.
"""

from __future__ import annotations

from collections.abc import Callable
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

            _loop, _kind = numba.njit(cache=True, nogil=True)(slot_loop), "jit"
            one = np.ones(1, np.int64)  # compile or load from Numba's cache now
            _loop(one, one, one, one, one, np.zeros(1, np.bool_), one, True, -1)
    return _loop


def kernel_kind() -> str:
    """``"aot"`` or ``"jit"``: how the loaded loop was compiled (empty before first use)."""
    return _kind
