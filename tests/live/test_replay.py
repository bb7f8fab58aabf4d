"""The replay's scaled workload holds exactly the requests Slurm will hold."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatchlab.live.replay import job_script, scaled_workload
from dispatchlab.workload.workload import Workload


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 10**5),
                          st.integers(1, 10**5), st.integers(1, 100)), min_size=1,
                max_size=30),
       st.sampled_from([1.0, 7.5, 60.0, 600.0, 900.0]), st.sampled_from([1, 2, 5]))
def test_scaled_requests_are_whole_minutes_never_shorter(rows: list, c: float,
                                                         tick: int) -> None:
    submit, runtime, walltime, units = (np.array(x) for x in zip(*rows, strict=True))
    wl = Workload.from_columns(submit=submit, runtime=runtime, walltime=walltime,
                               units=units, req={"cores": [1] * len(rows)})
    s = scaled_workload(wl, c, tick)
    wall_s = s.walltime * tick  # what Slurm holds, in wall seconds
    assert (wall_s % 60 == 0).all() and (wall_s >= 60).all()
    order = np.argsort(wl.job_id)
    back = np.argsort(s.job_id)
    assert (s.walltime[back] >= wl.walltime[order] / c - 1e-9).all()  # never a shorter limit
    assert (s.walltime[back] < wl.walltime[order] / c + 60 // tick).all()  # < a minute more
    assert ((s.runtime >= 1) & (s.runtime <= s.walltime)).all()
    assert (s.units[back] == wl.units[order]).all()
    assert (np.diff(s.submit) >= 0).all()


def test_job_scripts() -> None:
    assert job_script(5, aligned=False, tick=2) == "sleep 10"
    aligned = job_script(7, aligned=True, t0=100, tick=2)
    assert "end=$(( 100 + ((t - 100) / 2 + 7) * 2 ))" in aligned and "squeue -h -j" in aligned
