"""``simulate()``: the one call that runs a dispatcher on a workload and a platform."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from dispatchlab.dispatchers.base import BaseDispatcher, Dispatcher
from dispatchlab.dispatchers.registry import get_dispatcher
from dispatchlab.energy.accounting import run_energy
from dispatchlab.energy.tariff import energy_entry
from dispatchlab.engine.budget import PowerModel
from dispatchlab.engine.capabilities import check_composition
from dispatchlab.engine.compiled.select import run_loop
from dispatchlab.engine.desired_utilization import desired_profiles
from dispatchlab.engine.scenario_gen import ScenarioArg, resolve_scenario
from dispatchlab.engine.simulator import Simulator
from dispatchlab.errors import ConfigError
from dispatchlab.metrics.audit import audit
from dispatchlab.metrics.results import Results
from dispatchlab.metrics.rules_audit import audit_rules
from dispatchlab.platform.platform import Platform
from dispatchlab.platform.resolve import resolve_platform
from dispatchlab.seeds import check_seed
from dispatchlab.workload.workload import Workload


def simulate(
    workload: Workload | str | Path,
    platform: Platform | str,
    dispatcher: Dispatcher | str = "fifo",
    *,
    seed: int = 0,
    on_infeasible: str = "error",
    progress: Callable[[int, int], None] | None = None,
    check: bool = True,
    loop: str = "auto",
    scenario: ScenarioArg = None,
    walltime_kill: bool = True,
    on_abort: str = "requeue",
    power_cap: float | None = None,
    power_model: PowerModel | None = None,
    count_idle: bool = True,
    on_over_cap: str = "wait",
    tables: bool = True,
    cooling: str | None = None,
    temperature: ScenarioArg = None,
    prices: str | None = None,
    it_power: str = "auto",
    metrics_window: tuple[int, int] | None = None,
    **load_options: Any,
) -> Results:
    """Simulate ``workload`` on ``platform`` under ``dispatcher`` and return the results.

    Strings are resolved: a workload path is loaded (format detected; ``load_options``
    go to the reader), a platform spec/preset/file is parsed, a dispatcher name is
    looked up in the registry, a scenario path or ``gen:`` spec is read or generated.
    ``check`` audits the finished schedule independently of the engine (capacity never
    exceeded, nodes used only while on, every job accounted for, durations as the work
    model says, power under the cap) and against the operator rules. ``loop``: ``auto``
    runs common rule-based setups in the compiled loop (identical results) and everything
    else in the general one; ``compiled`` / ``general`` force one. ``walltime_kill=False``
    lets every job run its actual run time (dispatchers still see requested times).
    ``power_cap`` / ``power_model`` / ``count_idle`` / ``on_over_cap``: see
    :class:`~dispatchlab.engine.simulator.Simulator`; a platform with a node power model
    gets an ``energy`` entry in the summary (J, kWh, peak, EDP, per state).
    ``tables=False`` skips building the per-job table and time series eagerly (they are
    still built if read): the lean path of parameter searches.
    ``cooling`` (``air`` | ``hybrid`` | a PUE table CSV, optionally ``:scaled``) adds the
    ``profit`` entry (core-hours, IT and cooling kWh, mean PUE, profit) and the ``cooling``
    table: ambient ``temperature`` from a ``gen:temperature:...`` spec or file (default:
    the scenario's temperature rows), ``prices`` ``cheap`` | ``expensive`` | ``K1,K2``,
    ``it_power`` ``auto`` | ``nodes`` | ``jobs`` (:mod:`dispatchlab.energy.profit`).
    ``metrics_window`` ``(start, T)`` adds the variable-capacity metrics over ``[start, T)``
    (``goodput``, ``max_stretch``, ``aborted_volume``, …, as experiments do); a run of the
    malleable family gets the paper's ``malleable`` entry (cost, mean stretch, normalised
    power).
    """
    check_seed(seed)
    if not isinstance(workload, Workload):
        from dispatchlab.workload.load import load_workload

        workload = load_workload(workload, **load_options)
    plat = resolve_platform(platform)
    disp = get_dispatcher(dispatcher) if isinstance(dispatcher, str) else dispatcher
    scen = resolve_scenario(scenario)
    if metrics_window is not None and not 0 <= metrics_window[0] < metrics_window[1]:
        raise ConfigError(f"needs 0 ≤ start < T, got {list(metrics_window)}",
                          field="metrics_window")
    check_composition(disp, scenario_kinds=scen.kinds() if scen is not None else set(),
                      power_cap=power_cap,
                      max_units=int(workload.units.max()) if workload.n_jobs else 1)
    cool = None
    from dispatchlab.energy.profit import check_it_power

    check_it_power(it_power)
    if cooling is None and (temperature is not None or prices is not None
                            or it_power != "auto"):
        given = ("temperature" if temperature is not None
                 else "prices" if prices is not None else "it_power")
        raise ConfigError(f"{given} is used only to price the run with a cooling model: "
                          "give one too (--cooling air|hybrid|FILE)", field=given)
    if cooling is not None:
        from dispatchlab.energy.profit import check_inputs, cooling_setup

        cool = cooling_setup(cooling, temperature, prices, it_power, scen)
        try:
            check_inputs(cool, workload, plat)
        except ValueError as exc:
            raise ConfigError(str(exc), field="cooling") from None
    sim = Simulator(workload, plat, disp, seed=seed, on_infeasible=on_infeasible,
                    progress=progress, scenario=scen, walltime_kill=walltime_kill,
                    on_abort=on_abort, power_cap=power_cap, power_model=power_model,
                    count_idle=count_idle, on_over_cap=on_over_cap)
    config = {
        "workload": {"source": workload.source, "jobs": workload.n_jobs,
                     **{k: v for k, v in workload.meta.items()
                        if k not in ("load_report", "swf_status")}},
        "platform": plat.describe(),
        "dispatcher": disp.describe(),
        "seed": seed,
        "on_infeasible": on_infeasible,
        "engine_settings": sim.engine_info(),
    }
    rec, ran_on = run_loop(sim, loop)
    rec.desired = desired_profiles(scen, plat.resources)
    if check:
        audit(rec)
        audit_rules(rec)
    res = Results.from_recorder(rec, config)
    if plat.power_table is not None:
        res.summary["energy"] = energy_entry(run_energy(rec), scen)
    res.summary["audited"] = check
    if scen is not None and "desired_utilization" in scen.kinds():
        from dispatchlab.metrics.profile_run import run_profile_summary

        res.summary["profile"] = run_profile_summary(res, scen)
    if cool is not None:
        from dispatchlab.energy.profit import run_profit

        try:
            prof = run_profit(rec, cool)
        except ValueError as exc:  # e.g. an IT power above the table, known only now
            raise ConfigError(f"{exc} (the schedule ran; fix the cooling input and run "
                              "again)", field="cooling") from None
        res.summary["profit"] = prof.summary
        res.tables["cooling"] = prof.series
    if metrics_window is not None:
        from dispatchlab.metrics.variable_capacity import vc_metrics

        res.summary.update(vc_metrics(rec, metrics_window[1], metrics_window[0]))
    if isinstance(disp, BaseDispatcher):
        res.summary.update(disp.run_summary(rec))
    res.summary["loop"] = ran_on
    if tables:
        res.jobs  # noqa: B018 - built now, as documented
        res.timeseries  # noqa: B018
    return res
