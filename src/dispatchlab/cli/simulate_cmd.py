"""``dispatchlab simulate``: one workload, one platform, one dispatcher."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from dispatchlab.cli.app import app
from dispatchlab.cli.errors import friendly_errors
from dispatchlab.cli.options import LoadOptions
from dispatchlab.dispatchers.registry import get_dispatcher
from dispatchlab.metrics.results import Results
from dispatchlab.platform.from_workload import platform_for
from dispatchlab.platform.resolve import resolve_platform
from dispatchlab.report.format import fmt_duration
from dispatchlab.simulation import simulate
from dispatchlab.workload.load import load_workload

console = Console()

WorkloadOpt = Annotated[str, typer.Option("--workload", "-w",
                        help="Trace path (SWF, .swf.gz, Eurora batch, Parquet, CSV) or generator.")]
FormatOpt = Annotated[str | None,
                      typer.Option(help="swf|eurora|parquet|csv (detected if omitted).")]
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


def load_options(fmt: str | None, skip: int, limit: int | None, procs: str, missing: str,
                 units: str, cpn: int | None, zero: bool, keep: bool, bad: bool) -> LoadOptions:
    """Bundle the shared loading flags."""
    return LoadOptions(format=fmt, skip=skip, limit=limit, swf_procs=procs,
                       swf_missing_estimate=missing, swf_units=units, swf_cores_per_node=cpn,
                       drop_zero_runtime=zero, keep_invalid=keep, skip_bad_lines=bad)


@app.command("simulate")
@friendly_errors
def simulate_command(
    workload: WorkloadOpt,
    platform: PlatformOpt = None,
    dispatcher: Annotated[str, typer.Option("--dispatcher", "-d",
                          help="Preset name (fifo, easy, …) or key=value spec.")] = "fifo",
    seed: Annotated[int, typer.Option(help="Seed of the run's random generator.")] = 0,
    out: Annotated[Path | None, typer.Option(help="Write jobs, time series and summary here.")]
    = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as one JSON object.")]
    = False,
    format: FormatOpt = None,
    skip: SkipOpt = 0,
    limit: LimitOpt = None,
    swf_procs: ProcsOpt = "allocated",
    swf_missing_estimate: MissingOpt = "runtime",
    swf_units: UnitsOpt = "pool",
    swf_cores_per_node: CpnOpt = None,
    drop_zero_runtime: ZeroOpt = False,
    keep_invalid: KeepOpt = False,
    skip_bad_lines: BadOpt = False,
    reject_infeasible: Annotated[bool, typer.Option(
        "--reject-infeasible", help="Record jobs the machine can never host as rejected "
        "instead of failing.")] = False,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
    engine: Annotated[str, typer.Option(
        help="auto: the compiled loop when the setup allows it (same results), else the "
        "general one | compiled | general.")] = "auto",
    scenario: Annotated[list[str] | None, typer.Option(
        help="Changes over time: a CSV/Parquet file (time,what,value[,target]) or "
        "gen:NAME:k=v,… (repeat to merge).")] = None,
    walltime_kill: Annotated[bool, typer.Option(
        "--walltime-kill/--no-walltime-kill",
        help="Kill jobs at their requested time, or let each run its actual run time.")]
    = True,
    power_cap: Annotated[float | None, typer.Option(
        help="Machine-wide power cap in W (jobs draw the workload's power column).")] = None,
    on_abort: Annotated[str, typer.Option(
        help="A job whose node leaves: requeue (restart, or resume from a checkpoint) | "
        "fail.")] = "requeue",
) -> None:
    """Simulate one dispatcher on one workload and print the summary."""
    opts = load_options(format, skip, limit, swf_procs, swf_missing_estimate, swf_units,
                        swf_cores_per_node, drop_zero_runtime, keep_invalid, skip_bad_lines)
    wl = load_workload(workload, **opts.reader_kwargs())
    if platform is None:
        plat, how = platform_for(wl)
        if not as_json:
            console.print(f"platform {plat.name} ({how})")
    else:
        plat = resolve_platform(platform)
    disp = get_dispatcher(dispatcher)
    on_inf = "reject" if reject_infeasible else "error"
    dynamic: dict[str, Any] = {"scenario": scenario or None, "walltime_kill": walltime_kill,
                               "power_cap": power_cap, "on_abort": on_abort}
    show = progress and not as_json and console.is_terminal and wl.n_jobs >= 20_000
    if show:
        with Progress(TextColumn("simulating"), BarColumn(), TextColumn("{task.completed:,}/"
                      "{task.total:,} jobs"), TimeElapsedColumn(), console=console,
                      transient=True) as bar:
            task = bar.add_task("sim", total=wl.n_jobs)
            res = simulate(wl, plat, disp, seed=seed, on_infeasible=on_inf, engine=engine,
                           progress=lambda done, _n: bar.update(task, completed=done),
                           **dynamic)
    else:
        res = simulate(wl, plat, disp, seed=seed, on_infeasible=on_inf, engine=engine,
                       **dynamic)
    if out is not None:
        res.save(out)
    if as_json:
        typer.echo(json.dumps(_jsonable(res.summary)))
        return
    report = wl.meta.get("load_report")
    if report and any(report.get(k) for k in ("dropped_no_procs", "dropped_unknown_runtime",
                                               "dropped_unknown_submit", "dropped_zero_runtime",
                                               "bad_lines_skipped")):
        console.print("cleaning: " + ", ".join(f"{k}={v}" for k, v in report.items()
                      if isinstance(v, int) and v and k not in ("records", "jobs")))
    print_summary(res, title=f"{disp.name} on {Path(workload).name}")
    if out is not None:
        console.print(f"results written to {out}")


def print_summary(res: Results, title: str) -> None:
    """A readable table of the main summary figures."""
    s = res.summary
    table = Table(title=title, show_header=True)
    table.add_column("metric")
    table.add_column("value", justify="right")
    rows: list[tuple[str, str]] = [
        ("jobs (run / rejected)", f"{s['jobs_run']:,} / {s['rejected']:,}"),
        ("mean wait", fmt_duration(s["mean_wait"])),
        ("median / p90 / max wait",
         " / ".join(fmt_duration(s[k]) for k in ("median_wait", "p90_wait", "max_wait"))),
        ("mean slowdown", f"{s['mean_slowdown']:.2f}"),
        ("mean bounded slowdown (τ=10 s)", f"{s['mean_bounded_slowdown']:.2f}"),
        ("makespan", fmt_duration(s["makespan"])),
        ("utilization (cores)", f"{s['utilization'] * 100:.1f} %"),
        ("killed at wall-time", f"{s['killed']:,}"),
        ("decision time mean / max", f"{s['dispatch_time_mean_ms']:.3f} / "
                                     f"{s['dispatch_time_max_ms']:.1f} ms"),
        ("simulation wall time", f"{s['sim_seconds']:.2f} s ({s['jobs_per_second']:,.0f} jobs/s)"),
    ]
    for res, p in s.get("profile", {}).items():
        rows.append((f"over desired profile ({res})",
                     f"{p['over_utilization'] / 3600:,.0f} {res}-h, dissimilarity "
                     f"{p['dissimilarity']:.3f}"))
        rows.append(("late vs latest start", f"{p['late_jobs_lst']:,} jobs, "
                                             f"{fmt_duration(p['tardiness_lst_s'])} total"))
    for name, value in rows:
        table.add_row(name, value)
    console.print(table)


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item"):
        return value.item()
    return value
