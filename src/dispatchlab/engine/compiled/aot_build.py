"""Build the compiled loops, the slot-availability operations and the audit sweep ahead of time:
``python -m dispatchlab.engine.compiled.aot_build DIR NAME``.

Runs in its own process (Numba's ``pycc`` and a C compiler), called by
:mod:`dispatchlab.engine.compiled.aot`; writes extension module ``NAME`` into ``DIR``.
"""

from __future__ import annotations

import sys
import warnings


def build(out_dir: str, name: str) -> None:
    """Compile the strict/EASY, scenario and conservative loops, the slot-availability
    operations and the audit sweep, each with its one signature, into extension module
    ``name``."""
    from numba import types as nt

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pycc is deprecated; the JIT is the fallback
        from numba.pycc import CC

    from dispatchlab.engine.compiled import slot_availability_ops as ops
    from dispatchlab.engine.compiled.capacity_sweep import sweep
    from dispatchlab.engine.compiled.conservative_loop import conservative_loop
    from dispatchlab.engine.compiled.kernel import inlined, loop_helpers
    from dispatchlab.engine.compiled.scenario_loop import scenario_loop
    from dispatchlab.engine.compiled.slot_loop import slot_loop
    from dispatchlab.numba_loader import register

    i8 = nt.Array(nt.int64, 1, "C")
    i4 = nt.Array(nt.int32, 1, "C")
    f8 = nt.Array(nt.float64, 1, "C")
    returns = nt.Tuple((nt.int64, i8, i8, i8, i8, i4, i4, nt.Array(nt.int64, 2, "C"),
                        nt.int64, nt.int64, nt.int64, f8, nt.int64, f8, i8))
    sig = returns(i8, i8, i8, i8, i8, nt.Array(nt.boolean, 1, "C"), i8, nt.boolean, nt.int64,
                  nt.boolean, nt.boolean, nt.float64, nt.float64, nt.Array(nt.float64, 2, "C"), f8,
                  nt.float64, i8, f8)
    cc = CC(name)
    cc.output_dir = out_dir
    cc.verbose = False
    register(loop_helpers(), inline=inlined())
    cc.export("slot_loop", sig)(slot_loop)
    i = nt.int64
    pair, triple = nt.UniTuple(i, 2), nt.UniTuple(i, 3)
    op_sigs = {
        "avail_advance": i(i8, i8, i, i),
        "avail_add": i(i8, i8, i, i, i, i),
        "avail_fit": i(i8, i8, i, i, i, i, i),
        "avail_compress": triple(i8, i8, i, i8, i, i, i8, i8, i8, i, i8, i8, i8, i8),
        "avail_reserve": triple(i8, i8, i, i, i, i, i, i8, i8, i8, i8, i8, i),
        "book_pop_due": pair(i8, i8, i8, i8, i, i, i8),
        "avail_min_free": i(i8, i),
    }
    for op, op_sig in op_sigs.items():
        cc.export(op, op_sig)(getattr(ops, op))
    cons_returns = nt.Tuple((i, i8, i8, i8, i8, i4, i4, nt.Array(i, 2, "C"), i, i, i, i))
    cons_sig = cons_returns(i8, i8, i8, i8, i8, nt.Array(nt.boolean, 1, "C"), i8)
    cc.export("conservative_loop", cons_sig)(conservative_loop)
    i8_2d = nt.Array(i, 2, "C")
    b1 = nt.Array(nt.boolean, 1, "C")
    f = nt.float64
    scen_returns = nt.Tuple((i, i8, i8, i8, i8, i8, i8, i4, i4, i, i8, i8_2d, i8_2d, i,
                             i8_2d, i, b1, i, i, f8, f8))
    scen_sig = scen_returns(i8, i8, i8, nt.boolean, i8, i8, i8, b1, i8, nt.boolean, i,
                            nt.boolean, i8_2d, i8, i8, i8, i8, i8, i8, nt.boolean, i8,
                            nt.boolean, f, f, nt.Array(f, 2, "C"), f8, f8, f, i8, f8)
    cc.export("scenario_loop", scen_sig)(scenario_loop)
    sweep_sig = nt.UniTuple(i, 5)(i8, i8, i8, i8, i4, i4, i8_2d, i8_2d, i8, i8)
    cc.export("audit_sweep", sweep_sig)(sweep)
    cc.compile()


if __name__ == "__main__":
    build(sys.argv[1], sys.argv[2])
