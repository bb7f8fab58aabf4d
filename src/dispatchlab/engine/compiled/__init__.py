"""The engine's side of compiled loops: the compiled-plan protocol (:mod:`.plan`), the run's
inputs and the reasons a run cannot go compiled (:mod:`.eligibility`, :mod:`.slot_power`),
the loop choice (:func:`~dispatchlab.engine.compiled.select.run_loop`), and the compiled
operations every loop and dispatcher may share (:mod:`.slot_availability_ops`, the audit's
:mod:`.capacity_sweep`; loaded by :mod:`.compiled_ops`).

The loops themselves belong to the dispatcher that offers them (the rule-based family's:
:mod:`dispatchlab.dispatchers.rule_based.compiled`); ``run_loop`` runs a plan's loop when
the run qualifies and the general :class:`~dispatchlab.engine.simulator.Simulator`
otherwise. Both give identical results.
"""
