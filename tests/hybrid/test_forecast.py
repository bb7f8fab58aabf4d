"""The next-day forecast replays the last 24 hours' submissions 24 hours later."""

from __future__ import annotations

import numpy as np
import pytest

from dispatchlab.dispatchers.hybrid.forecast import forecast_next_day
from dispatchlab.errors import ConfigError


def test_last_day_shifted_with_observed_durations() -> None:
    submit = [100, 90_000, 100_000, 172_800]
    walltime = [3600, 7200, 600, 60]
    units = [1, 2, 3, 4]
    req = [[1], [2], [1], [1]]
    # at 2 days: the jobs of [1 day, 2 days) are rows 1 and 2; row 1 ended after 1000 s
    f = forecast_next_day(submit, walltime, units, req, 172_800,
                          observed=[50, 1000, -1, -1])
    assert f.rows.tolist() == [1, 2]
    assert f.submit.tolist() == [90_000 + 86_400, 100_000 + 86_400]
    assert f.duration.tolist() == [1000, 600]
    assert f.units.tolist() == [2, 3] and f.req.tolist() == [[2], [1]]
    w = forecast_next_day(submit, walltime, units, req, 172_800,
                          observed=[50, 1000, -1, -1], duration="walltime")
    assert w.duration.tolist() == [7200, 600]


def test_empty_day_and_bad_options() -> None:
    assert len(forecast_next_day([5], [10], [1], [[1]], 10 * 86_400)) == 0
    with pytest.raises(ConfigError, match="duration"):
        forecast_next_day([5], [10], [1], [[1]], 10, duration="magic")
    assert np.array_equal(forecast_next_day([5], [10], [1], [[1]], 10).rows, [0])


def test_the_forecast_carries_each_jobs_power_and_latest_start() -> None:
    f = forecast_next_day([100, 90_000, 100_000], [60, 60, 60], [1, 1, 1], [[1]] * 3,
                          172_800, power=[5.0, 80.5, np.nan], lst=[200, 95_000, 100_000])
    assert f.rows.tolist() == [1, 2]
    assert f.power[0] == 80.5 and np.isnan(f.power[1])
    assert f.lst.tolist() == [95_000 + 86_400, 100_000 + 86_400]
    none = forecast_next_day([5], [10], [1], [[1]], 10)
    assert np.isnan(none.power).all() and none.lst.tolist() == [5 + 86_400]
