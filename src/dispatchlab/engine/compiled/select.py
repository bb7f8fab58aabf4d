"""Loop choice: the compiled loop when the run qualifies (``auto``), else the general one.

The compiled loop is the dispatcher's own (its :class:`~.plan.CompiledPlan`'s ``run``): the
engine gathers the run's inputs (:func:`~.eligibility.slot_run`) and calls it, naming no loop.
"""

from __future__ import annotations

from dispatchlab.engine.compiled.eligibility import slot_run
from dispatchlab.engine.recorder import Recorder
from dispatchlab.engine.simulator import Simulator
from dispatchlab.errors import ConfigError

LOOPS = ("auto", "compiled", "general")


def run_loop(sim: Simulator, loop: str = "auto") -> tuple[Recorder, str]:
    """Run ``sim`` on ``loop`` and say which one ran (``"compiled"`` or ``"general"``).

    ``auto`` takes the compiled loop whenever it qualifies; ``compiled`` insists (a
    :class:`ConfigError` says why it cannot); ``general`` always runs the Python loop.
    """
    if loop not in LOOPS:
        raise ConfigError(f"unknown loop '{loop}' (known: {', '.join(LOOPS)})",
                          field="loop")
    if loop != "general":
        run = slot_run(sim)
        found = run if isinstance(run, str) else run.runner(sim, run)
        if not isinstance(found, str):
            return found, "compiled"
        if loop == "compiled":
            raise ConfigError(f"the compiled loop cannot run this simulation: {found}",
                              field="loop")
    return sim.run(), "general"
