"""Alg. 8 (thesis §7.4) by hand."""

from __future__ import annotations

import numpy as np
import pytest

from dispatchlab.dispatchers.hybrid.profile_extraction import (
    extract_profile,
    hourly,
    profile_changes,
    profile_scenario,
)
from dispatchlab.errors import ConfigError


def test_a_busy_previous_day_asks_for_the_whole_machine() -> None:
    assert extract_profile(np.full(24, 0.9)).tolist() == [1.0] * 24
    assert extract_profile(np.r_[np.full(12, 0.7), np.full(12, 0.99)]).tolist() == [1.0] * 24


def test_below_the_threshold_the_average_plus_the_offset() -> None:
    # 0.5 + (1 − 0.5) · 0.1 every hour; with offset 0.3: 0.5 + 0.15
    assert extract_profile(np.full(24, 0.5)) == pytest.approx(np.full(24, 0.55))
    assert extract_profile(np.full(24, 0.5), offset_perc=0.3) == pytest.approx(
        np.full(24, 0.65))


def test_exactly_at_the_threshold_is_not_above_it() -> None:
    out = extract_profile(np.full(24, 0.84))
    assert out == pytest.approx(np.full(24, 0.84 + 0.16 * 0.1))


def test_the_window_slides_into_the_planned_day() -> None:
    # previous day 0.8, plan 1.0: a(h) = (0.8 (24 − h) + h) / 24 exceeds 0.84 from h = 5
    out = extract_profile(np.full(24, 0.8), np.ones(24))
    assert out[0] == pytest.approx(0.8 + 0.2 * 0.1)
    a4 = (0.8 * 20 + 4) / 24
    assert out[4] == pytest.approx(a4 + (1 - a4) * 0.1)
    assert out[5:].tolist() == [1.0] * 19


def test_bad_input_is_named() -> None:
    with pytest.raises(ConfigError, match="previous needs 24"):
        extract_profile(np.ones(23))
    with pytest.raises(ConfigError, match="fractions"):
        extract_profile(np.full(24, 1.5))


def test_hourly_means_of_a_step_function() -> None:
    # 0 until 1800, 1 until 5400, 0.5 after: hour 0 → 0.5, hour 1 → 0.5·1 + 0.5·0.5
    out = hourly([1800, 5400], [1.0, 0.5], start=0, hours=3)
    assert out.tolist() == pytest.approx([0.5, 0.75, 0.5])


def test_scenario_rows_only_where_the_share_changes() -> None:
    rows = profile_changes(86_400, [0.5] * 10 + [1.0] * 14)
    assert [(r.time, r.value) for r in rows] == [(86_400, 0.5), (86_400 + 36_000, 1.0)]
    sc = profile_scenario({0: [1.0] * 24, 86_400: [0.5] * 24})
    t, v = sc.steps("desired_utilization", "")
    assert t.tolist() == [0, 86_400] and v.tolist() == [1.0, 0.5]
