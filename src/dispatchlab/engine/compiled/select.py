"""Engine choice: the compiled loop when the run qualifies (``auto``), else the general one."""

from __future__ import annotations

from dispatchlab.engine.compiled.eligibility import slot_run
from dispatchlab.engine.compiled.runner import run_conservative, run_scenario_slots, run_slots
from dispatchlab.engine.recorder import Recorder
from dispatchlab.engine.simulator import Simulator
from dispatchlab.errors import ConfigError

ENGINES = ("auto", "compiled", "general")


def run_engine(sim: Simulator, engine: str = "auto") -> tuple[Recorder, str]:
    """Run ``sim`` on ``engine`` and say which one ran (``"compiled"`` or ``"general"``).

    ``auto`` takes the compiled engine whenever it qualifies; ``compiled`` insists (a
    :class:`ConfigError` says why it cannot); ``general`` always runs the Python loop.
    """
    if engine not in ENGINES:
        raise ConfigError(f"unknown engine '{engine}' (known: {', '.join(ENGINES)})",
                          field="engine")
    if engine != "general":
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
        if engine == "compiled":
            raise ConfigError(f"the compiled engine cannot run this simulation: {run}",
                              field="engine")
    return sim.run(), "general"
