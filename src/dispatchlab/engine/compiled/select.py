"""Loop choice: the compiled loop when the run qualifies (``auto``), else the general one."""

from __future__ import annotations

from dispatchlab.dispatchers.rule_based.compiled.runner import (
    run_conservative,
    run_scenario_slots,
    run_slots,
)
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
        if not isinstance(run, str) and run.conservative:
            rec = run_conservative(sim, run)
            if rec is not None:
                return rec, "compiled"
            # pragma: no cover - never for the estimates it takes (see conservative_loop)
            run = "a reservation was left in the past (the general loop rebuilds them)"
        elif not isinstance(run, str) and run.scenario is not None:
            found = run_scenario_slots(sim, run)
            if found is not None:
                return found, "compiled"
            run = "the queue is stuck (the general loop reports it)"
        elif not isinstance(run, str):
            found = run_slots(sim, run)
            if found is not None:
                return found, "compiled"
            run = "an idle machine waited on cap changes too long (the general loop reports it)"
        if loop == "compiled":
            raise ConfigError(f"the compiled loop cannot run this simulation: {run}",
                              field="loop")
    return sim.run(), "general"
