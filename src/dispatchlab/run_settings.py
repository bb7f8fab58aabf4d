"""How a run is shaped beyond its workload, platform and dispatcher: job power, the power
accounting against the cap, what happens to a job whose node leaves or that the cap
overruns, the event loop, and where scenario files start.

One record, :class:`RunSettings`, carries these values from ``simulate``'s and
``compare``'s options and from an experiment file's workload entry to :func:`simulate`, so
that a comparison or a campaign runs exactly as ``simulate`` would with the same options.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from dispatchlab.engine.budget import OVER_CAP_POLICIES
from dispatchlab.engine.scenario_gen import ScenarioArg, resolve_scenario
from dispatchlab.engine.simulator import ABORT_POLICIES
from dispatchlab.errors import ConfigError
from dispatchlab.platform.platform import Platform
from dispatchlab.workload.workload import Workload

#: The event loops :func:`dispatchlab.simulation.simulate` can run.
LOOPS = ("auto", "compiled", "general")


@dataclass(frozen=True)
class RunSettings:
    """The run-shaping settings ``simulate``, ``compare`` and experiments share.

    ``job_power``: ``node`` | ``column`` | ``pa-hpc-sim`` | a ``job_id;watts`` file (None:
    the platform's node model when it has one); ``job_power_fallback``: ``node`` |
    ``error`` | W for jobs without a figure; ``idle_power``: idle and switched-off nodes
    count against the cap; ``on_over_cap`` / ``on_abort``: see
    :class:`~dispatchlab.engine.simulator.Simulator`; ``loop``: ``auto`` | ``compiled`` |
    ``general``; ``scenario_start``: scenario files are read from this time on, rebased.
    """

    job_power: str | None = None
    job_power_fallback: str = "node"
    idle_power: bool = True
    on_over_cap: str = "wait"
    on_abort: str = "requeue"
    loop: str = "auto"
    scenario_start: int | None = None

    def __post_init__(self) -> None:
        for name, value, known in (("loop", self.loop, LOOPS),
                                   ("on_abort", self.on_abort, ABORT_POLICIES),
                                   ("on_over_cap", self.on_over_cap, OVER_CAP_POLICIES)):
            if value not in known:
                raise ConfigError(f"unknown value '{value}' (known: {', '.join(known)})",
                                  field=name)
        if self.scenario_start is not None and self.scenario_start < 0:
            raise ConfigError(f"needs a time ≥ 0, got {self.scenario_start}",
                              field="scenario_start")
        from dispatchlab.energy.job_power import parse_fallback

        parse_fallback(self.job_power_fallback)

    def changed(self) -> dict[str, Any]:
        """The settings that differ from their defaults (what names a run's results)."""
        default = RunSettings()
        return {k: v for k, v in asdict(self).items() if getattr(default, k) != v}

    def simulate_kwargs(self, workload: Workload, platform: Platform) -> dict[str, Any]:
        """Keyword arguments of :func:`dispatchlab.simulation.simulate` for these settings
        (the scenario aside: see :meth:`scenario`)."""
        from dispatchlab.energy.job_power import job_power_source, parse_fallback

        source = job_power_source(self.job_power, workload, platform,
                                  parse_fallback(self.job_power_fallback))
        return {"power_model": source, "count_idle": self.idle_power,
                "on_over_cap": self.on_over_cap, "on_abort": self.on_abort, "loop": self.loop}

    def scenario(self, arg: ScenarioArg) -> ScenarioArg:
        """The scenario, read from :attr:`scenario_start` on and rebased to it."""
        if arg is None or not self.scenario_start:
            return arg
        scen = resolve_scenario(arg)
        return None if scen is None else scen.shifted(self.scenario_start)


#: The names of the settings, in declaration order.
SETTING_NAMES = tuple(f.name for f in fields(RunSettings))
