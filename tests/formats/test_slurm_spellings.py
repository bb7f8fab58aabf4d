"""Slurm's time, duration and limit spellings, one value and a column at a time."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dispatchlab.workload.slurm_spellings import (
    SpellingError,
    duration_column,
    limit_column,
    parse_duration,
    parse_limit,
    parse_limit_minutes,
    parse_time,
    time_column,
)


def slurm_duration(seconds: int) -> str:
    """How Slurm prints a duration (secs2time_str): [days-]hh:mm:ss."""
    days, rest = divmod(seconds, 86400)
    h, rest = divmod(rest, 3600)
    m, s = divmod(rest, 60)
    body = f"{h:02d}:{m:02d}:{s:02d}"
    return f"{days}-{body}" if days else body


@pytest.mark.parametrize(("text", "seconds"), [
    ("1-02:03:04", 93784), ("00:05:00", 300), ("05:03", 303), ("05:03.120", 304),
    ("5", 300), ("1-2", 93600), ("1-2:30", 95400), ("0:00:00", 0), ("100:00:00", 360000),
])
def test_durations_in_every_documented_form(text: str, seconds: int) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["UNLIMITED", "INVALID", "1:60:00", "-5", "1-", "", "a:b"])
def test_non_durations_are_errors(text: str) -> None:
    with pytest.raises(SpellingError):
        parse_duration(text)


def test_limits() -> None:
    assert parse_limit("UNLIMITED") is None
    assert parse_limit("Partition_Limit") is None
    assert parse_limit("2-00:00:00") == 172800
    assert parse_limit_minutes("60") == 3600  # the completion log writes minutes
    assert parse_limit_minutes("UNLIMITED") is None
    assert parse_limit_minutes("01:00:00") == 3600


def test_times_zones_and_unknown() -> None:
    assert parse_time("2024-03-01T12:00:00") == 1709294400
    assert parse_time("2024-03-01T12:00:00", "Europe/Rome") == 1709294400 - 3600
    assert parse_time("2024-03-01T12:00:00+02:00", "Europe/Rome") == 1709294400 - 7200
    assert parse_time("2024-03-01T12:00:00Z", "Europe/Rome") == 1709294400
    assert parse_time("1709294400") == 1709294400
    for missing in ("Unknown", "None", ""):
        assert parse_time(missing) is None
    with pytest.raises(SpellingError):
        parse_time("yesterday")


@given(st.lists(st.integers(0, 400 * 86400), min_size=1, max_size=40))
def test_duration_column_reads_what_slurm_prints(seconds: list[int]) -> None:
    values, bad = duration_column([slurm_duration(s) for s in seconds])
    assert not bad.any()
    assert values.tolist() == [float(s) for s in seconds]


def test_duration_column_matches_the_scalar_and_flags_bad_values() -> None:
    text = ["1-02:03:04", "", "05:03.120", "7", "INVALID", "00:00:05"]
    values, bad = duration_column(text)
    assert bad.tolist() == [False, False, False, False, True, False]
    assert np.isnan(values[1]) and np.isnan(values[4])
    # the column keeps a fraction of a second (the readers round it up and count it);
    # the scalar rounds it up
    assert values[[0, 2, 3, 5]].tolist() == [93784, 303.12, 420, 5]
    assert [parse_duration(text[i]) for i in (0, 2, 3, 5)] == [93784, 304, 420, 5]


def test_limit_column_tells_unlimited_from_partition_limit() -> None:
    secs, unlimited, partition, bad = limit_column(
        ["UNLIMITED", "Partition_Limit", "1-00:00:00", "60", "soon"])
    assert unlimited.tolist() == [True, False, False, False, False]
    assert partition.tolist() == [False, True, False, False, False]
    assert bad.tolist() == [False, False, False, False, True]
    assert secs[2:4].tolist() == [86400, 3600]


def test_time_column_dst_change_ambiguous_and_gap() -> None:
    # 2024-10-27 02:30 happens twice in Rome (read as the first, CEST); 2024-03-31 02:30
    # never happens
    secs, bad, ambiguous = time_column(
        ["2024-10-27T02:30:00", "2024-03-31T02:30:00", "Unknown", "2024-03-01T12:00:00Z",
         "1700000000", "2024-03-01 12:00:00"], "Europe/Rome")
    assert ambiguous.tolist() == [True, False, False, False, False, False]
    assert bad.tolist() == [False, True, False, False, False, False]
    assert secs[0] == parse_time("2024-10-27T02:30:00+02:00")
    assert np.isnan(secs[2])
    assert secs[3] == 1709294400 and secs[4] == 1700000000
    assert secs[5] == 1709294400 - 3600


@given(st.lists(st.integers(946684800, 2000000000), min_size=1, max_size=30),
       st.sampled_from(["UTC", "Europe/Rome", "America/New_York"]))
def test_time_column_agrees_with_the_scalar(stamps: list[int], zone: str) -> None:
    from datetime import datetime
    from zoneinfo import ZoneInfo

    text = [datetime.fromtimestamp(t, ZoneInfo(zone)).strftime("%Y-%m-%dT%H:%M:%S")
            for t in stamps]
    secs, bad, _ = time_column(text, zone)
    assert not bad.any()
    assert secs.tolist() == [float(parse_time(t, zone) or 0) for t in text]
