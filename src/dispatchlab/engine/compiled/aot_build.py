"""What the engine's ahead-of-time unit
(:data:`~dispatchlab.engine.compiled.compiled_ops.ENGINE_OPS`, built by
:mod:`dispatchlab.numba_aot`) exports: the slot-availability operations, the audit's
capacity sweep and the general loop's placement kernels, each with its one signature.

Only the build process imports this module: it reads the kernels' sources, which load
the unit through :mod:`.compiled_ops` at run time (so the unit's declaration and its
export list live apart, and neither module imports the other's importer).
"""

from __future__ import annotations

from dispatchlab.numba_aot import AotExports


def exports() -> AotExports:
    """The unit's exports with their signatures (the build process only: imports Numba)."""
    from numba import types as nt

    from dispatchlab.engine import kernels
    from dispatchlab.engine.compiled import slot_availability_ops as ops_source
    from dispatchlab.engine.compiled.capacity_sweep import sweep
    from dispatchlab.engine.compiled.compiled_ops import availability_helpers, heap_inlined

    i = nt.int64
    i8, i4 = nt.Array(i, 1, "C"), nt.Array(nt.int32, 1, "C")
    i8_2d = nt.Array(i, 2, "C")
    pair, triple = nt.UniTuple(i, 2), nt.UniTuple(i, 3)
    signatures = {
        "avail_advance": i(i8, i8, i, i),
        "avail_add": i(i8, i8, i, i, i, i),
        "avail_fit": i(i8, i8, i, i, i, i, i),
        "avail_compress": triple(i8, i8, i, i8, i, i, i8, i8, i8, i, i8, i8, i8, i8),
        "avail_reserve": triple(i8, i8, i, i, i, i, i, i8, i8, i8, i8, i8, i),
        "book_pop_due": pair(i8, i8, i8, i8, i, i, i8),
        "avail_min_free": i(i8, i),
    }
    functions = {op: (getattr(ops_source, op), sig) for op, sig in signatures.items()}
    functions["audit_sweep"] = (sweep, nt.UniTuple(i, 5)(i8, i8, i8, i8, i4, i4, i8_2d, i8_2d,
                                                         i8, i8))
    # the placement kernels on int64 arrays of any layout (kernels.py sends other dtypes
    # to the JIT: an extension module does not check its arguments' types)
    a1, a2 = nt.Array(i, 1, "A"), nt.Array(i, 2, "A")
    functions.update({
        "check_and_take": (kernels.check_and_take_source, i(a2, a1, a1, a1, i)),
        "release": (kernels.release_source, nt.none(a2, a1, a1, a1)),
        "first_fit_nodes": (kernels.first_fit_source, nt.UniTuple(i8, 2)(a2, a1, i)),
    })
    return AotExports(functions, helpers=[*availability_helpers(), *kernels.HELPERS],
                      inline=heap_inlined())
