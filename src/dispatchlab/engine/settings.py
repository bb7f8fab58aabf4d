"""The engine's run settings, declared once: the keywords a
:class:`~dispatchlab.engine.simulator.Simulator` takes beside its workload, platform and
dispatcher (``simulate()`` passes its own through), and their defaults."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from dispatchlab.engine.budget import PowerModel
    from dispatchlab.engine.scenario import Scenario


class EngineSettings(TypedDict, total=False):
    """What the engine does beside running the dispatcher's decisions (see
    :class:`~dispatchlab.engine.simulator.Simulator` for each one's meaning)."""

    seed: int
    on_infeasible: str
    progress: Callable[[int, int], None] | None
    scenario: Scenario | None
    walltime_kill: bool
    on_abort: str
    power_cap: float | None
    power_model: PowerModel | None
    count_idle: bool
    on_over_cap: str


#: The value of every setting not given.
DEFAULTS: EngineSettings = {
    "seed": 0, "on_infeasible": "error", "progress": None, "scenario": None,
    "walltime_kill": True, "on_abort": "requeue", "power_cap": None, "power_model": None,
    "count_idle": True, "on_over_cap": "wait",
}
