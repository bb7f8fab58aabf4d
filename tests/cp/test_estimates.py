"""The heuristic duration predictor, accuracy metrics, and determinism of CP runs."""

from __future__ import annotations

import pytest

from dispatchlab.dispatchers.cp import CPConfig, CPDispatcher, make_estimator
from dispatchlab.errors import ConfigError
from dispatchlab.estimates.accuracy import TrackedEstimator, prediction_accuracy
from dispatchlab.estimates.heuristic import HeuristicEstimate
from dispatchlab.simulation import simulate
from dispatchlab.workload.workload import Workload
from tests.cp.helpers import platform, random_workload
from tests.views import RNG, known_view


def history() -> Workload:
    """User a runs x three times, then y; user b once; one job of an unknown user."""
    return Workload.from_columns(
        submit=[0, 1, 2, 3, 4, 5, 6], runtime=[100, 200, 600, 50, 70, 10, 10],
        walltime=[1000, 1000, 1000, 1000, 1000, 300, 1000], units=[1] * 7,
        req={"cores": [1] * 7}, user=["a", "a", "a", "a", "b", "a", "b"],
        app=["x", "x", "x", "y", "x", "x", "z"])


def test_heuristic_uses_user_and_executable_history() -> None:
    est = HeuristicEstimate()
    est.reset(known_view(history()), RNG)
    assert est.estimate(0) == 1000  # no history: the wall-time
    est.observe(0, 100)
    est.observe(1, 200)
    assert est.estimate(2) == 150  # mean of the last two of (a, x)
    est.observe(2, 600)
    assert est.estimate(3) == 400  # (a, y) unknown: the user's last two, 200 and 600
    assert est.estimate(5) == 300  # (a, x) says 400, capped by the wall-time 300
    assert est.estimate(4) == 1000  # user b has no history yet
    est.observe(4, 70)
    assert est.estimate(6) == 70  # user-level history of b
    assert est.estimate(3) == 400  # a prediction is fixed when first made


def test_heuristic_request_key_ignores_users() -> None:
    """Hidden users (one name for all): the request key keeps jobs of different queues,
    wall-times and requests apart, where the user key mixes them."""
    wl = Workload.from_columns(
        submit=[0, 1, 2, 3, 4, 5], runtime=[100, 900, 300, 50, 10, 10],
        walltime=[1000, 1000, 1000, 1000, 1000, 2000], units=[1, 2, 1, 1, 1, 1],
        req={"cores": [1, 1, 1, 1, 1, 1]}, user=["yyy"] * 6, app=["xxx"] * 6,
        queue=["debug", "debug", "debug", "parallel", "debug", "debug"])
    est = HeuristicEstimate(key="request")
    assert est.name == "heuristic-request"
    assert est.describe() == {"name": "heuristic-request", "history": 2, "key": "request"}
    est.reset(known_view(wl), RNG)
    est.observe(0, 100)
    est.observe(1, 900)  # same queue and wall-time, 2 units: another exact key
    est.observe(2, 300)
    assert est.estimate(4) == 200  # (debug, 1000, 1 unit): mean of 100 and 300
    assert est.estimate(3) == 1000  # parallel: no history
    assert est.estimate(5) == 2000  # another wall-time: no history
    user = HeuristicEstimate()
    user.reset(known_view(wl), RNG)
    for j, r in ((0, 100), (1, 900), (2, 300)):
        user.observe(j, r)
    assert user.estimate(4) == 600  # the last two of anyone: 900 and 300


def test_heuristic_rejects_bad_history() -> None:
    with pytest.raises(ConfigError):
        HeuristicEstimate(history=0)
    with pytest.raises(ConfigError, match="key"):
        HeuristicEstimate(key="group")


def test_accuracy_metrics() -> None:
    acc = prediction_accuracy([100, 100, 100, 100], [50, 100, 200, 110])
    assert acc["mae_s"] == pytest.approx((50 + 0 + 100 + 10) / 4)
    assert acc["under_rate"] == 0.25
    assert acc["over_rate"] == 0.5
    assert acc["exact_rate"] == 0.25
    assert acc["within_25pct"] == 0.5  # ratios 2, 1, 0.5, 0.909


def test_tracked_estimator_records_first_prediction() -> None:
    tracked = TrackedEstimator(HeuristicEstimate())
    tracked.reset(known_view(history()), RNG)
    assert tracked.estimate(0) == 1000
    tracked.observe(0, 100)
    rep = tracked.report()
    assert rep["jobs"] == 1 and rep["mae_s"] == 900 and rep["over_rate"] == 1.0


def test_make_estimator_names() -> None:
    assert make_estimator("real").name == "real"
    assert make_estimator("heuristic").name == "heuristic"
    assert make_estimator("heuristic-request").name == "heuristic-request"
    with pytest.raises(ConfigError):
        make_estimator("magic")


def test_cp_run_reports_predictor_accuracy() -> None:
    wl = random_workload(30, seed=11)
    plat = platform([[16, 2, 0, 8192]] * 4)
    real = simulate(wl, plat, CPDispatcher(CPConfig(kind="hcp", version=3), estimator="real"))
    acc = real.summary["dispatcher_stats"]["predictor"]
    assert acc["name"] == "real" and acc["jobs"] == 30
    assert acc["under_rate"] == 0.0 and acc["mae_s"] == 0.0
    wall = simulate(wl, plat, CPDispatcher(CPConfig(kind="hcp", version=3)))
    acc_w = wall.summary["dispatcher_stats"]["predictor"]
    assert acc_w["under_rate"] == 0.0 and acc_w["over_rate"] > 0.5


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["hcp", "pcp"])
def test_same_seed_same_results(kind: str) -> None:
    """Deterministic mode (the default): identical decisions on repeated runs."""
    wl = random_workload(60, seed=7)
    plat = platform([[16, 2, 0, 8192]] * 2 + [[16, 0, 0, 8192]] * 2)
    runs = [simulate(wl, plat, CPDispatcher(CPConfig(kind=kind, version=3),
                                            estimator="heuristic"), seed=1)
            for _ in range(2)]
    assert runs[0].summary["dispatcher_stats"]["solver_calls"] > 0
    assert runs[0].jobs["start"].tolist() == runs[1].jobs["start"].tolist()
    log0 = runs[0].summary["dispatcher_stats"]["decision_log"]
    log1 = runs[1].summary["dispatcher_stats"]["decision_log"]
    assert log0["objective"] == log1["objective"]
