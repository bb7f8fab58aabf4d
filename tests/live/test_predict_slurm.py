"""Shadow predictions with Slurm's own scheduler (the ``slurm`` family) and run times
learned from history, on hand-built snapshots (no cluster)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from dispatchlab.errors import ConfigError
from dispatchlab.estimates.registry import get_estimator
from dispatchlab.live.local_cluster import LocalCluster, missing_programs
from dispatchlab.live.predict import (
    check_history,
    check_partition,
    estimate_durations,
    load_history,
    predict,
)
from dispatchlab.live.slurm_client import SlurmClient
from dispatchlab.live.slurm_state import Snapshot, snapshot
from dispatchlab.live.twin import build_twin
from dispatchlab.workload.workload import Workload
from tests.live.slurm_jobs import jobs, submit, wait_for
from tests.live.test_twin import NOW, _job, _nodes
from tests.views import RNG, known_view

REPO = Path(__file__).resolve().parents[2]
SACCT = REPO / "tests/formats/data/sacct_parsable2.txt"


def _conf(tmp_path: Path, age_weight: int) -> Path:
    path = tmp_path / f"slurm-{age_weight}.conf"
    path.write_text(
        "SchedulerType=sched/backfill\nPriorityType=priority/multifactor\n"
        f"PriorityWeightAge={age_weight}\nPriorityWeightJobSize=1000\nPriorityMaxAge=60\n"
        "SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n"
        "NodeName=n[1-2] CPUs=4\nPartitionName=main Nodes=n[1-2] Default=YES "
        "MaxTime=INFINITE State=UP\n")
    return path


def _snap() -> Snapshot:
    """Job 1 holds all 8 CPUs since NOW − 60 (limit 10 min); job 2 (4 CPUs, 5 min)
    waits since NOW − 3000 s, job 3 (8 CPUs, 5 min) since NOW − 10 s."""
    old = _job(2, "PENDING", 4, reason="Priority", limit=5)
    old["submit_time"] = NOW - 3000
    new = _job(3, "PENDING", 8, reason="Resources", limit=5)
    new["submit_time"] = NOW - 10
    run = _job(1, "RUNNING", 8, nodes=(("n1", 4), ("n2", 4)), start=NOW - 60, limit=10)
    run["submit_time"] = NOW - 3600
    return snapshot(NOW, {"jobs": [run, old, new]}, _nodes("allocated", "allocated"))


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_the_twin_orders_by_multifactor_age_from_the_real_submit_time(tmp_path: Path
                                                                       ) -> None:
    """Priorities by hand (PriorityMaxAge 1 h, 8 CPUs on 2 nodes): job 2 = 1000 × 3000/3600
    + 1000 × (1/2 + 4/8)/2 = 1333, job 3 = 1000 × 10/3600 + 1000 × (1/2 + 8/8)/2 = 752:
    job 2 starts when job 1's limit is up (NOW + 540), job 3 when job 2's is (NOW + 840).
    Without the age weight job 3 (750 against 500) goes first and job 2 follows it."""
    snap = _snap()
    aged = {p.job_id: p.predicted_start - NOW
            for p in predict(snap, "main", f"slurm:conf={_conf(tmp_path, 1000)}", "walltime")}
    assert aged == {2: 540, 3: 840}
    sized = {p.job_id: p.predicted_start - NOW
             for p in predict(snap, "main", f"slurm:conf={_conf(tmp_path, 0)}", "walltime")}
    assert sized == {3: 540, 2: 840}


def _history(runs: list[int], limits: list[int], users: list[str]) -> Workload:
    n = len(runs)
    return Workload.from_columns(submit=np.arange(n), walltime=limits, runtime=runs,
                                 units=[1] * n, req={"cores": [1] * n}, user=users)


def test_user_ratio_is_the_mean_ratio_of_the_users_last_two_jobs() -> None:
    wl = _history([30, 90, 60, 10, 50, 50], [60, 100, 600, 100, 1000, 100],
                  ["a", "a", "a", "b", "a", "b"])
    est = get_estimator("user-ratio")
    est.reset(known_view(wl), RNG)
    assert est.estimate(0) == 60  # no history: the limit
    est.observe(0, 30)  # a: 0.5
    est.observe(1, 90)  # a: 0.9
    assert est.estimate(4) == 700  # 1000 × (0.5 + 0.9) / 2
    assert est.estimate(3) == 100  # b has none yet
    est.observe(3, 10)  # b: 0.1
    assert est.estimate(5) == 10
    est.observe(2, 60)  # a: 0.9, 0.1
    assert est.estimate(4) == 700  # fixed when first asked
    assert est.estimate(2) == 300 and not est.oracle  # first asked now: 600 × (0.9 + 0.1) / 2


def test_running_and_pending_jobs_take_run_times_learned_from_history(tmp_path: Path
                                                                      ) -> None:
    """The user ("ann") ran two jobs at 10 % and 30 % of their limits: every job of hers
    is estimated at 20 % of its limit. The running job (20 % of 600 s = 120 s, started at
    NOW − 60) ends at NOW + 60; job 2 (20 % of 300 s = 60 s) starts then, and job 3 (all
    8 CPUs) when job 2 ends, at NOW + 120."""
    hist = _history([6, 18], [60, 60], ["ann", "ann"])
    snap = _snap()
    twin = build_twin(snap, "main", every_pending=True)
    est = estimate_durations("user-ratio", twin, hist)
    assert est.seconds == {1: 120, 2: 60, 3: 60}
    got = {p.job_id: (p.predicted_start - NOW, p.estimate_s)
           for p in predict(snap, "main", f"slurm:conf={_conf(tmp_path, 1000)}",
                            "user-ratio", hist)}
    assert got == {2: (60, 60), 3: (120, 60)}


def test_history_from_a_sacct_export_keeps_the_partition() -> None:
    every = load_history(SACCT, None)
    names = {q.name for q in every.queues}
    part = sorted(names)[0]
    mine = load_history(SACCT, part)
    assert 0 < mine.n_jobs <= every.n_jobs
    assert {mine.queues[q].name for q in mine.queue.tolist()} == {part}
    check_history(SACCT)
    with pytest.raises(Exception, match="no job that ran in partition 'nope'"):
        load_history(SACCT, "nope")


def test_a_history_of_another_format_is_refused(tmp_path: Path) -> None:
    swf = tmp_path / "t.swf"
    swf.write_text("1 0 0 10 1 -1 -1 1 100 -1 1 1 1 -1 1 -1 -1 -1\n")
    with pytest.raises(ConfigError, match=r"job completion log .* or a sacct export"):
        check_history(swf)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_a_slurm_conf_without_the_partition_is_refused(tmp_path: Path) -> None:
    conf = tmp_path / "s.conf"
    conf.write_text("NodeName=n[1-2] CPUs=4\nPartitionName=batch Nodes=n[1-2] State=UP\n")
    check_partition(f"slurm:conf={conf}", "batch")
    check_partition("easy", "anything")
    with pytest.raises(ConfigError, match="no partition 'main' and none with Default=YES"):
        check_partition(f"slurm:conf={conf}", "main")


def test_nodes_backfill_planned_a_job_on_stay_usable() -> None:
    """Slurm's backfill flags the nodes of a planned job ``PLANNED``: they still take
    jobs, and a pending job as wide as the machine is still predicted."""
    nodes = _nodes("idle", "idle")
    for n in nodes["nodes"]:
        n["state_flags"] = ["PLANNED"]
    snap = snapshot(NOW, {"jobs": [_job(2, "PENDING", 8, reason="Resources")]}, nodes)
    twin = build_twin(snap, "main", every_pending=True)
    assert twin.down == [] and twin.closed == []
    assert [p.predicted_start for p in predict(snap, "main", "easy", "walltime")] == [NOW]



class _SizeFirstCluster(LocalCluster):
    """The local cluster under sched/backfill with multifactor job-size priority."""

    def _write_conf(self) -> None:
        super()._write_conf()
        text = self.conf.read_text()
        self.conf.write_text(text.replace(
            "NodeName=", "PriorityType=priority/multifactor\nPriorityWeightJobSize=1000\n"
            "NodeName=", 1))


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_the_twin_predicts_the_starts_slurm_plans() -> None:
    """A real slurmctld with sched/backfill and job-size priority plans the pending jobs
    (the start ``squeue --start`` shows); the twin, configured from the very slurm.conf
    and given the limits as run times, predicts the same starts — while ``easy`` (first
    come, first served) does not: the 16-CPU job submitted second goes first."""
    if missing_programs() or os.geteuid() != 0:
        pytest.skip("needs Slurm's daemons and root (.ci/setup-slurm.sh)")
    cluster = _SizeFirstCluster(nodes=4, cpus=4, partition="main", scheduler="backfill")
    cluster.start()
    try:
        first = submit(cluster, 16, 50, hold=False)
        wait_for(lambda: jobs(cluster)[first].running)
        waiting = [submit(cluster, 8, 5, hold=False, minutes=2),
                   submit(cluster, 16, 5, hold=False),
                   submit(cluster, 4, 5, hold=False),
                   submit(cluster, 2, 5, hold=False, minutes=3)]
        wait_for(lambda: all(jobs(cluster)[j].start > 0 for j in waiting))
        snap = SlurmClient(cluster.env()).read()
        planned = {j.job_id: j.start for j in snap.jobs if j.job_id in waiting}
        twin = {p.job_id: p.predicted_start
                for p in predict(snap, "main", f"slurm:conf={cluster.conf}", "walltime")}
        assert twin == planned
        easy = {p.job_id: p.predicted_start
                for p in predict(snap, "main", "easy", "walltime")}
        assert easy != planned
    finally:
        cluster.stop()


def test_report_refuses_a_sacct_history(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from dispatchlab.cli.main import app

    out = tmp_path / "pred.csv"
    out.write_text("cycle_time,job_id\n")
    res = CliRunner().invoke(app, ["live", "slurm", "--partition", "main", "--predict",
                                   "--report", "--out", str(out), "--history", str(SACCT)])
    assert res.exit_code == 2 and "is a sacct export" in res.output
