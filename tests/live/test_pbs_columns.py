"""The column-wise readers of qstat's fields give what the one-value readers give."""

from __future__ import annotations

import time

import numpy as np
import pytest

from dispatchlab.live.pbs_state import (
    _durations,
    duration,
    job_number,
    job_numbers,
    pbs_time,
    pbs_times,
)
from dispatchlab.live.slurm_records import SlurmStateError


def test_time_stamps_column_wise_match_one_by_one() -> None:
    rng = np.random.default_rng(3)
    moments = rng.integers(1_700_000_000, 1_900_000_000, 500).tolist()
    stamps = [time.strftime("%a %b %e %H:%M:%S %Y", time.localtime(t)) for t in moments]
    assert any(s[8] == " " for s in stamps) and any(s[8] != " " for s in stamps)
    assert pbs_times(stamps, "qtime").tolist() == moments
    assert pbs_times(stamps, "qtime").tolist() == [pbs_time(s, "qtime") for s in stamps]
    mixed = [*stamps[:3], 1_800_000_000, "Tue Dec 08 00:49:22 2026", None]
    assert pbs_times(mixed, "qtime").tolist() == [pbs_time(v, "qtime") for v in mixed]
    with pytest.raises(SlurmStateError, match="field qtime: not a time"):
        pbs_times([*stamps[:2], "Tue Foo  8 00:49:22 2026"], "qtime")


def test_walltimes_and_ids_column_wise_match_one_by_one() -> None:
    walls = ["00:10:00", "01:00:01", "99:59:59", "00:00:00"]
    assert _durations(walls).tolist() == [600, 3601, 359999, 0]
    mixed = [*walls, "100:00:00", None, "00:10", 42]
    assert _durations(mixed).tolist() == [duration(v, "w") for v in mixed]
    with pytest.raises(SlurmStateError, match="not a duration"):
        _durations(["00:10:00", "ab:cd:ef"])
    ids = ["1.pbshost", "22.pbshost", "333.pbshost"]
    assert job_numbers(ids).tolist() == [1, 22, 333]
    odd = ["1.pbshost", "2.other", "3[4].pbshost", "5"]
    assert job_numbers(odd).tolist() == [job_number(k) for k in odd]
    with pytest.raises(SlurmStateError, match=r"is not NUMBER\.SERVER"):
        job_numbers(["1.pbshost", "x.pbshost"])
