"""``dispatchlab simulate``: one workload, one platform, one dispatcher."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from dispatchlab.atomic_output import check_not_file
from dispatchlab.cli.app import app
from dispatchlab.cli.errors import err_console, flag_fields, friendly_errors
from dispatchlab.cli.options import (
    DispatcherOpt,
    LoadOptions,
    PlatformOpt,
    RunOptions,
    SeedOpt,
    WorkloadOpt,
    spelling,
    with_load_options,
    with_run_options,
)
from dispatchlab.dispatchers.registry import get_dispatcher
from dispatchlab.errors import ConfigError, WorkloadError
from dispatchlab.metrics.results import Results
from dispatchlab.metrics.schedule_files import SCHEDULE_FILES, write_schedules
from dispatchlab.platform.resolve import resolve_platform
from dispatchlab.seeds import check_seed
from dispatchlab.simulation import simulate
from dispatchlab.workload.load import load_workload
from dispatchlab.workload.load_report import cleaning_counts
from dispatchlab.workload.platform_for import platform_for
from dispatchlab.workload.workload import Workload

console = Console()

#: The run options simulate cannot honour: none (it is their reference).
SIMULATE_REFUSES: dict[str, str] = {}
#: The run options the authors' own simulation reads (or, for the schedule files, refuses
#: with its own message); any other one given is refused, never ignored.
AUTHORS_READ_RUN_OPTIONS = frozenset({"scenario", "window_start", "window", "metrics_window",
                                      "progress", "schedule_format"})

@app.command("simulate")
@friendly_errors
@with_load_options
@with_run_options(SIMULATE_REFUSES, "simulate")
@flag_fields
def simulate_command(
    workload: WorkloadOpt,
    platform: PlatformOpt = None,
    dispatcher: DispatcherOpt = "fifo",
    seed: SeedOpt = 0,
    out: Annotated[Path | None, typer.Option(help="Write jobs, time series and summary here.")]
    = None,
    force: Annotated[bool, typer.Option("--force", help="Let --out replace a folder that "
                     "already holds results.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as one JSON object.")]
    = False,
    *,
    load: LoadOptions,
    run: RunOptions,
    engine: Annotated[str | None, typer.Option(
        hidden=True, help="Deprecated: --loop.")] = None,
) -> None:
    """Simulate one dispatcher on one workload and print the summary."""
    if engine is not None:
        err_console.print("warning: simulate --engine is deprecated; use --loop",
                          highlight=False)
        run.loop = engine
    settings = run.settings()
    scenario, window_start, window = run.scenario, run.window_start, run.window
    schedule_format, progress = run.schedule_format, run.progress
    if "semantics=authors" in dispatcher.replace(" ", ""):  # its own simulation and files
        from dispatchlab.cli.vc_authors import refuse_engine_options, run_authors

        if out is not None or schedule_format:
            raise ConfigError("vc=…,semantics=authors prints its figures (--json for all "
                              "of them); it writes no results folder", field="--out")
        default, used = RunOptions(), AUTHORS_READ_RUN_OPTIONS
        refuse_engine_options({
            **{spelling(f.name, getattr(run, f.name)):
               getattr(run, f.name) != getattr(default, f.name)
               for f in dataclasses.fields(run) if f.name not in used},
            **load.changed_flags()})
        run_authors(get_dispatcher(dispatcher), workload, platform,  # type: ignore[arg-type]
                    scenario, window_start, window, run.metrics_window, seed, as_json)
        return
    if out is not None:
        check_out(out, force)
    check_schedule_formats(schedule_format, out)
    check_seed(seed)  # the seed and the dispatcher before the workload is read and said
    disp = get_dispatcher(dispatcher)
    reader: dict[str, Any] = {**load.reader_kwargs(),
                              **job_file_window(workload, load.format, window_start, window),
                              **batsim_platform(workload, load.format, platform)}
    wl = load_workload(workload, **reader)
    require_jobs(wl, workload)
    if platform is None:
        plat, how = platform_for(wl)
        if not as_json:
            console.print(f"platform {plat.name} ({how})")
    else:
        plat = resolve_platform(platform)
        check_resources(plat, wl)
    cap_w, scenario = parse_power_cap(run.power_cap, scenario)
    dynamic: dict[str, Any] = {"scenario": settings.scenario(scenario or None),
                               "walltime_kill": run.walltime_kill,
                               "power_cap": cap_w, **settings.simulate_kwargs(wl, plat),
                               "cooling": run.cooling, "temperature": run.temperature,
                               "prices": run.prices, "it_power": run.it_power,
                               "metrics_window": parse_metrics_window(run.metrics_window,
                                                                      window)}
    on_inf = run.on_infeasible
    show = progress and not as_json and console.is_terminal and wl.n_jobs >= 20_000
    if show:
        with Progress(TextColumn("simulating"), BarColumn(), TextColumn("{task.completed:,}/"
                      "{task.total:,} jobs"), TimeElapsedColumn(), console=console,
                      transient=True) as bar:
            task = bar.add_task("sim", total=wl.n_jobs)
            res = simulate(wl, plat, disp, seed=seed, on_infeasible=on_inf,
                           tables=False, progress=lambda done, _n: bar.update(task, completed=done),
                           **dynamic)
    else:
        # tables=False: the per-job table and time series are built only by --out
        res = simulate(wl, plat, disp, seed=seed, on_infeasible=on_inf,
                       tables=False, **dynamic)
    cleaning = cleaning_counts(wl.meta.get("load_report") or {})  # reported, never silent
    if cleaning:
        res.summary["cleaning"] = cleaning
    if platform is None and as_json:  # the machine chosen for the trace, said as on screen
        res.summary["platform_chosen"] = f"{plat.name} ({how})"
    if out is not None:
        save_atomically(res, out, extra=lambda folder: write_schedules(
            res, folder, schedule_format or []))
    if as_json:
        typer.echo(json.dumps(_jsonable(res.summary), allow_nan=False))
        return
    if cleaning:
        console.print("cleaning: " + ", ".join(f"{k}={v}" for k, v in cleaning.items()))
    print_summary(res, title=f"{disp.name} on {Path(workload).name}")
    if res.summary.get("reproducible") is False:
        hits = res.summary.get("wall_limit_hits", 0)
        why = (f"the wall-clock safety net cut {hits} solver decision(s)" if hits
               else "the dispatcher uses wall-clock budgets")
        console.print(f"[yellow]warning:[/] not reproducible: {why}; the same run may give "
                      "other numbers")
    if out is not None:
        console.print(f"results written to {out}")


def job_file_window(path: str, fmt: str | None, start: int | None, length: int | None
                    ) -> dict[str, int]:
    """``--window-start``/``--window`` as reader options of a variable-capacity job file
    (an error for any other format)."""
    if start is None and length is None:
        return {}
    from dispatchlab.traces.resolve import is_trace_ref
    from dispatchlab.workload.generators.registry import is_generator_spec
    from dispatchlab.workload.load import detect_format

    if fmt is not None:
        kind = f"given as {fmt}"
    elif is_trace_ref(path):
        kind = "a catalogued trace"
    elif is_generator_spec(path):
        kind = "a generator spec"
    else:
        kind = f"a file of format {detect_format(Path(path))}"
    if kind != "a file of format vcjobs" and fmt != "vcjobs":
        raise ConfigError(f"--window-start/--window select jobs of a variable-capacity job "
                          f"file (format vcjobs); '{path}' is {kind}", field="--window")
    if (start is not None and start < 0) or (length is not None and length <= 0):
        raise ConfigError("needs --window-start ≥ 0 and --window > 0", field="--window")
    out = {"start": start or 0}
    if length is not None:
        out["window"] = length
    return out


def parse_metrics_window(text: str | None, window: int | None) -> tuple[int, int] | None:
    """``START,T`` → ``(START, T)``; by default ``(0, --window)`` when a window was given."""
    if text is None:
        return None if window is None else (0, window)
    parts = text.split(",")
    try:
        start, end = (int(p) for p in parts)
    except ValueError:
        raise ConfigError(f"expected START,T in whole seconds, got '{text}'",
                          field="--metrics-window") from None
    if not 0 <= start < end:
        raise ConfigError(f"needs 0 ≤ START < T, got '{text}'", field="--metrics-window")
    return start, end


def parse_power_cap(text: str | None, scenario: list[str] | None
                    ) -> tuple[float | None, list[str] | None]:
    """``--power-cap``: a number of W, or a cap profile file (added to the scenario)."""
    if text is None:
        return None, scenario
    try:
        return float(text), scenario
    except ValueError:
        pass
    if not text.startswith("trace:") and not Path(text).is_file():
        raise ConfigError(f"--power-cap takes a number of W or a cap profile file; "
                          f"'{text}' is neither", field="--power-cap")
    return None, [*(scenario or []), text]


#: Resources dispatchlab knows by name (a platform may also hold any the workload requests).
KNOWN_RESOURCES = ("cores", "gpu", "mic", "mem")


def check_resources(plat: Any, wl: Workload) -> None:
    """A platform resource neither known nor requested by the workload is a typo (``foo``,
    ``gpu2``): it used to be accepted and silently ignored."""
    known = dict.fromkeys((*KNOWN_RESOURCES, *wl.resources))
    for name in plat.resources:
        if name not in known:
            raise ConfigError(f"unknown resource '{name}' (known: {', '.join(known)})",
                              field="platform")


def check_out(out: Path, force: bool) -> None:
    """``--out`` must be a folder path: not a file, not under a file, and not a folder of
    earlier results unless ``--force``."""
    check_not_file(out, "--out")
    if out.is_dir() and any(out.iterdir()):
        if not (out / "summary.json").is_file():
            raise ConfigError(f"{out} is a non-empty folder that holds no results; choose "
                              "another --out", field="--out")
        if not force:
            raise ConfigError(f"{out} already holds results; pass --force to replace them",
                              field="--out")


def batsim_platform(workload: str, fmt: str | None, platform: str | None) -> dict[str, str]:
    """A Batsim workload run on a SimGrid platform file reads its hosts' speed and cores
    from that file (``parallel_homogeneous`` run times, whole-host units), as Batsim would."""
    if not platform or not platform.lower().endswith(".xml") or not Path(platform).is_file():
        return {}
    from dispatchlab.workload.load import detect_format

    path = Path(workload)
    is_batsim = fmt == "batsim" or (fmt is None and path.is_file()
                                    and detect_format(path) == "batsim")
    return {"platform": platform} if is_batsim else {}


def check_schedule_formats(formats: list[str] | None, out: Path | None) -> None:
    """Known ``--schedule-format`` values, and only with ``--out``."""
    for fmt in formats or []:
        if fmt not in SCHEDULE_FILES:
            raise ConfigError(f"unknown schedule format '{fmt}' (known: "
                              f"{', '.join(SCHEDULE_FILES)})", field="--schedule-format")
    if formats and out is None:
        raise ConfigError("needs --out (the folder to write the schedule in)",
                          field="--schedule-format")


def save_atomically(res: Results, out: Path,
                    extra: Callable[[Path], None] | None = None) -> None:
    """Write the results through :func:`atomic_output`: ``out`` is either the complete new
    results or untouched (disk full, Ctrl-C), never half written. ``extra`` writes further
    files into the folder before it is renamed."""
    from dispatchlab.atomic_output import atomic_output

    try:
        with atomic_output(out) as tmp:
            res.write_files(tmp)
            if extra is not None:
                extra(tmp)
    except KeyboardInterrupt:
        err_console.print(f"interrupted while writing {out}: nothing written", highlight=False)
        raise typer.Exit(code=130) from None


def require_jobs(wl: Workload, source: str, doing: str = "simulate") -> None:
    """A workload without jobs is an error (as in ``compare``), with what caused it."""
    if not wl.n_jobs:
        from dispatchlab.workload.load_report import no_jobs_reason

        raise WorkloadError(f"no jobs to {doing}: {no_jobs_reason(wl.meta)}", source=source)


def print_summary(res: Results, title: str) -> None:
    """A readable table of the main summary figures."""
    from dispatchlab.report.format import fmt_duration, fmt_ms

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
        ("decision time mean / max", f"{fmt_ms(s['dispatch_time_mean_ms'])} / "
                                     f"{fmt_ms(s['dispatch_time_max_ms'])}"),
        ("simulation wall time", f"{s['sim_seconds']:.2f} s ({s['jobs_per_second']:,.0f} jobs/s)"),
    ]
    if "power" in s:
        p = s["power"]
        rows.append(("IT power peak / mean", f"{p['peak_w']:,.1f} / {p['mean_w']:,.1f} W"))
        rows.append(("time over the power cap", fmt_duration(p["over_cap_seconds"])))
        if "cap_mean_w" in p:
            rows.append(("power cap min / mean / max",
                         f"{p['cap_min_w']:,.0f} / {p['cap_mean_w']:,.0f} / "
                         f"{p['cap_max_w']:,.0f} W"))
            rows.append(("time capped / uncapped", f"{fmt_duration(p['capped_seconds'])} / "
                                                   f"{fmt_duration(p['uncapped_seconds'])}"))
    if "energy" in s:
        e = s["energy"]
        rows.append(("energy", f"{e['total_j']:,.0f} J ({e['kwh']:,.3f} kWh)"))
        rows.append(("energy-delay product", f"{e['edp_js']:.4g} J·s"))
    if "profit" in s:
        f = s["profit"]
        rows.append(("core-hours / IT / cooling", f"{f['core_hours']:,.1f} core-h / "
                     f"{f['it_kwh']:,.2f} kWh / {f['cooling_kwh']:,.2f} kWh"))
        rows.append(("mean PUE / profit", f"{f['mean_pue']:.5f} / {f['profit']:,.2f}"))
    if "goodput" in s:
        lo, hi = s["window"]
        rows.append((f"goodput over [{lo:,}, {hi:,}) s", f"{s['goodput']:.4f}"))
        rows.append(("stretch max / mean (completed in window)",
                     f"{s['max_stretch']:.2f} / {s['mean_stretch']:.2f}"))
        rows.append(("aborted (segments / volume)",
                     f"{s['aborted_count']:,} / {s['aborted_volume'] / 3600:,.0f} core-h"))
        rows.append(("alive nodes min / mean / max",
                     f"{s['min_alive_nodes']} / {s['mean_alive_nodes']:.1f} / "
                     f"{s['max_alive_nodes']}"))
    if "malleable" in s:
        m = s["malleable"]
        rows.append(("malleable cost (stretch × power)",
                     f"{m['cost']:.4f} = {m['mean_stretch']:.4f} × {m['norm_power']:.4f}"))
        rows.append(("reconfigurations / power-offs",
                     f"{m['reconfigs']:,.0f} / {m['poweroffs']:,.0f}"))
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
    """Plain JSON values; a non-finite number becomes null (``Infinity`` is not JSON)."""
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
