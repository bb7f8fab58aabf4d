"""Profit of a run: ``K1 · core-hours executed − K2 · (IT energy + cooling energy)``.

Bridi's thesis (2018) §6.5.3, Eq. 6.3 (``G·K1 − W·K2 − J·K2``) and §6.8.1 (prices). K2 is a
constant there; a scenario's ``energy_price`` rows (:mod:`dispatchlab.energy.tariff`) make
it a tariff over time: each stretch of energy is priced at the price then in force.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from dispatchlab.energy.accounting import J_PER_KWH
from dispatchlab.energy.cooling import PueTable
from dispatchlab.energy.tariff import price_steps, prices_at, tariff_summary
from dispatchlab.engine.recorder import Recorder
from dispatchlab.platform.platform import Platform
from dispatchlab.workload.workload import Workload

if TYPE_CHECKING:  # pandas is imported on use: listing the hybrid presets must not
    import pandas as pd


@dataclass(frozen=True)
class Prices:
    """K1: currency per core-hour executed; K2: currency per kWh (IT + cooling)."""

    core_hour: float
    energy_kwh: float

    def __post_init__(self) -> None:
        for name, v in (("core_hour", self.core_hour), ("energy_kwh", self.energy_kwh)):
            if not (math.isfinite(v) and v >= 0):
                raise ValueError(f"prices: {name} must be a finite number >= 0, got {v}")


#: The thesis's prices (§6.8.1): K1 = 0.013 €/core-hour ("cheap") or 0.10 €/core-hour
#: ("expensive"); K2 = 0.13 €/kWh.
THESIS_PRICES = {"cheap": Prices(0.013, 0.13), "expensive": Prices(0.10, 0.13)}
#: Default when none are given: the thesis's cheap core-hours.
DEFAULT_PRICES = THESIS_PRICES["cheap"]


def parse_prices(spec: str) -> Prices:
    """``cheap`` | ``expensive`` | ``K1,K2`` (€/core-hour, €/kWh)."""
    if spec in THESIS_PRICES:
        return THESIS_PRICES[spec]
    parts = spec.split(",")
    try:
        k1, k2 = (float(v) for v in parts)
    except ValueError:
        raise ValueError(f"prices '{spec}': expected 'cheap', 'expensive' or 'K1,K2' "
                         f"(currency per core-hour, per kWh)") from None
    return Prices(k1, k2)


@dataclass(frozen=True)
class CoolingSetup:
    """What the profit accounting of a run needs besides the run: the PUE table, the
    ambient temperature step series (°C from ``temp_times[k]`` on; the first value holds
    before the first time, the last after the last), the prices and where the IT power
    comes from (``auto``: the platform's node power model if it has one, else the jobs'
    ``power`` column; ``nodes``; ``jobs``). ``price_times`` / ``price_values``: the
    scenario's ``energy_price`` steps, which replace the constant K2 when given."""

    table: PueTable
    temp_times: tuple[int, ...]
    temp_values: tuple[float, ...]
    prices: Prices = DEFAULT_PRICES
    it_power: str = "auto"
    source: dict[str, object] | None = None
    scale: bool = False  # fit the table to the machine's highest IT power when accounting
    price_times: tuple[int, ...] = ()
    price_values: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if not self.temp_times or len(self.temp_times) != len(self.temp_values):
            raise ValueError("cooling: the ambient temperature series is empty")
        if any(b < a for a, b in zip(self.temp_times, self.temp_times[1:], strict=False)):
            raise ValueError("cooling: temperature times must not decrease")
        if len(self.price_times) != len(self.price_values):
            raise ValueError("cooling: energy price times and values differ in number")
        if self.it_power not in IT_POWER:
            raise ValueError(f"cooling: it_power must be auto, nodes or jobs, "
                             f"got '{self.it_power}'")


@dataclass
class ProfitResult:
    """Profit figures of a run and the step series behind them."""

    summary: dict[str, object]
    series: pd.DataFrame  # time, it_power_w, cooling_w, temperature_c, pue


def it_power_from_jobs(rec: Recorder) -> tuple[np.ndarray, np.ndarray]:
    """IT power step series (times, W) = Σ running jobs' ``power`` figures (thesis Eq.
    6.3's ``W``: each job draws its mean power while it runs, wherever it runs)."""
    seg, wl = rec.segments, rec.workload
    power = wl.power[seg.job]
    if len(seg) and not np.isfinite(power).all():
        bad = int(wl.job_id[seg.job[~np.isfinite(power)][0]])
        raise ValueError(f"cooling: job {bad} has no power figure (the workload's power "
                         f"column); give every job one or use a platform power model")
    t = np.concatenate((seg.t0, seg.t1)).astype(np.int64)
    d = np.concatenate((power, -power)).astype(np.float64)
    order = np.argsort(t, kind="stable")
    t, level = t[order], np.cumsum(d[order])
    last = np.r_[t[1:] != t[:-1], True]
    times, watts = t[last], level[last]
    watts[np.abs(watts) < 1e-6] = 0.0
    return times, watts


def core_seconds(rec: Recorder, until: int | None = None) -> float:
    """Core-seconds executed (up to ``until`` when given): every segment's duration × the
    cores it held (killed and requeued segments included: the machine ran them)."""
    seg = rec.segments
    if not len(seg):
        return 0.0
    c = rec.platform.resources.index("cores")
    owner = np.repeat(np.arange(len(seg)), seg.sizes)
    cores = np.bincount(owner, weights=seg.counts * rec.req[seg.job[owner], c],
                        minlength=len(seg))
    end = seg.t1 if until is None else np.minimum(seg.t1, until)
    return float((np.clip(end - seg.t0, 0, None) * cores).sum())


def cooling_series(times: np.ndarray, watts: np.ndarray, setup: CoolingSetup, t0: int,
                   t1: int) -> pd.DataFrame:
    """The step series of IT power, temperature, PUE and cooling power (and the energy
    price, with a tariff) over ``[t0, t1)``, split at every change of any input."""
    tt, tv = np.asarray(setup.temp_times, np.int64), np.asarray(setup.temp_values, float)
    pt = np.asarray(setup.price_times, np.int64)
    edges = np.unique(np.concatenate(([t0], times[(times > t0) & (times < t1)],
                                      tt[(tt > t0) & (tt < t1)], pt[(pt > t0) & (pt < t1)])))
    k = np.searchsorted(times, edges, side="right") - 1
    it = np.where(k >= 0, watts[np.maximum(k, 0)], 0.0)
    j = np.searchsorted(tt, edges, side="right") - 1
    temp = tv[np.maximum(j, 0)]
    pue = setup.table.pue_many(it, temp)
    cool = it * (pue - 1.0)
    import pandas as pd

    frame = pd.DataFrame({"time": edges, "it_power_w": it, "cooling_w": cool,
                          "temperature_c": temp, "pue": pue})
    if len(pt):
        frame["energy_price"] = prices_at(edges, pt, np.asarray(setup.price_values, float))
    return frame


def _integral(series: pd.DataFrame, column: str, t1: int) -> float:
    t = series["time"].to_numpy()
    dt = np.diff(np.r_[t, t1]).astype(np.float64)
    return float((series[column].to_numpy() * dt).sum())


def tariff_cost(series: pd.DataFrame, t1: int) -> float:
    """The (IT + cooling) energy of a :func:`cooling_series` up to ``t1``, each stretch
    priced at its ``energy_price``."""
    dt = np.diff(np.r_[series["time"].to_numpy(), t1]).astype(np.float64)
    joules = (series["it_power_w"].to_numpy() + series["cooling_w"].to_numpy()) * dt
    return float((joules / J_PER_KWH * series["energy_price"].to_numpy()).sum())


def _figures(rec: Recorder, series: pd.DataFrame, prices: Prices, t0: int, t1: int,
             core_s: float) -> dict[str, object]:
    part = series[series["time"] < t1]
    it_j = _integral(part, "it_power_w", t1)
    cool_j = _integral(part, "cooling_w", t1)
    core_h = core_s / 3600.0
    it_kwh, cool_kwh = it_j / J_PER_KWH, cool_j / J_PER_KWH
    income = prices.core_hour * core_h
    if "energy_price" in part:  # a tariff: every stretch at the price then in force
        cost = tariff_cost(part, t1)
    else:
        cost = prices.energy_kwh * (it_kwh + cool_kwh)
    return {"window_s": [t0, t1], "core_hours": core_h, "it_kwh": it_kwh,
            "cooling_kwh": cool_kwh, "mean_pue": (it_j + cool_j) / it_j if it_j > 0 else 1.0,
            "income": income, "energy_cost": cost, "profit": income - cost}


def run_profit(rec: Recorder, setup: CoolingSetup) -> ProfitResult:
    """Profit, core-hours, IT and cooling energy and mean PUE of a finished run, over the
    run (first submission to last segment end) and up to the last submission (the window
    the thesis compares dispatchers on, §6.8.3)."""
    wl, seg = rec.workload, rec.segments
    source = setup.it_power
    if source == "auto":
        source = "nodes" if rec.platform.power_table is not None else "jobs"
    if source == "nodes":
        from dispatchlab.energy.accounting import run_energy

        e = run_energy(rec)
        times, watts = e.times, e.power
    else:
        times, watts = it_power_from_jobs(rec)
    if setup.scale:
        setup = replace(setup, table=setup.table.scaled(max_it_power(rec, source)))
    t0 = int(wl.submit.min()) if wl.n_jobs else 0
    t1 = max(int(seg.t1.max()) if len(seg) else t0, t0 + 1)
    series = cooling_series(times, watts, setup, t0, t1)
    last_submit = max(int(wl.submit.max()) if wl.n_jobs else t0, t0 + 1)
    run = _figures(rec, series, setup.prices, t0, t1, core_seconds(rec))
    at_sub = _figures(rec, series, setup.prices, t0, last_submit,
                      core_seconds(rec, last_submit))
    summary: dict[str, object] = {
        **run,
        "at_last_submission": at_sub,
        "prices": {"core_hour": setup.prices.core_hour,
                   "energy_kwh": setup.prices.energy_kwh if not setup.price_times
                   else "tariff"},
        **_tariff(setup, run),
        "cooling": setup.table.describe(),
        "it_power_source": source,
        "temperature": {"changes": len(setup.temp_times),
                        "last_change_s": int(setup.temp_times[-1]),
                        "min_c": float(min(setup.temp_values)),
                        "max_c": float(max(setup.temp_values)),
                        **(setup.source or {})},
    }
    return ProfitResult(summary=summary, series=series)


def _tariff(setup: CoolingSetup, run: dict[str, object]) -> dict[str, object]:
    """The ``tariff`` entry of a priced run whose energy price changes over time."""
    if not setup.price_times:
        return {}
    kwh = float(run["it_kwh"]) + float(run["cooling_kwh"])  # type: ignore[arg-type]
    return {"tariff": tariff_summary(np.asarray(setup.price_times, np.int64),
                                     np.asarray(setup.price_values, float), kwh,
                                     float(run["energy_cost"]))}  # type: ignore[arg-type]


def check_inputs(setup: CoolingSetup, workload: Workload, platform: Platform) -> None:
    """What the accounting will need, checked before the run (``ValueError``): every
    temperature inside the table, a power figure for every job when the IT power comes
    from the jobs, and a table that covers the idle machine when it comes from the nodes."""
    for t in sorted(set(setup.temp_values)):
        setup.table.row_of(t)
    source = setup.it_power
    if source == "auto":
        source = "nodes" if platform.power_table is not None else "jobs"
    if source == "nodes" and platform.power_table is None:
        raise ValueError(f"cooling: it_power 'nodes' needs a node power model, and platform "
                         f"'{platform.name}' has none")
    if source == "jobs":
        missing = ~np.isfinite(workload.power)
        if missing.any():
            j = int(np.flatnonzero(missing)[0])
            raise ValueError(f"cooling: the IT power comes from the jobs' power column, and "
                             f"{int(missing.sum())} job(s) have none (first: job "
                             f"{int(workload.job_id[j])}); give the platform a node power "
                             "model or the workload a power column")
    if source == "nodes" and not setup.scale:
        top = _machine_max_w(platform)
        if top > setup.table.max_power * (1 + 1e-12):
            raise ValueError(f"cooling: the machine draws up to {top:,.0f} W with every node "
                             "busy, above the PUE table's last breakpoint "
                             f"{setup.table.max_power:,.0f} W; use '{setup.table.name}:scaled' "
                             "to fit the table to it")


def _machine_max_w(platform: Platform) -> float:
    """Every node on and fully used, under the node power model."""
    from dispatchlab.platform.node_states import ON

    assert platform.power_table is not None
    n = platform.capacity.shape[0]
    nodes = np.arange(n, dtype=np.int64)
    full = platform.capacity.astype(np.int64)
    return float(platform.power_table.power(nodes, np.full(n, ON, np.int64), full).sum())


def max_it_power(rec: Recorder, source: str) -> float:
    """The machine's highest possible IT power (W), to scale a table to it: every node at
    full use under the node model (``nodes``), or all cores at the hungriest job's W per
    core (``jobs``)."""
    plat, wl = rec.platform, rec.workload
    if source == "nodes" and plat.power_table is not None:
        return _machine_max_w(plat)
    c = plat.resources.index("cores")
    per_core = wl.power / np.maximum(wl.units * wl.req[:, c], 1)
    per_core = per_core[np.isfinite(per_core)]
    if not len(per_core):
        raise ValueError("cooling: cannot scale the table: no job has a power figure")
    return float(plat.capacity[:, c].sum() * per_core.max())


def cooling_setup(cooling: str | PueTable, temperature: object = None,
                  prices: Prices | str | None = None, it_power: str = "auto",
                  scenario: object = None) -> CoolingSetup:
    """:func:`make_cooling_setup`, its errors as one-line :class:`ConfigError` naming the
    input at fault: ``prices``, ``it_power``, ``temperature`` (a scenario error of the
    temperature argument) or ``cooling``."""
    from dispatchlab.errors import ConfigError, DispatchlabError

    try:
        if isinstance(prices, str):
            prices = parse_prices(prices)
    except ValueError as exc:
        raise ConfigError(str(exc), field="prices") from None
    check_it_power(it_power)
    try:
        return make_cooling_setup(cooling, temperature, prices, it_power, scenario)
    except ConfigError as exc:
        if temperature is None or exc.field != "scenario":
            raise
        where = (f"{exc.source}: " if exc.source else "") + f"field '{exc.field}': "
        text = str(exc).removeprefix(where)
        raise ConfigError(text, field="temperature",
                          source=exc.source) from None
    except DispatchlabError:
        raise
    except ValueError as exc:
        raise ConfigError(str(exc), field="cooling") from None


#: Where the IT power of the profit accounting comes from.
IT_POWER = ("auto", "nodes", "jobs")


def check_it_power(it_power: str) -> None:
    """``it_power`` is one of :data:`IT_POWER` (checked whether or not a cooling model is
    given, so that a typo is never silently unused)."""
    from dispatchlab.errors import ConfigError

    if it_power not in IT_POWER:
        raise ConfigError(f"it_power must be {', '.join(IT_POWER)}, got '{it_power}'",
                          field="it_power")


def make_cooling_setup(cooling: str | PueTable, temperature: object = None,
                       prices: Prices | str | None = None, it_power: str = "auto",
                       scenario: object = None) -> CoolingSetup:
    """A :class:`CoolingSetup` from user-facing arguments: ``cooling`` ``air`` | ``hybrid``
    | a CSV table (a ``:scaled`` suffix rescales it to the machine when the run is
    accounted), ``temperature`` a scenario argument (``gen:temperature:...``, a
    ``time,what,value`` file with ``temperature`` rows) or, when None, the ``temperature``
    rows of the run's ``scenario``; ``prices`` ``cheap`` | ``expensive`` | ``K1,K2``; the
    ``energy_price`` rows of the run's ``scenario``, if any, replace K2 over time."""
    from dispatchlab.energy.cooling import pue_table
    from dispatchlab.engine.scenario_gen import resolve_scenario
    from dispatchlab.engine.temperature import temperature_steps

    scale = False
    if isinstance(cooling, str):
        name, _, suffix = cooling.partition(":")
        if suffix not in ("", "scaled"):
            raise ValueError(f"cooling '{cooling}': the only suffix is ':scaled'")
        scale = suffix == "scaled"
        table = pue_table(name)
    else:
        table = cooling
    source: dict[str, object]
    if temperature is not None:
        scen = resolve_scenario(temperature)  # type: ignore[arg-type]
        source = {"source": str(temperature)}
    else:
        scen = scenario  # type: ignore[assignment]
        source = {"source": "the run's scenario"}
    times, values = temperature_steps(scen)
    if not len(times):
        raise ValueError("cooling: no ambient temperature (give --temperature gen:temperature:"
                         "season=summer or a file with temperature rows)")
    if isinstance(prices, str):
        prices = parse_prices(prices)
    pt, pv = price_steps(scenario)
    return CoolingSetup(table, tuple(int(t) for t in times), tuple(float(v) for v in values),
                        prices if prices is not None else DEFAULT_PRICES, it_power,
                        source=source, scale=scale, price_times=tuple(int(t) for t in pt),
                        price_values=tuple(float(v) for v in pv))
