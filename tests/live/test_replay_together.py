"""A replay whose jobs of one tick reach the real Slurm at once (``together``)."""

from __future__ import annotations

import pytest

from dispatchlab.live.local_cluster import LocalCluster
from dispatchlab.live.replay import submit_replay
from dispatchlab.workload.workload import Workload
from tests.live.slurm_jobs import clean, jobs, wait_for


def test_a_tick_s_jobs_are_released_together(slurm_cluster: LocalCluster) -> None:
    clean(slurm_cluster)
    # ticks of 1 s: three jobs at tick 0, one at tick 2 (1-tick runs, 1-minute limits)
    wl = Workload.from_columns(submit=[0, 0, 0, 2], walltime=[60] * 4, runtime=[1] * 4,
                               units=[1, 2, 1, 1], req={"cores": [1] * 4},
                               meta={"tick": 1})
    sub = submit_replay(wl, slurm_cluster.env(), "main", hold=False, together=True)
    sub.check_complete()
    assert len(sub.slurm_id) == 4
    ids = [sub.slurm_id[j] for j in sorted(sub.slurm_id)]
    assert ids == sorted(ids)  # submitted in trace order: Slurm's ids keep it
    # released at their time (a quarter tick in), within a few hundredths of a second
    assert max(sub.lag_s.values()) < 0.5
    seen = jobs(slurm_cluster)
    assert all(seen[i].priority > 0 or not seen[i].pending for i in ids if i in seen)
    wait_for(lambda: not any(j.pending or j.running for j in jobs(slurm_cluster).values()),
             60)


def test_together_is_not_for_held_replays() -> None:
    wl = Workload.from_columns(submit=[0], walltime=[60], runtime=[1], units=[1],
                               req={"cores": [1]}, meta={"tick": 1})
    with pytest.raises(Exception, match="not with hold"):
        submit_replay(wl, None, "main", hold=True, together=True)
