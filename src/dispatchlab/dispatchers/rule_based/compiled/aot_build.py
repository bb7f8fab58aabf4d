"""What the compiled loops' ahead-of-time unit
(:data:`~dispatchlab.dispatchers.rule_based.compiled.kernel.LOOPS`, built by
:mod:`dispatchlab.numba_aot`) exports: the strict/EASY loop, the strict/EASY kernel on the
engine core (:func:`.slot_book.scenario_slots`), the conservative loops and the loop of
jobs asking different unit vectors, each with its one signature.

The loops compile in the engine's slot-availability operations (:mod:`.kernel`
``loop_helpers``); the engine builds those, for its own callers, in its own unit.
"""

from __future__ import annotations

from dispatchlab.numba_aot import AotExports


def exports() -> AotExports:
    """The loops with their signatures (the build process only: imports Numba)."""
    from numba import types as nt

    from dispatchlab.dispatchers.rule_based.compiled.conservative_loop import conservative_loop
    from dispatchlab.dispatchers.rule_based.compiled.conservative_scenario_loop import (
        conservative_scenario_loop,
    )
    from dispatchlab.dispatchers.rule_based.compiled.kernel import inlined, loop_helpers
    from dispatchlab.dispatchers.rule_based.compiled.poweroff_loop import poweroff_loop
    from dispatchlab.dispatchers.rule_based.compiled.slot_book import scenario_slots
    from dispatchlab.dispatchers.rule_based.compiled.slot_loop import slot_loop

    i8 = nt.Array(nt.int64, 1, "C")
    i4 = nt.Array(nt.int32, 1, "C")
    f8 = nt.Array(nt.float64, 1, "C")
    returns = nt.Tuple((nt.int64, i8, i8, i8, i8, i4, i4, nt.Array(nt.int64, 2, "C"),
                        nt.int64, nt.int64, nt.int64, f8, nt.int64, f8, i8))
    sig = returns(i8, i8, i8, i8, i8, nt.Array(nt.boolean, 1, "C"), i8, nt.boolean, nt.int64,
                  nt.boolean, nt.boolean, nt.float64, nt.float64, nt.Array(nt.float64, 2, "C"), f8,
                  nt.float64, i8, f8, nt.int64, f8, f8)
    i = nt.int64
    cons_returns = nt.Tuple((i, i8, i8, i8, i8, i4, i4, nt.Array(i, 2, "C"), i, i, i, i, i8))
    cons_sig = cons_returns(i8, i8, i8, i8, i8, nt.Array(nt.boolean, 1, "C"), i8, i, i, f8,
                            f8)
    i8_2d = nt.Array(i, 2, "C")
    b1 = nt.Array(nt.boolean, 1, "C")
    f = nt.float64
    scen_returns = nt.Tuple((i, i8, i8, i8, i8, i8, i8, i4, i4, i, i8, i8_2d, i8_2d, i,
                             i8_2d, i, b1, i, i, f8, f8))
    b = nt.boolean
    f8_2d = nt.Array(f, 2, "C")
    scen_sig = scen_returns(nt.Tuple((i8, i8, i8, i8, i8, b1, b, b)),
                            nt.Tuple((i8, i8_2d, i8)), nt.Tuple((i8, i8, i8, i8, i8)),
                            nt.Tuple((b, f, f, f8_2d, f8, f8, i8, f8)),
                            nt.Tuple((i8, i8, b, i, b, f, i, f8, f8)))
    off_returns = nt.Tuple((*scen_returns.types, i, i))
    off_sig = off_returns(i8, i8, i8, nt.boolean, i8, i8, i8, b1, i8, nt.boolean, i,
                          nt.boolean, i8_2d, i8, i8, i8, i8, i, i8, i8, i8, i8, i8, nt.boolean,
                          i8, nt.boolean, f, f, f8_2d, f8, f8, f, f8_2d, i8, f8, i, f8, f8)
    cons_scen_returns = nt.Tuple((i, i8, i8, i8, i8, i8, i8, i4, i4, i, i8, i8_2d, i8_2d, i,
                                  i8_2d, i, b1, i, i, i, i, f8, f8))
    cons_scen_sig = cons_scen_returns(i8, i8, i8, nt.boolean, i8, i8, i8, b1, i8, i8_2d, i8,
                                      i8, i8, i8, i8, i8, nt.boolean, i8, nt.boolean, f, f,
                                      nt.Array(f, 2, "C"), f8, f8, i8, f8)
    from dispatchlab.dispatchers.rule_based.compiled.vector_loop import vector_loop

    vec_returns = nt.Tuple((i, i8, i8, i8, i8, i8, i8, i4, i4, i8, i8_2d, i8_2d, i8_2d, b1,
                            i, f8, f8))
    vec_sig = vec_returns(i8, i8, i8, nt.boolean, i8, i8, i8, b1, i8_2d, i8_2d, i, i,
                          nt.boolean, nt.boolean, f, f, i, nt.Array(f, 2, "C"), i8, nt.boolean,
                          f8, f8, f8, i8, f8, nt.boolean, nt.Array(f, 2, "C"), i8, f8, i8, i8,
                          i8, i8, i8, nt.boolean, i8)
    return AotExports({"slot_loop": (slot_loop, sig),
                       "vector_loop": (vector_loop, vec_sig),
                       "poweroff_loop": (poweroff_loop, off_sig),
                       "conservative_scenario_loop": (conservative_scenario_loop,
                                                      cons_scen_sig),
                       "conservative_loop": (conservative_loop, cons_sig),
                       "scenario_slots": (scenario_slots, scen_sig)},
                      helpers=loop_helpers(), inline=inlined())

