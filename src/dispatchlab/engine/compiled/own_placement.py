"""The engine's inputs for a plan that places jobs itself (:data:`~.plan.OWN_PLACEMENT`).

Such a plan's loop does not run jobs as unit slots of one request vector: it places every
job on whole nodes by its own rule and, at an ``alive_nodes`` row, picks which nodes leave
or come back (the dispatcher's ``choose_nodes``). The engine checks what the run asks of
the machine — no power cap or power source, no operator rules, scenario rows of nodes only
— and hands the plan the scenario's rows as they are (``alive_nodes`` as counts); the plan
checks the jobs' shapes itself (its ``compiled_plan`` says why not).
"""

from __future__ import annotations

import numpy as np

from dispatchlab.engine.compiled.eligibility import ScenarioRows, SlotRun, scenario_rows
from dispatchlab.engine.compiled.plan import CompiledPlan
from dispatchlab.engine.constraints import engine_rules_apply
from dispatchlab.engine.simulator import Simulator


def own_placement_run(sim: Simulator, plan: CompiledPlan) -> SlotRun | str:
    """The run's inputs for ``plan`` (``slots``: each node's cores), or why the general
    loop must run ``sim``."""
    wl, plat = sim.workload, sim.platform
    power = {"power", "power-fixed-cap"} & sim.features()
    if power:
        return "power: a plan that places jobs itself takes no power cap or power source"
    rows: ScenarioRows | None = None
    if sim.scenario is not None:
        found = scenario_rows(sim, plan_chooses=True)
        if isinstance(found, str):
            return found
        rows = found
    if engine_rules_apply(wl, plat):
        return "operator rules (queues, reservations, heterogeneous jobs) apply"
    if wl.n_jobs == 0:
        return "empty workload"
    if (np.diff(wl.submit) < 0).any():
        return "submit times are not sorted"
    cores = plat.capacity[:, plat.resources.index("cores")]
    return SlotRun(rank=plan.ranks(), estimate=plan.estimate,
                   slots=np.ascontiguousarray(cores, dtype=np.int64), easy=False,
                   depth=plan.depth, runner=plan.run, scenario=rows)
