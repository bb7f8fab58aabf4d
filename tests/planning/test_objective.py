"""Profit of a plan by segments (the CP model's rule) — a hand-computed two-job case."""

from __future__ import annotations

import numpy as np
import pytest

from dispatchlab.dispatchers.offline_plan.planner.objective import ProfitModel, evaluate
from dispatchlab.dispatchers.offline_plan.planner.plan import Plan
from dispatchlab.energy.cooling import PueTable
from dispatchlab.energy.profit import Prices

#: cooling power C = P·(PUE − 1): row 10 °C: 0, 100, 400 W at 0, 1000, 2000 W (slopes 0.1,
#: 0.3); row 15 °C: 0, 300, 800 W (slopes 0.3, 0.5)
TABLE = PueTable("t", (10.0, 15.0), (0.0, 1000.0, 2000.0),
                 ((1.1, 1.1, 1.2), (1.3, 1.3, 1.4)))


def two_jobs() -> Plan:
    return Plan(job_ids=np.array([1, 2]), rows=np.array([0, 1]), starts=np.array([0, 1800]),
                duration=np.array([3600, 3600]), alloc=(((0, 4),), ((1, 8),)),
                cores_per_unit=np.array([1, 1]), total_cores=16,
                power=np.array([500.0, 1000.0]))


def test_two_job_profit_by_hand() -> None:
    # 10 °C until 3600 s, then 16 °C (row 15); window [0, 7200), hourly segments
    pm = ProfitModel(TABLE, (0, 3600), (10.0, 16.0), 0, 7200, Prices(0.1, 0.2), 3600)
    segs = pm.segments()
    assert [(s.start, s.end, s.temperature) for s in segs] == [(0, 3600, 10.0),
                                                               (3600, 7200, 15.0)]
    r = evaluate(two_jobs(), pm)
    # segment 1: mean IT power (500·3600 + 1000·1800)/3600 = 1000 W → C = 100 W → 360 kJ
    # segment 2: 1000·1800/3600 = 500 W at 15 °C → C = 150 W → 540 kJ
    assert r["cooling_kwh"] == pytest.approx(0.9e6 / 3.6e6)
    assert r["it_kwh"] == pytest.approx(1.5)          # 500 W·1 h + 1000 W·1 h
    assert r["core_hours"] == pytest.approx(12.0)     # 4 cores·1 h + 8 cores·1 h
    assert r["profit"] == pytest.approx(0.1 * 12 - 0.2 * (1.5 + 0.25))
    # exact rule (PUE interpolated, then × P): 500 W on [0,1800) (PUE 1.1 → 50 W), 1500 W
    # on [1800,3600) (PUE 1.15 → 225 W), 1000 W on [3600,5400) at 15 °C (1.3 → 300 W)
    assert r["cooling_kwh_exact"] == pytest.approx((50 + 225 + 300) * 1800 / 3.6e6)


def test_window_cuts_jobs_and_convexity() -> None:
    pm = ProfitModel(TABLE, (0,), (12.0,), 0, 2700, Prices(0.1, 0.2), 900)
    r = evaluate(two_jobs(), pm)
    assert r["core_hours"] == pytest.approx((4 * 2700 + 8 * 900) / 3600)
    assert len(pm.segments()) == 3
    assert pm.convex(12.0) and pm.pieces(12.0)[0].tolist() == pytest.approx([0.1, 0.3])


def test_pieces_merge_collinear_and_keep_bounds() -> None:
    # 4 breakpoints, C = 0, 100, 200, 600: the first two pieces are collinear (slope 0.1)
    table = PueTable("m", (10.0,), (0.0, 1000.0, 2000.0, 3000.0), ((1.1, 1.1, 1.1, 1.2),))
    pm = ProfitModel(table, (0,), (10.0,), 0, 3600)
    slopes, inter = pm.pieces(10.0)
    assert slopes.tolist() == pytest.approx([0.1, 0.4])
    assert inter.tolist() == pytest.approx([0.0, -600.0])
    assert pm.piece_bounds(10.0).tolist() == [0.0, 2000.0, 3000.0]
    assert pm.cooling_power(2500.0, 10.0) == pytest.approx(400.0)
