"""The planner's objective: profit of a plan over a window (thesis Eq. 6.3/6.4).

``profit = K1 · G − K2 · (W + J)`` over the window ``[start, end)``, or, with a tariff (the
run's ``energy_price`` rows, :mod:`dispatchlab.energy.tariff`), ``K1 · G − Σ_s K2_s · (W_s + J_s)``
with ``K2_s`` the price in force at the start of segment ``s`` (segments are cut at every price
change, so each is priced at one price):

- ``G``: core-hours executed inside the window (each job's overlap with the window × its
  cores);
- ``W``: IT energy inside the window, each job drawing its mean power while it runs;
- ``J``: cooling energy, summed over *segments* of the window — pieces of nearly uniform
  ambient temperature (the temperature stays in one 5 °C row of the PUE table), cut further
  every ``segment_s`` seconds — with the segment's mean IT power ``P_s = W_s / len_s``:
  ``J_s = len_s · C(P_s)`` where ``C(P) = P · (PUE(P, T_s) − 1)`` is the cooling power.

**Rule for C between the table's breakpoints** (shared by this evaluator and the CP model,
so that both give the same number): ``C`` is the piecewise-linear interpolation of the
cooling power at the breakpoints ``p_k · (PUE_k − 1)``; below the first breakpoint
``C(P) = P · (PUE_0 − 1)``. It differs from ``P · (PUE(P) − 1)`` with an interpolated PUE
only by the product of two linear pieces' curvature (for the project's air/hybrid tables,
built from a linear cooling power per piece, the two are identical).

:func:`evaluate` also reports ``profit_exact``: the same prices on the instantaneous IT
power step function with the PUE looked up at every change (the rule of
:func:`dispatchlab.energy.profit.cooling_series`, which every simulated run reports).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import pairwise

import numpy as np

from dispatchlab.arrays import FloatArray, IntArray
from dispatchlab.dispatchers.offline_plan.planner.plan import Plan
from dispatchlab.energy.accounting import J_PER_KWH
from dispatchlab.energy.cooling import PueTable
from dispatchlab.energy.profit import (
    DEFAULT_PRICES,
    CoolingSetup,
    Prices,
    cooling_series,
    tariff_cost,
)
from dispatchlab.energy.tariff import prices_at
from dispatchlab.errors import ConfigError

#: Longest profit window (s) one plan covers (a chunk, ``plan --window``): a year, 8,784
#: hourly segments. The window is cut into segments up front, so 10¹² s never finished.
MAX_WINDOW = 366 * 86400


def check_window(seconds: int, field: str) -> int:
    """``seconds`` when it is a plan window from 1 s to :data:`MAX_WINDOW`; else a
    ConfigError naming ``field``."""
    if not 0 < seconds <= MAX_WINDOW:
        raise ConfigError(f"a plan window is 1 s to 366 days ({MAX_WINDOW:,} s), got "
                          f"{seconds:,}", field=field)
    return seconds


@dataclass(frozen=True)
class Segment:
    """``[start, end)`` seconds at ambient ``temperature`` (its PUE row's °C), its energy
    priced at ``price`` per kWh."""

    start: int
    end: int
    temperature: float
    price: float

    @property
    def length(self) -> int:
        """Seconds."""
        return self.end - self.start


@dataclass(frozen=True, eq=False)
class ProfitModel:
    """What the profit of a plan depends on besides the plan. ``price_times`` /
    ``price_values``: the run's ``energy_price`` steps (price per kWh from ``price_times[k]``
    on; the first price holds before the first time), which replace the constant K2 of
    ``prices`` when given, as in the run's own profit accounting
    (:class:`~dispatchlab.energy.profit.CoolingSetup`)."""

    table: PueTable
    temp_times: tuple[int, ...]
    temp_values: tuple[float, ...]
    start: int
    end: int
    prices: Prices = DEFAULT_PRICES
    segment_s: int = 3600
    price_times: tuple[int, ...] = ()
    price_values: tuple[float, ...] = ()
    _pieces: dict[int, tuple[FloatArray, FloatArray, FloatArray]] = field(
        default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if self.end <= self.start:
            raise ConfigError(f"profit window [{self.start}, {self.end}) is empty",
                              field="window")
        check_window(self.end - self.start, "window")
        if self.segment_s <= 0:
            raise ConfigError("segment_s must be > 0", field="segment_s")
        if not self.temp_times or len(self.temp_times) != len(self.temp_values):
            raise ConfigError("the ambient temperature series is empty", field="temperature")
        if len(self.price_times) != len(self.price_values):
            raise ConfigError("energy price times and values differ in number",
                              field="energy_price")
        if any(b < a for a, b in pairwise(self.price_times)):
            raise ConfigError("energy price times must not decrease", field="energy_price")
        bad = [v for v in self.price_values if not (math.isfinite(v) and v >= 0)]
        if bad:  # (the CP model weighs segments by price / highest price)
            raise ConfigError(f"energy prices must be finite and >= 0 per kWh, got {bad[0]}",
                              field="energy_price")

    @property
    def tariff(self) -> bool:
        """Whether the energy price changes over time (``energy_price`` steps given)."""
        return bool(self.price_times)

    def price_at(self, t: int) -> float:
        """The price of a kWh in force at ``t``."""
        if not self.price_times:
            return self.prices.energy_kwh
        return float(prices_at(np.array([t], np.int64), np.asarray(self.price_times, np.int64),
                               np.asarray(self.price_values, np.float64))[0])

    def top_price(self) -> float:
        """The highest price a segment can have (the CP model's scale)."""
        return max(self.price_values) if self.price_times else self.prices.energy_kwh

    def segments(self, align: int = 1, origin: int = 0) -> list[Segment]:
        """The window cut where the temperature's PUE row changes, where the energy price
        changes and every ``segment_s``; cut points rounded to ``origin + k·align`` (the CP
        model's slot grid)."""
        tt = np.asarray(self.temp_times, np.int64)
        rows = [self.table.row_of(v) for v in self.temp_values]
        cuts = {self.start, self.end}
        for k in range(1, len(tt)):
            if rows[k] != rows[k - 1] and self.start < tt[k] < self.end:
                cuts.add(int(tt[k]))
        cuts.update(t for t in self.price_times if self.start < t < self.end)
        cuts.update(range(self.start + self.segment_s, self.end, self.segment_s))
        if align > 1:
            cuts = {origin + round((c - origin) / align) * align for c in cuts}
            cuts = {min(max(c, self.start), self.end) for c in cuts}
        edges = sorted(cuts)
        out = []
        for a, b in pairwise(edges):
            if b > a:
                k = max(int(np.searchsorted(tt, a, side="right")) - 1, 0)
                out.append(Segment(a, b, self.table.temperatures[rows[k]], self.price_at(a)))
        return out

    def pieces(self, temperature: float) -> tuple[FloatArray, FloatArray]:
        """(slopes, intercepts) of the linear pieces of ``C(P)`` in the temperature's row,
        collinear pieces merged: ``C(P) = slope_k · P + intercept_k`` on piece ``k``."""
        slopes, inter, _ = self._row_pieces(temperature)
        return slopes, inter

    def piece_bounds(self, temperature: float) -> FloatArray:
        """IT power (W) where each piece of :meth:`pieces` starts, then the table's end."""
        return self._row_pieces(temperature)[2]

    def _row_pieces(self, temperature: float) -> tuple[FloatArray, FloatArray, FloatArray]:
        row = self.table.row_of(temperature)
        if row not in self._pieces:
            p = np.asarray(self.table.it_power, float)
            c = p * (np.asarray(self.table.pue[row], float) - 1.0)
            slopes = [float(self.table.pue[row][0]) - 1.0] if p[0] > 0 else []
            inter = [0.0] if p[0] > 0 else []
            starts = [0.0] if p[0] > 0 else []
            for k in range(len(p) - 1):
                m = (c[k + 1] - c[k]) / (p[k + 1] - p[k])
                b = c[k] - m * p[k]
                if slopes and abs(m - slopes[-1]) < 1e-12 and abs(b - inter[-1]) < 1e-6:
                    continue
                slopes.append(m)
                inter.append(b)
                starts.append(0.0 if not starts else float(p[k]))
            starts.append(float(p[-1]))
            self._pieces[row] = (np.array(slopes), np.array(inter), np.array(starts))
        return self._pieces[row]

    def convex(self, temperature: float) -> bool:
        """Whether ``C`` is convex in the row (slopes never decrease)."""
        slopes, _ = self.pieces(temperature)
        return bool((np.diff(slopes) >= -1e-12).all())

    def cooling_power(self, it_power_w: float, temperature: float) -> float:
        """``C(P)`` (W) by the rule of the module doc."""
        if it_power_w > self.table.max_power * (1 + 1e-12):
            raise ConfigError(f"segment IT power {it_power_w:,.0f} W above the PUE table's "
                              f"last breakpoint {self.table.max_power:,.0f} W (scale the "
                              "table to the machine)", field="pue_table")
        p = np.asarray(self.table.it_power, float)
        row = self.table.row_of(temperature)
        c = p * (np.asarray(self.table.pue[row], float) - 1.0)
        if it_power_w <= p[0]:
            return it_power_w * (float(self.table.pue[row][0]) - 1.0)
        return float(np.interp(it_power_w, p, c))


def overlap(starts: IntArray, ends: IntArray, a: int, b: int) -> IntArray:
    """Seconds each ``[start, end)`` spends inside ``[a, b)``."""
    return np.clip(np.minimum(ends, b) - np.maximum(starts, a), 0, None)


def evaluate(plan: Plan, model: ProfitModel) -> dict[str, float]:
    """Profit and its parts (core-hours, IT / cooling kWh, mean PUE) over the window, by
    segments (the CP model's figure, ``profit``) and exactly (``profit_exact``)."""
    starts, ends = plan.starts, plan.ends
    cores = (plan.units * plan.cores_per_unit).astype(np.float64)
    power = plan.power
    in_window = overlap(starts, ends, model.start, model.end).astype(np.float64)
    core_h = float((in_window * cores).sum()) / 3600.0
    it_j = float((in_window * power).sum())
    cool_j = priced_j = 0.0
    for seg in model.segments():
        w_s = float((overlap(starts, ends, seg.start, seg.end) * power).sum())
        c_s = seg.length * model.cooling_power(w_s / seg.length, seg.temperature)
        cool_j += c_s
        priced_j += seg.price * (w_s + c_s)
    prices = model.prices
    income = prices.core_hour * core_h
    cost = (priced_j if model.tariff else prices.energy_kwh * (it_j + cool_j)) / J_PER_KWH
    exact_cool, exact_cost = _exact_cooling(plan, model)
    return {
        "profit": income - cost,
        "core_hours": core_h,
        "it_kwh": it_j / J_PER_KWH,
        "cooling_kwh": cool_j / J_PER_KWH,
        "mean_pue": (it_j + cool_j) / it_j if it_j > 0 else 1.0,
        "income": income,
        "energy_cost": cost,
        "profit_exact": income - (exact_cost if model.tariff
                                  else prices.energy_kwh * (it_j + exact_cool) / J_PER_KWH),
        "cooling_kwh_exact": exact_cool / J_PER_KWH,
    }


def _exact_cooling(plan: Plan, model: ProfitModel) -> tuple[float, float]:
    """Cooling energy (J) on the instantaneous IT power step function, PUE looked up at
    every change (:func:`dispatchlab.energy.profit.cooling_series`), and under a tariff the
    energy cost (IT + cooling) at each moment's price (0 without one)."""
    t = np.concatenate((plan.starts, plan.ends))
    d = np.concatenate((plan.power, -plan.power))
    order = np.argsort(t, kind="stable")
    t, level = t[order], np.cumsum(d[order])
    last = np.r_[t[1:] != t[:-1], True] if len(t) else np.zeros(0, bool)
    times, watts = t[last], np.clip(level[last], 0.0, None)
    setup = CoolingSetup(model.table, model.temp_times, model.temp_values, model.prices,
                         price_times=model.price_times, price_values=model.price_values)
    series = cooling_series(times, watts, setup, model.start, model.end)
    dt = np.diff(np.r_[series["time"].to_numpy(), model.end]).astype(np.float64)
    cool_j = float((series["cooling_w"].to_numpy() * dt).sum())
    return cool_j, tariff_cost(series, model.end) if model.tariff else 0.0


class IncrementalProfit:
    """The segment profit of a plan kept as per-segment sums, so moving one job costs
    O(segments) instead of a full :func:`evaluate` (Delay-Search's inner loop).

    Same figures as ``evaluate(...)["profit"]`` up to float rounding (tested)."""

    def __init__(self, model: ProfitModel, starts: IntArray, ends: IntArray,
                 cores: FloatArray, power: FloatArray):
        self.model = model
        segs = model.segments()
        self.a = np.array([s.start for s in segs], dtype=np.int64)
        self.b = np.array([s.end for s in segs], dtype=np.int64)
        self.temps = [s.temperature for s in segs]
        self.prices = np.array([s.price for s in segs])
        self.cores = cores
        self.power = power
        self.w = np.zeros(len(segs))          # J of IT energy per segment
        self.core_s = 0.0                     # core-seconds inside the window
        for j in range(len(starts)):
            self.add(j, int(starts[j]), int(ends[j]), 1.0)

    def _overlaps(self, s: int, e: int) -> FloatArray:
        return np.clip(np.minimum(e, self.b) - np.maximum(s, self.a), 0, None).astype(float)

    def add(self, j: int, s: int, e: int, sign: float) -> None:
        """Add (``sign`` 1) or remove (−1) job ``j`` running over ``[s, e)``."""
        ov = self._overlaps(s, e)
        self.w += sign * ov * self.power[j]
        self.core_s += sign * float(ov.sum()) * self.cores[j]

    def profit(self) -> float:
        """Profit of the current state."""
        m = self.model
        length = (self.b - self.a).astype(float)
        cool = [float(length[k]) * m.cooling_power(max(self.w[k], 0.0) / length[k], self.temps[k])
                for k in range(len(length))]
        income = m.prices.core_hour * self.core_s / 3600.0
        if m.tariff:
            return income - float((self.prices * (self.w + np.array(cool))).sum()) / J_PER_KWH
        return income - m.prices.energy_kwh * (float(self.w.sum()) + sum(cool)) / J_PER_KWH
