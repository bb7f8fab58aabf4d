"""Electricity prices that change over time: the scenario's ``energy_price`` rows.

A scenario row ``(time, "energy_price", value)`` sets the price of a kWh (any currency,
the same as the profit model's prices) from ``time`` on; the first price holds before
the first row and the last after the last, as for the ambient temperature. Prices are
announced (dispatchers see their whole future through ``view.scenario``), change nothing
in the machine, and are used by the accounting: a run whose platform has a node power
model gets ``energy.cost`` (the IT energy priced at each moment's tariff), and a run with
a cooling model gets its profit's energy cost priced the same way (IT + cooling).
A day-night tariff: ``gen:day-night:what=energy_price,day=0.20,night=0.11,days=30``.
"""

from __future__ import annotations

import numpy as np

from dispatchlab.arrays import FloatArray, IntArray
from dispatchlab.energy.accounting import J_PER_KWH, Energy
from dispatchlab.engine.scenario import Scenario

#: The scenario kind this module reads.
KIND = "energy_price"


def price_steps(scenario: object) -> tuple[IntArray, FloatArray]:
    """(times, price per kWh) of a scenario's ``energy_price`` rows (empty if none)."""
    if not isinstance(scenario, Scenario) or KIND not in scenario.kinds():
        return np.zeros(0, np.int64), np.zeros(0)
    t, v = scenario.steps(KIND)
    return np.asarray(t, np.int64), np.asarray(v, np.float64)


def prices_at(times: IntArray, price_times: IntArray, price_values: FloatArray) -> FloatArray:
    """The price in force at each of ``times`` (the first price before the first row)."""
    k = np.searchsorted(price_times, times, side="right") - 1
    return price_values[np.maximum(k, 0)]


def priced_energy(times: IntArray, watts: FloatArray, t1: int, price_times: IntArray,
                  price_values: FloatArray) -> tuple[float, float]:
    """(kWh, cost) of the power step series ``watts`` (W from ``times[k]`` on) up to
    ``t1``, each stretch priced at the tariff in force, split at every price change."""
    t0 = int(times[0]) if len(times) else t1
    inner = price_times[(price_times > t0) & (price_times < t1)]
    edges = np.unique(np.concatenate((times[times < t1], inner)))
    if not len(edges):
        return 0.0, 0.0
    k = np.searchsorted(times, edges, side="right") - 1
    power = np.where(k >= 0, watts[np.maximum(k, 0)], 0.0)
    dt = np.diff(np.r_[edges, t1]).astype(np.float64)
    kwh = power * dt / J_PER_KWH
    price = prices_at(edges, price_times, price_values)
    return float(kwh.sum()), float((kwh * price).sum())


def tariff_summary(price_times: IntArray, price_values: FloatArray, kwh: float,
                   cost: float) -> dict[str, object]:
    """What the run's tariff was and what it cost, for a run summary."""
    return {"changes": len(price_times), "min_per_kwh": float(price_values.min()),
            "max_per_kwh": float(price_values.max()),
            "mean_per_kwh_paid": cost / kwh if kwh > 0 else float(price_values[0])}


def energy_entry(energy: Energy, scenario: object) -> dict[str, object]:
    """The ``energy`` entry of a run summary; with ``energy_price`` rows in the scenario
    also ``cost`` (the IT energy at each moment's price) and the ``tariff`` figures."""
    out = energy.summary()
    pt, pv = price_steps(scenario)
    if len(pt):
        kwh, cost = priced_energy(energy.times, energy.power, energy.t1, pt, pv)
        out["cost"] = cost
        out["tariff"] = tariff_summary(pt, pv, kwh, cost)
    return out
