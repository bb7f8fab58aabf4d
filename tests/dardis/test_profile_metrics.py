"""Over-utilization, dissimilarity and lateness against a desired profile."""

from __future__ import annotations

import numpy as np
import pytest

from dispatchlab.metrics.profile_metrics import aligned, dissimilarity, lateness, over_utilization


def test_dissimilarity_of_identical_and_scaled_profiles_is_zero() -> None:
    g = np.array([2.0, 4.0, 4.0, 1.0])
    assert dissimilarity(g, g) == pytest.approx(0.0)
    assert dissimilarity(3 * g, g) == pytest.approx(0.0)  # ψ = 1/3
    assert dissimilarity(0.25 * g, g) == pytest.approx(0.0)  # ψ = 4


def test_dissimilarity_by_hand() -> None:
    # g = [1, 1], f = [1, 0]: ψ = 1, R_gg = 2, R_gf = 1 → 0.5
    assert dissimilarity(np.array([1.0, 0.0]), np.array([1.0, 1.0])) == pytest.approx(0.5)
    # g = [2, 1], f = [1, 1]: ψ = min(2, 1) = 1, R_gg = 5, R_gf = 3 → 0.4
    assert dissimilarity(np.array([1.0, 1.0]), np.array([2.0, 1.0])) == pytest.approx(0.4)
    # lengths weigh: the same with the second piece 3 s long: R_gg = 7, R_gf = 5
    d = dissimilarity(np.array([1.0, 1.0]), np.array([2.0, 1.0]), np.array([1.0, 3.0]))
    assert d == pytest.approx(2 / 7)


def test_over_utilization_on_merged_steps() -> None:
    # used: 6 from 0, 2 from 50; desired 0.5·8 = 4 from 0, 8 from 30; horizon [0, 100)
    f, g, dt = aligned(np.array([0, 50]), np.array([6.0, 2.0]), np.array([0, 30]),
                       np.array([4.0, 8.0]), 0, 100)
    assert dt.tolist() == [30, 20, 50]
    assert over_utilization(f, g, dt) == pytest.approx(2 * 30)


def test_lateness_against_latest_start() -> None:
    start = np.array([10, 50, 7, 99])
    lst = np.array([20, 40, 7, 0])
    ran = np.array([True, True, True, False])
    assert lateness(start, lst, ran) == (1, 10.0)


def test_price_curve_becomes_a_desired_profile(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from dispatchlab.engine.scenario_gen import resolve_scenario
    from dispatchlab.errors import ConfigError

    f = tmp_path / "price.csv"
    f.write_text("time,value\n0,40\n3600,100\n7200,70\n")
    scen = resolve_scenario(f"gen:curve:file={f},low=0.5,high=1,invert=1")
    assert scen is not None
    times, values = scen.steps("desired_utilization")
    assert times.tolist() == [0, 3600, 7200]
    assert values.tolist() == pytest.approx([1.0, 0.5, 0.75])
    f.write_text("time,value\n0,40\n1.5,100\n")
    with pytest.raises(ConfigError, match="line 3"):
        resolve_scenario(f"gen:curve:file={f}")


def test_profile_summary_horizons() -> None:
    from dispatchlab.metrics.profile_metrics import profile_summary

    # desired 0.5 of 10 cores throughout; use 5 until 100 (the last deadline), then 10 on
    # to 200: the same shape up to the deadline, twice the desire after it
    out = profile_summary(np.array([0, 100, 200]), np.array([5.0, 10.0, 0.0]),
                          np.array([0]), np.array([0.5]), 10.0, 0, 200,
                          np.array([0, 100]), np.array([100, 100]), np.array([True, True]))
    assert out["dissimilarity"] == pytest.approx(0.0)
    # to the last end: ψ = 0.5, R_gg = 25·200, R_gf = 5·(2.5·100 + 5·100) → 0.25
    assert out["dissimilarity_to_last_end"] == pytest.approx(0.25)
    assert out["over_utilization"] == pytest.approx(5 * 100)
    assert (out["deadline_horizon_s"], out["horizon_s"]) == (100, 200)
