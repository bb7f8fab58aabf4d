"""Options shared by the commands that load a workload (SWF cleaning and slicing).

The reading options are declared once here; :func:`with_load_options` gives a command all of
them in place of its ``load: LoadOptions`` parameter and hands the command one record.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Annotated, Any, TypeVar

import typer

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
# options that several commands declare alike
WalltimeKillOpt = Annotated[bool, typer.Option(
    "--walltime-kill/--no-walltime-kill",
    help="Kill jobs at their requested time, or let each run its actual run time.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]
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

# the command-line form of each LoadOptions field (eurora_units is simulate's own option)
LOAD_OPTIONS: dict[str, Any] = {
    "format": FormatOpt, "skip": SkipOpt, "limit": LimitOpt, "swf_procs": ProcsOpt,
    "swf_missing_estimate": MissingOpt, "swf_units": UnitsOpt, "swf_cores_per_node": CpnOpt,
    "drop_zero_runtime": ZeroOpt, "keep_invalid": KeepOpt, "skip_bad_lines": BadOpt,
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
    signature = inspect.signature(command, eval_str=True)
    defaults = asdict(LoadOptions())
    params: list[inspect.Parameter] = []
    for param in signature.parameters.values():
        if param.name != "load":
            params.append(param)
            continue
        params += [inspect.Parameter(name, param.kind, annotation=annotation,
                                     default=defaults[name])
                   for name, annotation in LOAD_OPTIONS.items()]

    @functools.wraps(command)
    def with_load(*args: Any, **kwargs: Any) -> Any:
        given = {name: kwargs.pop(name) for name in LOAD_OPTIONS if name in kwargs}
        return command(*args, load=LoadOptions(**given), **kwargs)

    with_load.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
    with_load.__annotations__ = {p.name: p.annotation for p in params}
    return with_load  # type: ignore[return-value]
