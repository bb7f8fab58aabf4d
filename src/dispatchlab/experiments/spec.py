"""The experiment file (TOML): its schema, and errors that name the offending key."""

from __future__ import annotations

import tomllib
import warnings
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
    model_validator,
)

from dispatchlab.errors import ConfigError
from dispatchlab.input_files import read_text
from dispatchlab.stats.metrics import METRICS

Scalar = str | int | float | bool
#: A ``{name}`` placeholder standing for a parameter's value.
Placeholder = Annotated[str, StringConstraints(pattern=r"^\{[A-Za-z_][A-Za-z0-9_]*\}$")]
BACKENDS = ("local", "dask-local", "dask")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PricingScenario(_Strict):
    """One named way of pricing a run: the single-scenario keys of a workload entry
    (``cooling``, ``temperature``, ``prices``, ``it_power``; default ``it_power``: the
    entry's) under a ``name`` that labels the run's row (docs/profit.md)."""

    name: str  # letters, digits, ``_.+-`` (checked after parameter substitution)
    cooling: str
    temperature: str | None = None
    prices: str | None = None
    it_power: Literal["auto", "nodes", "jobs"] | None = None


class WorkloadEntry(_Strict):
    """A workload: a trace path (relative to the experiment file) or a generator spec.

    ``options`` go to the reader (for SWF: ``procs``, ``units``, ``cores_per_node``,
    ``missing_estimate``, ``drop_zero_runtime``, ``drop_invalid``, ``skip_bad_lines``,
    ``rebase``). ``skip``/``limit`` slice the jobs after cleaning; ``windows = K`` then cuts
    that slice into K consecutive windows of ``window_jobs`` jobs (default: equal parts),
    each a separate set for the statistics. ``scenario``: what changes on the machine while
    the jobs run (a scenario or capacity file, or a ``gen:`` spec, or a list of them merged;
    ``{seed}`` and parameters allowed); ``walltime_kill = false`` runs every job to its run time;
    ``metrics_window = [start, T]`` adds the variable-capacity metrics (``goodput``,
    ``max_stretch``, ``aborted_volume``, …) over that window to each run's summary;
    ``power_cap`` (W) a fixed machine-wide power cap.
    ``cooling`` (``air`` | ``hybrid`` | a PUE table CSV), ``temperature`` (``gen:temperature:…``
    or a file; default: the scenario's), ``prices`` (``cheap`` | ``expensive`` | ``K1,K2``)
    and ``it_power`` (``auto`` | ``nodes`` | ``jobs``) add the ``profit`` entry to every
    run's summary (docs/profit.md). ``pricing = [{ name, cooling, temperature, prices,
    it_power }, …]`` instead prices every run in each named scenario: one result row per
    run × scenario, the schedule simulated once when the dispatcher does not read pricing
    inputs.
    ``job_power``, ``job_power_fallback``, ``idle_power``, ``on_over_cap``, ``on_abort``,
    ``loop``, ``scenario_start``, ``window_start`` and ``window`` are ``simulate``'s options
    of the same names (:class:`dispatchlab.run_settings.RunSettings`); ``window_start`` /
    ``window`` select the jobs of a variable-capacity job file, ``window`` also being the
    default ``metrics_window``.
    """

    path: str
    scenario: str | list[str] | None = None
    cooling: str | None = None
    temperature: str | None = None
    prices: str | None = None
    it_power: Literal["auto", "nodes", "jobs"] = "auto"
    pricing: Annotated[list[PricingScenario], Field(min_length=1)] | None = None
    walltime_kill: bool = True
    metrics_window: tuple[int, int] | None = None
    power_cap: Annotated[float, Field(gt=0, allow_inf_nan=False)] | None = None
    job_power: str | None = None
    job_power_fallback: str = "node"
    idle_power: bool = True
    on_over_cap: str = "wait"  # the values are checked by RunSettings, when planned
    on_abort: str = "requeue"
    loop: str = "auto"
    scenario_start: Annotated[int, Field(ge=0)] | None = None
    window_start: Annotated[int, Field(ge=0)] | None = None
    window: Annotated[int, Field(ge=1)] | None = None
    name: str | None = None
    format: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    skip: Annotated[int, Field(ge=0)] | Placeholder = 0
    limit: Annotated[int, Field(ge=1)] | Placeholder | None = None
    windows: Annotated[int, Field(ge=1)] | Placeholder = 1
    window_jobs: Annotated[int, Field(ge=1)] | Placeholder | None = None


class NamedSpec(_Strict):
    """A platform or dispatcher spec with a display name."""

    spec: str
    name: str | None = None


class StatsSection(_Strict):
    """Which metrics to summarize and rank, and at what levels."""

    metrics: list[str] = Field(
        default_factory=lambda: ["mean_wait", "mean_bounded_slowdown", "utilization"]
    )
    alpha: Annotated[float, Field(gt=0, lt=1)] = 0.05
    confidence: Annotated[float, Field(gt=0, lt=1)] = 0.95
    p_adjust: Literal["holm", "none"] = "holm"

    @field_validator("metrics")
    @classmethod
    def _known(cls, value: list[str]) -> list[str]:
        for m in value:
            if m not in METRICS:
                raise ValueError(f"unknown metric '{m}' (known: {', '.join(METRICS)})")
        return value


class ExecutionSection(_Strict):
    """Default backend for this experiment (command-line options override it)."""

    backend: Literal["local", "dask-local", "dask"] = "local"
    scheduler: str | None = None
    workers: Annotated[int | None, Field(ge=1)] = None

    @model_validator(mode="before")
    @classmethod
    def _old_key(cls, data: Any) -> Any:
        """``engine`` was this key's name until 2026-11-27: read with a warning."""
        if isinstance(data, dict) and "engine" in data:
            if "backend" in data:
                raise ValueError("give 'backend' only ('engine' is its old name)")
            warnings.warn("[execution] engine = ... is deprecated: write backend = ...",
                          FutureWarning, stacklevel=2)
            data = {("backend" if k == "engine" else k): v for k, v in data.items()}
        return data


class ExperimentSpec(_Strict):
    """A grid: workloads × platforms × dispatchers × parameters × seeds.

    ``parameters`` are named value lists substituted into ``{name}`` placeholders of
    workload, platform and dispatcher strings; an entry multiplies only over the parameters
    it uses. ``{seed}`` is always available. ``seeds = N`` means seeds 0 … N−1.
    """

    name: str
    description: str = ""
    workloads: Annotated[list[WorkloadEntry], Field(min_length=1)]
    platforms: Annotated[list[str | NamedSpec], Field(min_length=1)] = Field(
        default_factory=lambda: list[str | NamedSpec](["auto"])
    )
    dispatchers: Annotated[list[str | NamedSpec], Field(min_length=1)]
    parameters: dict[str, Annotated[list[Scalar], Field(min_length=1)]] = Field(
        default_factory=dict
    )
    seeds: list[Annotated[int, Field(ge=0)]] | Annotated[int, Field(ge=1)] = Field(
        default_factory=lambda: [0]
    )
    on_infeasible: Literal["error", "reject"] = "error"
    #: the layouts each run's schedule is also written in, next to its tables
    schedule_format: list[str] = Field(default_factory=list)
    out: str | None = None
    stats: StatsSection = Field(default_factory=StatsSection)
    execution: ExecutionSection = Field(default_factory=ExecutionSection)

    @field_validator("schedule_format")
    @classmethod
    def _known_layouts(cls, value: list[str]) -> list[str]:
        from dispatchlab.metrics.schedule_files import SCHEDULE_FILES

        for fmt in value:
            if fmt not in SCHEDULE_FILES:
                raise ValueError(f"unknown schedule format '{fmt}' (known: "
                                 f"{', '.join(SCHEDULE_FILES)})")
        return list(dict.fromkeys(value))

    def seed_list(self) -> list[int]:
        """The seeds as a list."""
        return list(range(self.seeds)) if isinstance(self.seeds, int) else list(self.seeds)


def parse_experiment(data: dict[str, Any], *, source: str | None = None) -> ExperimentSpec:
    """Validate a decoded experiment; the first problem becomes a ConfigError naming its key."""
    try:
        return ExperimentSpec.model_validate(data)
    except ValidationError as exc:
        err = _most_specific(exc.errors())
        raise ConfigError(_message(err), field=_loc(err["loc"]) or None, source=source) from None


def load_experiment(path: str | Path, text: str | None = None) -> ExperimentSpec:
    """Read and validate an experiment TOML file (``text``: its content, already read)."""
    p = Path(path)
    try:
        data = tomllib.loads(read_text(p, lambda why: ConfigError(why, source=str(p)))
                             if text is None else text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"not valid TOML: {exc}", source=str(p)) from None
    return parse_experiment(data, source=str(p))


_TAGS = {
    "str",
    "int",
    "float",
    "bool",
    "NamedSpec",
    "list[int]",
    "constrained-int",
    "WorkloadEntry",
    "PricingScenario",
}


def _loc(loc: tuple[Any, ...]) -> str:
    """``('workloads', 0, 'limit')`` → ``workloads[0].limit`` (union-member tags dropped)."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in _TAGS or str(part).startswith(("function-", "list[", "constrained")):
            continue
        else:
            out += f".{part}" if out else str(part)
    return out


def _most_specific(errors: list[Any]) -> Any:
    """The error to report: among a union's alternatives, a violated constraint beats a
    type mismatch; when every alternative is a type mismatch, say so in one message."""
    where = _loc(errors[0]["loc"])
    same = [e for e in errors if _loc(e["loc"]).startswith(where.split(".")[0])]
    constraint = [e for e in same if not str(e["type"]).endswith("_type")]
    if constraint:
        return max(constraint, key=lambda e: len(e["loc"]))
    if len({_loc(e["loc"]) for e in same}) < len(same):
        given = type(same[0].get("input")).__name__
        return {
            "loc": same[0]["loc"],
            "type": "wrong_type",
            "msg": f"wrong type ({given}); see the experiment file reference",
        }
    return max(same, key=lambda e: len(e["loc"]))


def _message(err: Any) -> str:
    if err["type"] == "extra_forbidden":
        return "unknown key"
    if err["type"] == "missing":
        return "required key is missing"
    msg = str(err["msg"])
    return msg.removeprefix("Value error, ")
