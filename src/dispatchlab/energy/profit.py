"""Profit of a run: ``K1 · core-hours executed − K2 · (IT energy + cooling energy)``.

Bridi's thesis (2018) §6.5.3, Eq. 6.3 (``G·K1 − W·K2 − J·K2``) and §6.8.1 (prices).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from dispatchlab.energy.accounting import J_PER_KWH
from dispatchlab.energy.cooling import PueTable
from dispatchlab.engine.recorder import Recorder


@dataclass(frozen=True)
class Prices:
    """K1: currency per core-hour executed; K2: currency per kWh (IT + cooling)."""

    core_hour: float
    energy_kwh: float

    def __post_init__(self) -> None:
        for name, v in (("core_hour", self.core_hour), ("energy_kwh", self.energy_kwh)):
            if not v >= 0:
                raise ValueError(f"prices: {name} must be >= 0, got {v}")


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
    ``power`` column; ``nodes``; ``jobs``)."""

    table: PueTable
    temp_times: tuple[int, ...]
    temp_values: tuple[float, ...]
    prices: Prices = DEFAULT_PRICES
    it_power: str = "auto"
    source: dict[str, object] | None = None

    def __post_init__(self) -> None:
        if not self.temp_times or len(self.temp_times) != len(self.temp_values):
            raise ValueError("cooling: the ambient temperature series is empty")
        if any(b < a for a, b in zip(self.temp_times, self.temp_times[1:], strict=False)):
            raise ValueError("cooling: temperature times must not decrease")
        if self.it_power not in ("auto", "nodes", "jobs"):
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


def core_seconds(rec: Recorder) -> float:
    """Core-seconds executed: every segment's duration × the cores it held (killed and
    requeued segments included: the machine ran them)."""
    seg = rec.segments
    if not len(seg):
        return 0.0
    c = rec.platform.resources.index("cores")
    owner = np.repeat(np.arange(len(seg)), seg.sizes)
    cores = np.bincount(owner, weights=seg.counts * rec.req[seg.job[owner], c],
                        minlength=len(seg))
    return float(((seg.t1 - seg.t0) * cores).sum())


def _core_seconds_until(rec: Recorder, t_end: int) -> float:
    seg = rec.segments
    if not len(seg):
        return 0.0
    c = rec.platform.resources.index("cores")
    owner = np.repeat(np.arange(len(seg)), seg.sizes)
    cores = np.bincount(owner, weights=seg.counts * rec.req[seg.job[owner], c],
                        minlength=len(seg))
    dur = np.clip(np.minimum(seg.t1, t_end) - seg.t0, 0, None)
    return float((dur * cores).sum())


def cooling_series(times: np.ndarray, watts: np.ndarray, setup: CoolingSetup, t0: int,
                   t1: int) -> pd.DataFrame:
    """The step series of IT power, temperature, PUE and cooling power over ``[t0, t1)``,
    split at every change of either input."""
    tt, tv = np.asarray(setup.temp_times, np.int64), np.asarray(setup.temp_values, float)
    edges = np.unique(np.concatenate(([t0], times[(times > t0) & (times < t1)],
                                      tt[(tt > t0) & (tt < t1)])))
    k = np.searchsorted(times, edges, side="right") - 1
    it = np.where(k >= 0, watts[np.maximum(k, 0)], 0.0)
    j = np.searchsorted(tt, edges, side="right") - 1
    temp = tv[np.maximum(j, 0)]
    pue = setup.table.pue_many(it, temp)
    cool = it * (pue - 1.0)
    return pd.DataFrame({"time": edges, "it_power_w": it, "cooling_w": cool,
                         "temperature_c": temp, "pue": pue})


def _integral(series: pd.DataFrame, column: str, t1: int) -> float:
    t = series["time"].to_numpy()
    dt = np.diff(np.r_[t, t1]).astype(np.float64)
    return float((series[column].to_numpy() * dt).sum())


def _figures(rec: Recorder, series: pd.DataFrame, prices: Prices, t0: int, t1: int,
             core_s: float) -> dict[str, object]:
    part = series[series["time"] < t1]
    it_j = _integral(part, "it_power_w", t1)
    cool_j = _integral(part, "cooling_w", t1)
    core_h = core_s / 3600.0
    it_kwh, cool_kwh = it_j / J_PER_KWH, cool_j / J_PER_KWH
    income = prices.core_hour * core_h
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
    t0 = int(wl.submit.min()) if wl.n_jobs else 0
    t1 = max(int(seg.t1.max()) if len(seg) else t0, t0 + 1)
    series = cooling_series(times, watts, setup, t0, t1)
    last_submit = max(int(wl.submit.max()) if wl.n_jobs else t0, t0 + 1)
    run = _figures(rec, series, setup.prices, t0, t1, core_seconds(rec))
    at_sub = _figures(rec, series, setup.prices, t0, last_submit,
                      _core_seconds_until(rec, last_submit))
    summary: dict[str, object] = {
        **run,
        "at_last_submission": at_sub,
        "prices": {"core_hour": setup.prices.core_hour,
                   "energy_kwh": setup.prices.energy_kwh},
        "cooling": setup.table.describe(),
        "it_power_source": source,
        "temperature": {"changes": len(setup.temp_times),
                        "last_change_s": int(setup.temp_times[-1]),
                        "min_c": float(min(setup.temp_values)),
                        "max_c": float(max(setup.temp_values)),
                        **(setup.source or {})},
    }
    return ProfitResult(summary=summary, series=series)
