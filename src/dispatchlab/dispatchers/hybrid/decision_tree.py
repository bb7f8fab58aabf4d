"""When raising utilization stops paying: the decision tree of thesis §6.8.3.

The thesis labels each day of its near-optimal plans by the zone the plan chose:
**maximize the utilization** when the day's IT load went past the PUE table's *slope
change* (where chillers start) at that day's temperature, **optimize the cooling** when
it stayed below; a classification tree on the cooling type and the previous day's
average utilization then predicts the zone (96.28 % accuracy on 538 days; for hybrid
cooling, "maximize" above 84.82 %).

Here a *schedule* is any list of jobs with start, end, cores and power (an offline plan,
or the jobs table of a simulated run). :func:`daily_features` cuts it into days on a
fine grid: utilization, mean IT power (the jobs' power, no idle power, as the thesis's
model), temperature, energy-weighted PUE, profit (``K1`` · core-hours − ``K2`` · (IT +
cooling) kWh) and the zone label. :func:`fit_tree` trains scikit-learn's
``DecisionTreeClassifier`` with stratified cross-validation and reports the learned
utilization threshold(s).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.tree import DecisionTreeClassifier, export_text

from dispatchlab.arrays import FloatArray
from dispatchlab.energy.cooling import PueTable
from dispatchlab.energy.profit import Prices
from dispatchlab.errors import ConfigError

DAY = 86_400
MAXIMIZE, OPTIMIZE = "maximize-utilization", "optimize-cooling"
#: Features of the thesis's tree (cooling type, previous day's utilization) plus the day's
#: mean temperature, which the thesis's scenarios fix per season.
FEATURES = ("prev_utilization", "hybrid_cooling", "temperature")


def step_sample(times: npt.ArrayLike, values: npt.ArrayLike, at: npt.ArrayLike,
                before: float = 0.0) -> FloatArray:
    """Value of the step function (``values[i]`` from ``times[i]`` on) at ``at``."""
    t = np.asarray(times, dtype=np.int64)
    v = np.asarray(values, dtype=np.float64)
    idx = np.searchsorted(t, np.asarray(at), side="right") - 1
    return np.where(idx >= 0, v[np.maximum(idx, 0)] if len(v) else before, before)


def busy_series(starts: npt.ArrayLike, ends: npt.ArrayLike, amounts: npt.ArrayLike
                ) -> tuple[npt.NDArray[np.int64], FloatArray]:
    """Step function of the sum of ``amounts`` over the jobs' ``[start, end)``."""
    s = np.asarray(starts, dtype=np.int64)
    e = np.asarray(ends, dtype=np.int64)
    a = np.asarray(amounts, dtype=np.float64)
    t = np.concatenate([s, e])
    d = np.concatenate([a, -a])
    order = np.argsort(t, kind="stable")
    t, d = t[order], np.cumsum(d[order])
    last = np.r_[t[1:] != t[:-1], True] if len(t) else np.zeros(0, bool)
    return t[last], d[last]


@dataclass(frozen=True)
class Schedule:
    """Jobs of a plan or a run: start, end (s), cores and power (W, whole job)."""

    start: npt.NDArray[np.int64]
    end: npt.NDArray[np.int64]
    cores: FloatArray
    power: FloatArray
    total_cores: int


def daily_features(sched: Schedule, temperature: tuple[npt.ArrayLike, npt.ArrayLike],
                   table: PueTable, prices: Prices, day0: int, n_days: int, *,
                   hybrid: bool, dt: int = 60) -> pd.DataFrame:
    """One row per day: utilization, IT power, temperature, PUE, profit, zone label, and
    the previous day's utilization (NaN on the first day)."""
    if n_days <= 0 or dt <= 0 or DAY % dt:
        raise ConfigError("daily features: n_days > 0 and dt dividing a day", field="dt")
    grid = day0 + dt * np.arange(n_days * DAY // dt, dtype=np.int64) + dt // 2
    ct, cv = busy_series(sched.start, sched.end, sched.cores)
    pt, pv = busy_series(sched.start, sched.end, sched.power)
    util = step_sample(ct, cv, grid) / float(sched.total_cores)
    it_w = np.maximum(step_sample(pt, pv, grid), 0.0)
    temp = step_sample(*temperature, grid, before=np.nan)
    if np.isnan(temp).any():
        raise ConfigError("daily features: the temperature series starts after the first "
                          "day", field="temperature")
    pue = table.pue_many(np.minimum(it_w, table.max_power), temp)
    per = DAY // dt
    shape = (n_days, per)
    util_d, it_d, temp_d = (a.reshape(shape).mean(axis=1) for a in (util, it_w, temp))
    it_kwh = it_w.reshape(shape).sum(axis=1) * dt / 3.6e6
    cool_kwh = (it_w * (pue - 1.0)).reshape(shape).sum(axis=1) * dt / 3.6e6
    core_h = util_d * sched.total_cores * 24.0
    slope = np.array([table.slope_change(float(t))[0] for t in temp_d])
    with np.errstate(invalid="ignore", divide="ignore"):
        pue_d = np.where(it_kwh > 0, 1.0 + cool_kwh / it_kwh, np.nan)
    out = pd.DataFrame({
        "day": np.arange(n_days), "utilization": util_d, "it_power_w": it_d,
        "temperature": temp_d, "pue": pue_d, "it_kwh": it_kwh, "cooling_kwh": cool_kwh,
        "core_hours": core_h,
        "profit": prices.core_hour * core_h - prices.energy_kwh * (it_kwh + cool_kwh),
        "slope_change_w": slope, "hybrid_cooling": int(hybrid),
        "label": np.where(it_d > slope, MAXIMIZE, OPTIMIZE)})
    out["prev_utilization"] = out["utilization"].shift(1)
    return out


@dataclass(frozen=True)
class TreeResult:
    """A fitted tree, its cross-validated accuracy and its utilization thresholds."""

    tree: DecisionTreeClassifier
    accuracy: float
    accuracy_std: float
    n_items: int
    thresholds: tuple[float, ...]
    text: str


def fit_tree(rows: pd.DataFrame, *, max_depth: int = 2, folds: int = 5, seed: int = 0
             ) -> TreeResult:
    """Fit the zone classifier on rows with :data:`FEATURES` and ``label`` (rows without
    a previous day dropped); accuracy by stratified ``folds``-fold cross-validation."""
    data = rows.dropna(subset=list(FEATURES))
    if data.empty:
        raise ConfigError("decision tree: no day with a previous day to learn from",
                          field="rows")
    x = data[list(FEATURES)].to_numpy(dtype=np.float64)
    y = data["label"].to_numpy()
    tree = DecisionTreeClassifier(max_depth=max_depth, random_state=seed)
    counts = pd.Series(y).value_counts()
    k = int(min(folds, counts.min())) if len(counts) > 1 else 0
    if k >= 2:
        cv = StratifiedKFold(n_splits=k, shuffle=True, random_state=seed)
        scores = cross_val_score(tree, x, y, cv=cv)
        acc, std = float(scores.mean()), float(scores.std())
    else:  # one class (or too few of one): the training accuracy is all there is
        acc, std = float("nan"), float("nan")
    tree.fit(x, y)
    feat = tree.tree_.feature
    thr = tree.tree_.threshold
    col = FEATURES.index("prev_utilization")
    found = tuple(sorted(float(t) for f, t in zip(feat, thr, strict=True) if f == col))
    return TreeResult(tree, acc, std, len(data), found,
                      export_text(tree, feature_names=list(FEATURES)))
