"""Daily features of a schedule by hand; the tree finds a planted threshold."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dispatchlab.dispatchers.hybrid.decision_tree import (
    MAXIMIZE,
    OPTIMIZE,
    Schedule,
    daily_features,
    fit_tree,
)
from dispatchlab.energy.cooling import PueTable
from dispatchlab.energy.profit import Prices
from dispatchlab.errors import ConfigError

# PUE 1.1 up to 1000 W, then up to 1.5 at 2000 W: slope change at 1000 W
TABLE = PueTable(name="t", temperatures=(10.0,), it_power=(0.0, 1000.0, 2000.0),
                 pue=((1.1, 1.1, 1.5),))


def test_two_days_by_hand() -> None:
    # day 0: 10 cores × 12 h at 1500 W; day 1: 10 cores × 24 h at 1200 W
    sched = Schedule(start=np.array([0, 86_400]), end=np.array([43_200, 172_800]),
                     cores=np.array([10.0, 10.0]), power=np.array([1500.0, 1200.0]),
                     total_cores=10)
    df = daily_features(sched, ([0], [12.0]), TABLE, Prices(0.1, 0.2), 0, 2, hybrid=True)
    d0, d1 = df.iloc[0], df.iloc[1]
    assert d0["utilization"] == pytest.approx(0.5)
    assert d0["it_power_w"] == pytest.approx(750)
    assert d0["it_kwh"] == pytest.approx(18.0)
    assert d0["cooling_kwh"] == pytest.approx(18.0 * 0.3)      # PUE(1500 W) = 1.3
    assert d0["pue"] == pytest.approx(1.3)
    assert d0["profit"] == pytest.approx(0.1 * 120 - 0.2 * 23.4)
    assert d0["label"] == OPTIMIZE and d1["label"] == MAXIMIZE  # 750 / 1200 W vs 1000 W
    assert np.isnan(d0["prev_utilization"]) and d1["prev_utilization"] == pytest.approx(0.5)
    assert d1["cooling_kwh"] == pytest.approx(28.8 * 0.18)     # PUE(1200 W) = 1.18


def test_temperature_must_cover_the_days() -> None:
    sched = Schedule(np.array([0]), np.array([10]), np.array([1.0]), np.array([1.0]), 1)
    with pytest.raises(ConfigError, match="temperature"):
        daily_features(sched, ([100], [12.0]), TABLE, Prices(0.1, 0.2), 0, 1, hybrid=False)


def test_the_tree_recovers_a_planted_threshold() -> None:
    rng = np.random.default_rng(0)
    u = rng.uniform(0.3, 1.0, 200)
    hybrid = rng.integers(0, 2, 200)
    # hybrid cooling: maximize above 0.85; air: never (thesis §6.8.3's shape)
    label = np.where((hybrid == 1) & (u > 0.85), MAXIMIZE, OPTIMIZE)
    rows = pd.DataFrame({"prev_utilization": u, "hybrid_cooling": hybrid,
                         "temperature": rng.uniform(0, 30, 200), "label": label})
    res = fit_tree(rows, seed=1)
    assert res.n_items == 200 and res.accuracy > 0.95
    assert any(abs(t - 0.85) < 0.02 for t in res.thresholds)
    assert "prev_utilization" in res.text
