"""Ambient temperature over time: seeded summer / winter day profiles, and step series.

Shape of a day (``season_profile``): the classic two-half-cosine diurnal cycle — the
temperature rises from the day's minimum at ``min_hour`` (05:00, about sunrise) to its
maximum at ``max_hour`` (15:00, mid-afternoon) along a half cosine, then falls along another
half cosine to the next day's minimum (as in the diurnal models of Parton & Logan, 1981,
without their exponential night decay). Each day's minimum and maximum are the season's
figures plus seeded normal noise (``sd`` °C), so days differ and a seed reproduces them; the
profiles of one seed share their first days whatever ``days`` is (a 30-day summer is the
start of the 120-day one), so planners and accounting that ask different lengths agree.

Season figures (``SEASONS``) are our choice, round values typical of the climate of Bologna
(the Cineca site whose cooling data [99] the thesis uses): summer days from about 20 °C at
night to 31 °C in the afternoon, winter days from about −1 °C to 7 °C. They are parameters:
``tmin`` / ``tmax`` override them.

Time 0 is midnight of the first day; the series is a step function (a value every ``step``
seconds, default 900 s), as the scenario timeline and the cooling accounting expect.
"""

from __future__ import annotations

import math

import numpy as np

#: Season -> (mean daily minimum °C, mean daily maximum °C).
SEASONS: dict[str, tuple[float, float]] = {"summer": (20.0, 31.0), "winter": (-1.0, 7.0)}


def season_profile(season: str = "summer", days: int = 30, step: int = 900, seed: int = 0,
                   sd: float = 1.5, tmin: float | None = None, tmax: float | None = None,
                   min_hour: float = 5.0, max_hour: float = 15.0
                   ) -> tuple[np.ndarray, np.ndarray]:
    """(times s, temperatures °C): the value at ``times[k]`` holds until ``times[k+1]``."""
    if season not in SEASONS:
        raise ValueError(f"temperature: season must be one of {', '.join(SEASONS)}, "
                         f"got '{season}'")
    if days < 1 or step < 1 or sd < 0 or not 0 <= min_hour < max_hour < 24:
        raise ValueError("temperature: need days ≥ 1, step ≥ 1 s, sd ≥ 0 and "
                         "0 ≤ min_hour < max_hour < 24")
    lo, hi = SEASONS[season]
    lo = lo if tmin is None else tmin
    hi = hi if tmax is None else tmax
    if hi < lo:
        raise ValueError(f"temperature: tmax {hi} below tmin {lo}")
    rng = np.random.default_rng(seed)
    # day k's (minimum, maximum) noise is row k of one draw, so a longer profile of the same
    # seed starts with the same days (the day after the last gives the last night's minimum)
    noise = sd * rng.standard_normal((days + 1, 2))
    mins = lo + noise[:, 0]
    maxs = np.maximum(hi + noise[:days, 1], mins[:-1])
    times = np.arange(0, days * 86400, step, dtype=np.int64)
    hour = (times % 86400) / 3600.0
    day = times // 86400
    rise = (hour >= min_hour) & (hour < max_hour)
    out = np.empty(len(times))
    # rising: today's min -> today's max
    f = (hour[rise] - min_hour) / (max_hour - min_hour)
    out[rise] = mins[day[rise]] + (maxs[day[rise]] - mins[day[rise]]) * (
        1 - np.cos(math.pi * f)) / 2
    # falling after max_hour: today's max -> tomorrow's min
    late = hour >= max_hour
    f = (hour[late] - max_hour) / (24 - max_hour + min_hour)
    out[late] = maxs[day[late]] + (mins[day[late] + 1] - maxs[day[late]]) * (
        1 - np.cos(math.pi * f)) / 2
    # before min_hour: yesterday's max -> today's min (the first night starts at the min)
    early = hour < min_hour
    d = day[early]
    f = (hour[early] + 24 - max_hour) / (24 - max_hour + min_hour)
    prev_max = np.where(d > 0, maxs[np.maximum(d - 1, 0)], mins[d])
    out[early] = prev_max + (mins[d] - prev_max) * (1 - np.cos(math.pi * f)) / 2
    return times, np.round(out, 2)


def temperature_steps(scenario: object) -> tuple[np.ndarray, np.ndarray]:
    """(times, °C) of a scenario's ``temperature`` rows (empty arrays if none)."""
    from dispatchlab.engine.scenario import Scenario

    if not isinstance(scenario, Scenario) or "temperature" not in scenario.kinds():
        return np.zeros(0, np.int64), np.zeros(0)
    t, v = scenario.steps("temperature")
    return np.asarray(t, np.int64), np.asarray(v, np.float64)
