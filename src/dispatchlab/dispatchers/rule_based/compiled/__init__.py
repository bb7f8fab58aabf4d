"""The rule-based family's compiled fast path: the whole event loop of a ``Policy`` with a
static ordering and strict, EASY or conservative selection (or a dynamic ordering, sorted at
every decision by :mod:`.dynamic_order`, with strict or EASY), in one Numba-compiled function.

The policy offers it as its compiled plan
(:mod:`~dispatchlab.dispatchers.rule_based.compiled_plan`, whose ``run`` is
:func:`.runner.run_plan`); the engine's loop choice
(:func:`dispatchlab.engine.compiled.select.run_loop`) runs the plan when the run qualifies
and the general :class:`~dispatchlab.engine.simulator.Simulator` otherwise. Both give
identical results.
"""
