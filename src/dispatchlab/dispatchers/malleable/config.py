"""One typed configuration of the greedy scheduler of Mejri et al. (2020), and its semantics.

:class:`GreedyConfig` holds every parameter of Algorithm 1 (which steps run, the
reconfiguration condition with its weights and bias, the power-off condition with its two
durations and probability); :class:`Semantics` holds how the model is simulated. Two
semantics are provided and documented in ``docs/malleable.md``:

- :data:`PAPER` (default): the paper's text — event-driven decisions, running jobs tried
  for reconfiguration by *largest* remaining mass, power-off only with an empty queue, all
  available servers switched off together for one duration, Table 1 power values, energy
  integrated over node states from the first submission to the last completion.
- :data:`CODE`: the authors' public code (``shared/peers/mejri-malleable``) — decisions every
  10 s, *smallest* remaining mass first, its reconfiguration-time formula
  ``D/m · floor(m/n)``, power-offs also while jobs wait when spare servers remain, one
  decision and one duration per server, rounded (and swapped) power constants, its energy
  accounting (first piece start to the stop time, power-offs cut at the stop).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Literal

from dispatchlab.energy.accounting import StatePowerModel
from dispatchlab.errors import ConfigError
from dispatchlab.params import Attributes, Parametrized
from dispatchlab.platform.power import GENERIC, NodePowerSpec

Clock = Literal["engine", "float"]
Order = Literal["largest-first", "smallest-first"]


#: Table 1 of the paper: the platform's generic node (one unit, computing = idle + first
#: core; boot and shutdown delays in s).
TABLE1 = GENERIC
#: The constants of the authors' code (``Server.Consumption``/``Duration``): rounded, and
#: booting/shutting-down powers swapped with respect to Table 1.
CODE_POWER = NodePowerSpec(idle=95.0, core_first=96.0, booting=101.0, shutting_down=125.0,
                           off=10.0, boot_time=151.0, shutdown_time=6.0,
                           source="Mejri et al.'s code (Server.Consumption, Duration)")


def state_model(power: NodePowerSpec) -> StatePowerModel:
    """The engine's per-state power model of a one-unit server with these figures."""
    return StatePowerModel(idle=power.idle, busy=power.busy(1), off=power.off,
                           booting=power.booting, shutting_down=power.shutting_down)


@dataclass(frozen=True)
class Semantics:
    """How the greedy model is simulated (see the module docstring and docs/malleable.md).

    ``clock``: ``engine`` = the engine's whole seconds (submissions and run times rounded up,
    reconfiguration pauses as the engine's work model charges them); ``float`` = continuous
    times as in the authors' code. ``poll``: decisions only every ``poll`` seconds (0:
    at every event). ``order``: which running job is tried first for a reconfiguration.
    ``reconfig_time``: ``paper`` = ``(D/m)(ceil(m/n) − 1)``, ``code`` = ``(D/m)·floor(m/n)``
    (float clock only; the engine always charges the paper's). ``poweroff_when``:
    ``queue-empty`` or ``spare-servers`` (also when the idle servers outnumber the minimum
    servers of the queued jobs). ``poweroff_scope``: ``all`` (one decision, one duration,
    every available server) or ``each`` (decided and drawn per server, re-evaluated as the
    available count shrinks). ``accounting``: ``states`` = energy integrated over node
    states from the first submission to the last completion; ``code`` = the authors'
    accounting. ``decide_at_zero``: a first decision at t = 0 (the code's loop starts there).
    """

    name: str
    clock: Clock = "engine"
    poll: int = 0
    order: Order = "largest-first"
    reconfig_time: Literal["paper", "code"] = "paper"
    poweroff_when: Literal["queue-empty", "spare-servers"] = "queue-empty"
    poweroff_scope: Literal["all", "each"] = "all"
    accounting: Literal["states", "code"] = "states"
    decide_at_zero: bool = False
    power: NodePowerSpec = field(default_factory=NodePowerSpec)

    def __post_init__(self) -> None:
        if self.poll < 0:
            raise ConfigError(f"poll must be ≥ 0 s, got {self.poll}", field="poll")
        if self.clock == "engine" and self.reconfig_time != "paper":
            raise ConfigError("the engine clock charges the paper's reconfiguration time",
                              field="reconfig_time")
        if self.accounting == "code" and self.poll <= 0:
            raise ConfigError("the code's accounting needs a polling period", field="poll")


PAPER = Semantics("paper")
CODE = Semantics("code", clock="float", poll=10, order="smallest-first", reconfig_time="code",
                 poweroff_when="spare-servers", poweroff_scope="each", accounting="code",
                 decide_at_zero=True, power=CODE_POWER)
#: The code's decision rules on the engine's clock (what the general loop runs of it).
CODE_RULES = replace(CODE, name="code-rules", clock="engine", reconfig_time="paper",
                     accounting="states")
#: The paper's semantics with the code's power-off reading (one decision per server).
PAPER_EACH = replace(PAPER, name="paper-each", poweroff_scope="each")
SEMANTICS = {s.name: s for s in (PAPER, CODE, CODE_RULES, PAPER_EACH)}


@dataclass(frozen=True)
class GreedyConfig(Parametrized):
    """Parameters of Algorithm 1 (Mejri et al. Table 2).

    ``reconfigure`` / ``power_off``: which optional steps run after the FIFO starts.
    ``condition``: 0 = reconfigure whenever servers are free (FIFO-Rcfg), 1–3 = the
    paper's conditions 1–3 with ``w_n``, ``w_alpha``, ``s_reconfig``, ``w_d``, ``bias``.
    ``decide_poweroff``: False = power off whenever possible for ``t1`` s (FIFO-Poff);
    True = when ``(n_av/n_tot)^w_off · s_off > 0.5``, for ``t1`` s with probability
    ``p_t1``, else ``t2``. ``data_max``: the largest data amount a job can have (``D_max``).
    """

    reconfigure: bool = False
    power_off: bool = False
    condition: int = 0
    w_n: float = 1.0
    w_alpha: float = 1.0
    s_reconfig: float = 1.0
    w_d: float = 1.0
    bias: float = 0.0
    decide_poweroff: bool = False
    w_off: float = 1.0
    s_off: float = 1.0
    t1: float = 900.0
    t2: float = 900.0
    p_t1: float = 1.0
    data_max: float = 500.0
    semantics: Semantics = PAPER

    #: the semantics are recorded by name (they are one of :data:`SEMANTICS`)
    described_attributes: ClassVar[Attributes] = {"semantics": "semantics.name"}

    def __post_init__(self) -> None:
        if self.condition not in (0, 1, 2, 3):
            raise ConfigError(f"condition must be 0, 1, 2 or 3, got {self.condition}",
                              field="condition")
        if not self.data_max > 0:
            raise ConfigError(f"data_max must be > 0, got {self.data_max}", field="data_max")
        if self.power_off:
            p = self.semantics.power
            least = p.boot_time + p.shutdown_time
            for name in ("t1", "t2") if self.decide_poweroff else ("t1",):
                value = getattr(self, name)
                if not value >= least:
                    raise ConfigError(f"{name} = {value} s is shorter than a shutdown and a "
                                      f"boot ({least} s)", field=name)
            if not 0.0 <= self.p_t1 <= 1.0:
                raise ConfigError(f"p_t1 must be within [0, 1], got {self.p_t1}", field="p_t1")

    def with_params(self, names: tuple[str, ...], values: list[float]) -> GreedyConfig:
        """A copy with the named parameters set (a PSO position)."""
        changes: dict[str, Any] = dict(zip(names, (float(v) for v in values), strict=True))
        return replace(self, **changes)


#: The tuned parameters of each condition, in the order of the paper's Table 4.
RECONFIG_PARAMS: dict[int, tuple[str, ...]] = {
    1: ("w_n", "w_alpha", "s_reconfig"),
    2: ("w_n", "w_alpha", "s_reconfig", "w_d"),
    3: ("w_n", "w_alpha", "w_d", "bias"),
}
POWEROFF_PARAMS = ("w_off", "s_off", "t1", "t2", "p_t1")


def param_names(condition: int) -> tuple[str, ...]:
    """The 8 or 9 parameters a swarm tunes for ``condition``."""
    return RECONFIG_PARAMS[condition] + POWEROFF_PARAMS
