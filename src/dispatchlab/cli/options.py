"""Options shared by the commands that load a workload (SWF cleaning and slicing) and by
the commands that run simulations (``simulate``, ``compare``, ``live``).

The reading options are declared once here; :func:`with_load_options` gives a command all of
them in place of its ``load: LoadOptions`` parameter and hands the command one record.
The run-shaping options are declared once too (:data:`RUN_OPTIONS`);
:func:`with_run_options` gives them to a command as one :class:`RunOptions` record, the
command naming those it cannot honour (refused with one line before anything runs).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Annotated, Any, TypeVar

import typer

from dispatchlab.errors import ConfigError
from dispatchlab.params import given
from dispatchlab.run_settings import SETTING_NAMES, RunSettings
from dispatchlab.workload.eurora import EuroraOptions
from dispatchlab.workload.swf import SwfOptions

F = TypeVar("F", bound=Callable[..., Any])

WorkloadOpt = Annotated[str, typer.Option("--workload", "-w",
                        help="Trace path (SWF, .swf.gz, Eurora batch, Parquet, CSV) or generator.")]
FormatOpt = Annotated[str | None,
                      typer.Option(help="swf|eurora|sacct|sacct-json|jobcomp|pbs|batsim|"
                                        "parquet|csv|vcjobs (detected if omitted).")]
PlatformOpt = Annotated[str | None, typer.Option("--platform", "-p",
                        help="Inline spec (nodes=128,cores=16), preset (eurora) or file. "
                             "Default: from the SWF header.")]
SkipOpt = Annotated[int, typer.Option(help="Skip the first N jobs (after cleaning).")]
LimitOpt = Annotated[int | None, typer.Option(help="Keep at most N jobs (after cleaning).")]
ProcsOpt = Annotated[str, typer.Option("--swf-procs",
                     help="SWF processor count: allocated|requested|max.")]
MissingOpt = Annotated[str, typer.Option("--swf-missing-estimate",
                       help="Missing requested time: runtime (use run time) | reject.")]
UnitsOpt = Annotated[str, typer.Option("--swf-units",
                     help="pool: each processor a 1-core unit | nodes: whole exclusive nodes.")]
CpnOpt = Annotated[int | None, typer.Option("--swf-cores-per-node",
                   help="Cores per node for --swf-units nodes (default: header).")]
ZeroOpt = Annotated[bool, typer.Option("--drop-zero-runtime", help="Drop jobs with run time 0.")]
KeepOpt = Annotated[bool, typer.Option("--keep-invalid",
                    help="Fail on jobs without processors/run time instead of dropping them.")]
BadOpt = Annotated[bool, typer.Option("--skip-bad-lines",
                   help="Skip (and count) malformed lines instead of failing.")]
EuroraUnitsOpt = Annotated[str, typer.Option(
    help="Eurora batches: job units from the requested nodes, or the number of chunks "
    "listed (chunks: PA-HPC-SIM's reading).")]
# options that several commands declare alike
WalltimeKillOpt = Annotated[bool, typer.Option(
    "--walltime-kill/--no-walltime-kill",
    help="Kill jobs at their requested time, or let each run its actual run time.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]
DispatcherOpt = Annotated[str, typer.Option("--dispatcher", "-d",
                          help="Preset name (fifo, easy, …) or key=value spec.")]
SeedOpt = Annotated[int, typer.Option(help="Seed of the run's random generator.")]
# the profit accounting's options (simulate, compare)
CoolingOpt = Annotated[str | None, typer.Option(
    help="Cooling model for the profit entry: air | hybrid | a PUE table CSV "
    "(temperature,W,W,…); ':scaled' fits it to the machine. See docs/profit.md.")]
TemperatureOpt = Annotated[str | None, typer.Option(
    help="Ambient temperature for --cooling: gen:temperature:season=summer|winter,… or a "
    "time,what,value file with temperature rows (default: the scenario's).")]
PricesOpt = Annotated[str | None, typer.Option(
    help="Profit prices: cheap | expensive (the thesis's K1) | K1,K2 (per core-hour, per "
    "kWh); energy_price rows in the scenario replace K2 over time.")]
ItPowerOpt = Annotated[str, typer.Option(
    help="IT power for the cooling: auto | nodes (platform power model) | jobs (the "
    "workload's power column).")]
MetricsWindowOpt = Annotated[str | None, typer.Option(
    help="START,T: add the variable-capacity metrics over [START, T) s (goodput, "
    "stretch, aborted volume, alive capacity).")]

# the command-line form of each LoadOptions field
LOAD_OPTIONS: dict[str, Any] = {
    "format": FormatOpt, "skip": SkipOpt, "limit": LimitOpt, "swf_procs": ProcsOpt,
    "swf_missing_estimate": MissingOpt, "swf_units": UnitsOpt, "swf_cores_per_node": CpnOpt,
    "drop_zero_runtime": ZeroOpt, "keep_invalid": KeepOpt, "skip_bad_lines": BadOpt,
    "eurora_units": EuroraUnitsOpt,
}


@dataclass
class LoadOptions:
    """What the user said about how to read the workload."""

    format: str | None = None
    skip: int = 0
    limit: int | None = None
    swf_procs: str = "allocated"
    swf_missing_estimate: str = "runtime"
    swf_units: str = "pool"
    swf_cores_per_node: int | None = None
    drop_zero_runtime: bool = False
    keep_invalid: bool = False
    skip_bad_lines: bool = False
    eurora_units: str = "requested"

    def changed_flags(self) -> dict[str, bool]:
        """``--flag`` → whether it differs from its default (for the runs that read their
        input themselves and must refuse reader options rather than ignore them)."""
        return {f"--{f.name.replace('_', '-')}": getattr(self, f.name) != f.default
                for f in dataclasses.fields(self)}

    def reader_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for :func:`dispatchlab.workload.load.load_workload`."""
        kwargs: dict[str, Any] = {"format": self.format}
        if self.format in (None, "swf"):
            kwargs["swf"] = SwfOptions(
                procs=self.swf_procs,  # type: ignore[arg-type]
                missing_estimate=self.swf_missing_estimate,  # type: ignore[arg-type]
                units=self.swf_units,  # type: ignore[arg-type]
                cores_per_node=self.swf_cores_per_node,
                drop_zero_runtime=self.drop_zero_runtime,
                drop_invalid=not self.keep_invalid,
                skip=self.skip,
                limit=self.limit,
                skip_bad_lines=self.skip_bad_lines,
            )
        if self.eurora_units != "requested" and self.format in (None, "eurora"):
            kwargs["eurora"] = EuroraOptions(units=self.eurora_units)  # type: ignore[arg-type]
        # every reader slices (SWF after cleaning, through its options): pass the slice
        # whatever the format, so a detected CSV/Parquet/Eurora file is sliced too
        kwargs["skip"] = self.skip
        kwargs["limit"] = self.limit
        return kwargs


def with_load_options(command: F) -> F:
    """``command`` with the reading options of :data:`LOAD_OPTIONS`, in the place of its
    ``load: LoadOptions`` parameter (so ``--help`` lists them there), collected into one
    :class:`LoadOptions` handed to it as ``load``."""
    return _replace_parameter(command, "load", LOAD_OPTIONS, asdict(LoadOptions()),
                              lambda given: LoadOptions(**given))


# --- the run-shaping options (simulate, compare, live; the experiment file's keys) --------

RUN_OPTIONS: dict[str, Any] = {
    "reject_infeasible": Annotated[bool, typer.Option(
        "--reject-infeasible", help="Record jobs the machine can never host as rejected "
        "instead of failing.")],
    "scenario": Annotated[list[str] | None, typer.Option(
        help="Changes over time: a CSV/Parquet file (time,what,value[,target]), a capacity "
        "file or gen:NAME:k=v,… (repeat to merge).")],
    "scenario_start": Annotated[int | None, typer.Option(
        help="Read the --scenario files from this time (s) on, rebased to it (files with "
        "absolute times, such as the authors' variation files; earlier rows give the state "
        "at the start). Default: --window-start.")],
    "walltime_kill": WalltimeKillOpt,
    "power_cap": Annotated[str | None, typer.Option(
        help="Machine-wide power cap in W (idle nodes count), or a varying cap: an Eurora "
        "seconds;watts profile FILE (the same as --scenario FILE; --scenario also takes a "
        "time,what,value file).")],
    "job_power": Annotated[str | None, typer.Option(
        help="Where job power comes from: node (the platform's node power model; default "
        "when it has one) | column (the workload's power column) | pa-hpc-sim "
        "(PA-HPC-SIM's formula) | a job_id;watts prediction FILE.")],
    "job_power_fallback": Annotated[str, typer.Option(
        help="Jobs without a power figure: node (the node model on their nodes) | error | "
        "W.")],
    "idle_power": Annotated[bool, typer.Option(
        "--idle-power/--no-idle-power",
        help="Count idle and switched-off nodes' power against the cap (needs a platform "
        "power model).")],
    "on_over_cap": Annotated[str, typer.Option(
        help="When the cap falls below the power in use: wait (no start until under) | "
        "kill-youngest | requeue-youngest.")],
    "on_abort": Annotated[str, typer.Option(
        help="A job whose node leaves: requeue (restart, or resume from a checkpoint) | "
        "fail.")],
    "cooling": CoolingOpt,
    "temperature": TemperatureOpt,
    "prices": PricesOpt,
    "it_power": ItPowerOpt,
    "window_start": Annotated[int | None, typer.Option(
        help="Variable-capacity job file: the jobs released from this time (s) on, times "
        "rebased to it.")],
    "window": Annotated[int | None, typer.Option(
        help="Variable-capacity job file: the jobs released within this many seconds of "
        "--window-start; also the default --metrics-window.")],
    "metrics_window": MetricsWindowOpt,
    "loop": Annotated[str, typer.Option(
        help="Event loop: auto (the compiled loop when the setup allows it, same results; "
        "else the general one) | compiled | general.")],
    "progress": Annotated[bool, typer.Option(help="Show a progress bar.")],
    "schedule_format": Annotated[list[str] | None, typer.Option(
        help="With --out, also write the schedule as batsim (out_jobs.csv, Batsim's jobs.csv "
        "layout that evalys reads) or swf (schedule.swf); repeatable (compare: in each "
        "run's folder).")],
}

#: The experiment file's name for a run option that has another one there.
TOML_KEYS: dict[str, str] = {"reject_infeasible": "on_infeasible"}
#: Run options that are keys of the experiment file itself, not of a workload entry.
TOML_TOP_KEYS = ("on_infeasible", "schedule_format")
#: Run options an experiment file has no key for, and why.
NOT_IN_TOML: dict[str, str] = {
    "progress": "run-experiment shows its progress bar on a terminal",
}


@dataclass
class RunOptions:
    """What the user said about how to run the simulations (:data:`RUN_OPTIONS`)."""

    reject_infeasible: bool = False
    scenario: list[str] | None = None
    scenario_start: int | None = None
    walltime_kill: bool = True
    power_cap: str | None = None
    job_power: str | None = None
    job_power_fallback: str = "node"
    idle_power: bool = True
    on_over_cap: str = "wait"
    on_abort: str = "requeue"
    cooling: str | None = None
    temperature: str | None = None
    prices: str | None = None
    it_power: str = "auto"
    window_start: int | None = None
    window: int | None = None
    metrics_window: str | None = None
    loop: str = "auto"
    progress: bool = True
    schedule_format: list[str] | None = None

    @property
    def on_infeasible(self) -> str:
        """The engine's name for ``--reject-infeasible``."""
        return "reject" if self.reject_infeasible else "error"

    def settings(self) -> RunSettings:
        """The :class:`RunSettings` these options give (the scenario start defaults to
        ``--window-start``); a bad value names its option."""
        values = {name: getattr(self, name) for name in SETTING_NAMES}
        if self.scenario_start is None:
            values["scenario_start"] = self.window_start
        try:
            return RunSettings(**values)
        except ConfigError as exc:
            if exc.field is None:
                raise
            text = str(exc).removeprefix(f"field '{exc.field}': ")
            raise ConfigError(text, field=option_name(exc.field)) from None

    def workload_keys(self) -> dict[str, Any]:
        """These options as the keys of an experiment file's workload entry (those given
        only; ``--reject-infeasible`` is the file's ``on_infeasible``, see
        :attr:`on_infeasible`)."""
        from dispatchlab.cli.simulate_cmd import parse_metrics_window, parse_power_cap

        self.settings()  # a bad value names its option
        cap_w, scenario = parse_power_cap(self.power_cap, self.scenario)
        window = parse_metrics_window(self.metrics_window, None)
        keys: dict[str, Any] = given(
            scenario=(scenario[0] if len(scenario) == 1 else scenario) if scenario else None,
            power_cap=cap_w,
            metrics_window=list(window) if window else None,
            **{name: getattr(self, name) for name in (
                "cooling", "temperature", "prices", "window_start", "window")})
        default = RunOptions()
        for name in (*SETTING_NAMES, "walltime_kill", "it_power"):
            if getattr(self, name) != getattr(default, name):
                keys[name] = getattr(self, name)
        return keys

    def refuse(self, refused: Mapping[str, str], command: str) -> None:
        """The first of ``refused`` (option → why) given a value other than its default,
        as one error."""
        default = RunOptions()
        for name, why in refused.items():
            if getattr(self, name) != getattr(default, name):
                written = spelling(name, getattr(self, name))
                raise ConfigError(f"{command} cannot take {written}: {why}")


def option_name(name: str) -> str:
    """``job_power`` → ``--job-power``."""
    return "--" + name.replace("_", "-")


def as_option_error(exc: ConfigError, entry: str = "workloads[0]") -> ConfigError:
    """An error the experiment planner raised about a run key of the workload ``entry``
    (``workloads[0].job_power``), naming the command-line option instead (``--job-power``);
    any other error unchanged."""
    key = (exc.field or "").removeprefix(f"{entry}.")
    names = {TOML_KEYS.get(n, n): n for n in RUN_OPTIONS if n not in NOT_IN_TOML}
    if key not in names:
        return exc
    text = str(exc).removeprefix(f"{exc.source}: " if exc.source else "")
    return ConfigError(text.removeprefix(f"field '{exc.field}': "),
                       field=option_name(names[key]))


def spelling(name: str, value: Any) -> str:
    """How the user wrote the run option ``name`` that has ``value``: ``--no-idle-power``
    for ``idle_power`` False."""
    info = RUN_OPTIONS[name].__metadata__[0]
    # typer keeps an option's first declaration as its ``default``
    for decl in (info.default, *(info.param_decls or ())):
        if isinstance(decl, str) and "/" in decl and isinstance(value, bool):
            on, off = decl.split("/")
            return on if value else off
    return option_name(name)


def with_run_options(refused: Mapping[str, str], command_name: str) -> Callable[[F], F]:
    """The command with every option of :data:`RUN_OPTIONS` in the place of its
    ``run: RunOptions`` parameter, collected into one :class:`RunOptions` handed to it as
    ``run``. Those in ``refused`` (option → why) are hidden from ``--help`` and refused
    with one line when given."""
    unknown = set(refused) - set(RUN_OPTIONS)
    if unknown:
        raise ValueError(f"not run options: {sorted(unknown)}")

    def decorate(command: F) -> F:
        declared = {name: _hidden(ann) if name in refused else ann
                    for name, ann in RUN_OPTIONS.items()}

        def make(given: dict[str, Any]) -> RunOptions:
            run = RunOptions(**given)
            run.refuse(refused, command_name)
            return run

        @functools.wraps(command)
        def flagged(*args: Any, **kwargs: Any) -> Any:
            """An error about a run option by its Python name (``it_power``, raised by
            the simulation) names the flag (``--it-power``)."""
            try:
                return command(*args, **kwargs)
            except ConfigError as exc:
                if exc.source is not None or exc.field not in RUN_OPTIONS:
                    raise
                text = str(exc).removeprefix(f"field '{exc.field}': ")
                raise ConfigError(text, field=option_name(exc.field)) from None

        return _replace_parameter(flagged, "run", declared,  # type: ignore[return-value]
                                  asdict(RunOptions()), make)

    return decorate


def _hidden(annotation: Any) -> Any:
    """The same option, left out of ``--help``."""
    import copy

    base, info = annotation.__origin__, annotation.__metadata__[0]
    info = copy.copy(info)
    info.hidden = True
    return Annotated[base, info]


def _replace_parameter(command: F, name: str, declared: Mapping[str, Any],
                       defaults: Mapping[str, Any], make: Callable[[dict[str, Any]], Any]
                       ) -> F:
    """``command`` with the options ``declared`` (parameter → annotation) in the place of
    its parameter ``name``; their values reach it as ``name=make(values)``."""
    signature = inspect.signature(command, eval_str=True)
    params: list[inspect.Parameter] = []
    for param in signature.parameters.values():
        if param.name != name:
            params.append(param)
            continue
        params += [inspect.Parameter(option, param.kind, annotation=annotation,
                                     default=defaults[option])
                   for option, annotation in declared.items()]

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        given = {option: kwargs.pop(option) for option in declared if option in kwargs}
        return command(*args, **{name: make(given)}, **kwargs)

    wrapper.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in params}
    return wrapper  # type: ignore[return-value]
