"""The compiled loops: the whole event loop of common rule-based runs in one Numba kernel.

:func:`~dispatchlab.engine.compiled.select.run_loop` picks it automatically when the run
qualifies (see :mod:`~dispatchlab.engine.compiled.eligibility`) and runs the general
:class:`~dispatchlab.engine.simulator.Simulator` otherwise. Both give identical results.
"""
