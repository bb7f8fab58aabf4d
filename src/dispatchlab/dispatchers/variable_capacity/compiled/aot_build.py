"""What the first-fit loop's ahead-of-time unit
(:data:`~dispatchlab.dispatchers.variable_capacity.compiled.kernel.FIRST_FIT_LOOP`, built by
:mod:`dispatchlab.numba_aot`) exports: the loop, with its one signature."""

from __future__ import annotations

from dispatchlab.numba_aot import AotExports


def exports() -> AotExports:
    """The loop with its signature (the build process only: imports Numba)."""
    from numba import types as nt

    from dispatchlab.dispatchers.variable_capacity.compiled.first_fit_loop import first_fit_loop
    from dispatchlab.dispatchers.variable_capacity.compiled.kernel import (
        loop_helpers,
        loop_inlined,
    )

    i = nt.int64
    i8 = nt.Array(i, 1, "C")
    i8_2d = nt.Array(i, 2, "C")
    b1 = nt.Array(nt.boolean, 1, "C")
    returns = nt.Tuple((i, i8, i8, i8, i8, i8, i8, i8_2d, i8_2d, i8_2d, b1))
    sig = returns(i8, i8, i8, nt.boolean, i8, i8, i8, i8, b1, i8, i8_2d, i8, b1, i8, i8,
                  nt.boolean, i8)
    return AotExports({"first_fit_loop": (first_fit_loop, sig)}, helpers=loop_helpers(),
                      inline=loop_inlined())
