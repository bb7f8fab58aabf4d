"""``dispatchlab plan``: plan a chunk of jobs offline for profit and write the plan."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import numpy as np
import typer

from dispatchlab.cli.app import app
from dispatchlab.cli.errors import flag_fields, friendly_errors
from dispatchlab.cli.options import (
    FormatOpt,
    JsonOpt,
    LimitOpt,
    LoadOptions,
    PlatformOpt,
    SkipOpt,
    WorkloadOpt,
)
from dispatchlab.cli.simulate_cmd import console
from dispatchlab.errors import ConfigError


@app.command("plan")
@friendly_errors
@flag_fields
def plan_command(
    workload: WorkloadOpt,
    platform: PlatformOpt = None,
    search: Annotated[str, typer.Option(
        help="heuristic (Alg. 5) | multi (22 orderings) | relax (CP-SAT, multi-unit jobs "
        "fixed) | delay (Alg. 7).")] = "delay",
    out: Annotated[Path | None, typer.Option(
        help="Write the plan here (.parquet, or .csv with a .json sidecar).")] = None,
    duration: Annotated[str, typer.Option(
        help="Planned durations: runtime (from the log) | walltime.")] = "runtime",
    step: Annotated[int, typer.Option(help="Time slot (s).")] = 60,
    window: Annotated[int, typer.Option(
        help="Profit window length (s) from the first submission.")] = 86400,
    cooling: Annotated[str, typer.Option(
        help="PUE table: air | hybrid | CSV file; ':scaled' fits it to the machine.")] = "air",
    temperature: Annotated[str, typer.Option(
        help="Ambient temperature: gen:temperature:season=summer|winter,… or a "
        "time,what,value file with temperature rows.")] = "gen:temperature:season=summer",
    prices: Annotated[str, typer.Option(
        help="cheap | expensive | K1,K2 (per core-hour, per kWh).")] = "cheap",
    energy_price: Annotated[str | None, typer.Option(
        help="A tariff replacing K2 over time: a scenario with energy_price rows "
        "(gen:day-night:what=energy_price,day=…,night=…, or a time,what,value file).")]
    = None,
    ordering: Annotated[str, typer.Option(
        help="Ordering of --search heuristic (criterion:inc|dec).")] = "est:inc",
    runs: Annotated[int | None, typer.Option(
        help="Heuristic runs (multi) / delay iterations (delay): deterministic limit.")]
    = None,
    time_limit: Annotated[float | None, typer.Option(
        "--time", help="Wall-clock limit per search (s; not reproducible).")] = None,
    cp_det_time: Annotated[float, typer.Option(
        help="CP-SAT deterministic time of relax.")] = 5.0,
    delay: Annotated[int, typer.Option(help="Delay step of delay (slots).")] = 60,
    relax_window: Annotated[int | None, typer.Option(
        help="relax by neighbourhoods: jobs starting in each slice of this many seconds "
        "(default: the whole chunk in one model).")] = None,
    strict: Annotated[bool, typer.Option(
        "--strict", help="relax: require a strictly better objective (thesis Eq. 6.5).")]
    = False,
    watts_per_core: Annotated[float | None, typer.Option(
        help="Power (W per core) of jobs without a power figure.")] = None,
    seed: Annotated[int, typer.Option(help="CP-SAT seed.")] = 0,
    as_json: JsonOpt = False,
    format: FormatOpt = None,
    skip: SkipOpt = 0,
    limit: LimitOpt = None,
) -> None:
    """Plan the workload's jobs for profit (thesis ch. 6) and print the plan's figures."""
    from dispatchlab.dispatchers.offline_plan.planner.instance import from_workload
    from dispatchlab.dispatchers.offline_plan.planner.objective import ProfitModel, check_window
    from dispatchlab.dispatchers.offline_plan.planner.searches import SEARCHES, Limits, run_search
    from dispatchlab.energy.profit import cooling_setup
    from dispatchlab.platform.resolve import resolve_platform
    from dispatchlab.workload.load import load_workload
    from dispatchlab.workload.platform_for import platform_for

    if search not in SEARCHES:
        raise ConfigError(f"unknown search '{search}' (known: {', '.join(SEARCHES)})",
                          field="--search")
    check_window(window, "--window")
    opts = LoadOptions(format=format, skip=skip, limit=limit)
    wl = load_workload(workload, **opts.reader_kwargs())
    if not wl.n_jobs:
        from dispatchlab.workload.load_report import no_jobs_reason

        raise ConfigError(f"{workload}: no jobs to plan: {no_jobs_reason(wl.meta)}",
                          field="--workload")
    plat = platform_for(wl)[0] if platform is None else resolve_platform(platform)
    tariff = None
    if energy_price is not None:
        from dispatchlab.engine.scenario_gen import resolve_scenario

        try:
            tariff = resolve_scenario(energy_price)
        except ValueError as exc:
            raise ConfigError(f"{energy_price}: {exc}", field="--energy-price") from None
        if tariff is None or "energy_price" not in tariff.kinds():
            raise ConfigError(f"{energy_price}: no energy_price rows", field="--energy-price")
    setup = cooling_setup(cooling.partition(":")[0], temperature, prices, scenario=tariff)
    table = setup.table
    inst = from_workload(wl, plat, duration=duration, step=step,
                         watts_per_core=watts_per_core, watts_name="--watts-per-core")
    try:
        for t in sorted(set(setup.temp_values)):  # before planning, not after
            table.row_of(t)
        if cooling.endswith(":scaled"):
            c = plat.resources.index("cores")
            per_core = inst.power / np.maximum(inst.units * inst.req[:, inst.cores_col], 1)
            table = table.scaled(float(plat.capacity[:, c].sum() * per_core.max()))
    except ValueError as exc:
        raise ConfigError(str(exc), field="--cooling") from None
    pm = ProfitModel(table, setup.temp_times, setup.temp_values, inst.origin,
                     inst.origin + window, setup.prices, price_times=setup.price_times,
                     price_values=setup.price_values)
    limits = Limits(runs=runs, time_s=time_limit, cp_det_time=cp_det_time, seed=seed)
    options: dict[str, object] = {}
    if search == "heuristic":
        options["ordering"] = ordering
    elif search == "delay":
        options["delay"] = delay
    elif search == "relax":
        options.update(window_s=relax_window, strict=strict)
    result = run_search(search, inst, pm, limits, **options)
    plan = result.plan(inst)
    if out is not None:
        plan.save(str(out))
    summary = {"search": search, "jobs": len(plan), "makespan_s": plan.makespan - inst.origin,
               "window_s": [pm.start, pm.end], **result.figures,
               "ordering": result.stats.get("ordering"),
               "solutions": result.stats.get("solutions"),
               "improvements": result.stats.get("improvements"),
               "time_s": result.stats.get("time_s"), "out": str(out) if out else None}
    if as_json:
        typer.echo(json.dumps(summary, default=str))
        return
    for key, value in summary.items():
        text = f"{value:,.4f}" if isinstance(value, float) else str(value)
        console.print(f"{key:>18}  {text}", highlight=False)
