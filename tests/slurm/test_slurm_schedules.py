"""Hand-computed Slurm schedules: the main scheduler, backfill's whole-node reservations
and its bf_interval, partition tiers, against sched/builtin; plus invariants."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from dispatchlab.extend import Workload, simulate
from dispatchlab.platform.resolve import resolve_platform

BASE = """\
SchedulerType={sched}
SchedulerParameters=bf_interval=30,bf_resolution=1,sched_interval=60{extra}
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
NodeName=n[1-2] CPUs=4
PartitionName=p Nodes=n[1-2] Default=YES MaxTime=INFINITE
"""


def conf(tmp_path: Path, sched: str = "sched/backfill", extra: str = "", more: str = "") -> str:
    path = tmp_path / "slurm.conf"
    path.write_text(BASE.format(sched=sched, extra=extra) + more)
    return str(path)


def wl(rows: Sequence[tuple[int, int, int, int]], queue: Sequence[str] | None = None,
       user: Sequence[str] | None = None) -> Workload:
    """Rows of (submit, wall-time, run time, cores)."""
    submit, wall, run, cores = (list(c) for c in zip(*rows, strict=True))
    return Workload.from_columns(submit=submit, walltime=wall, runtime=run, units=cores,
                                 req={"cores": [1] * len(rows)}, queue=queue, user=user)


def starts(path: str, work: Workload) -> list[int]:
    res = simulate(work, resolve_platform(path), f"slurm:conf={path}")
    return [int(v) for v in res.jobs.sort_values("job_id")["start"]]


# j1 takes 6 of the 8 cores until 1000; j2 (4 cores) waits for them; j3 and j4 are small.
ROWS = [(0, 1000, 1000, 6), (10, 1000, 100, 4), (20, 100, 40, 2), (25, 2000, 50, 2)]


def test_builtin_stops_at_the_first_job_that_cannot_start(tmp_path: Path):
    # j2 cannot start, so its partition fails and j3, j4 wait behind it until 1000.
    assert starts(conf(tmp_path, "sched/builtin"), wl(ROWS)) == [0, 1000, 1000, 1000]


def test_backfill_reserves_whole_nodes_and_waits_bf_interval(tmp_path: Path):
    # Passes: 0 (j1 alone), 30 (bf_interval later, jobs changed since): j2 is reserved
    # n1 from 1000 (best fit: the first of two 4-core nodes); j3 fits now on n2 (2 free
    # cores) and starts; j4 (2000 s) may not use n1, reserved during its run, and n2 is
    # full: reserved on n2 from j3's requested end. 60: nothing new starts. j3 ends at 70,
    # under bf_interval after the pass at 60, so the main scheduler alone runs (and stops
    # at j2); the pass at 90 starts j4 on n2 (EASY would at 70).
    assert starts(conf(tmp_path), wl(ROWS)) == [0, 1000, 30, 90]


def test_bf_max_job_test_limits_the_jobs_backfill_looks_at(tmp_path: Path):
    # Only j2 is tested per pass: j3 and j4 wait for the main scheduler at 1000.
    path = conf(tmp_path, extra=",bf_max_job_test=1")
    assert starts(path, wl(ROWS)) == [0, 1000, 1000, 1000]


WINDOW_ROWS = [(0, 1000, 1000, 4), (10, 1000, 1000, 8), (20, 5000, 5000, 4)]


def test_backfill_never_delays_a_reserved_job(tmp_path: Path):
    # j1 holds n1 until 1000; j2 needs both nodes: reserved on n1+n2 from 1000. j3 (4
    # cores, 5000 s) fits on n2 now but would overlap j2's reservation: it waits for j2.
    assert starts(conf(tmp_path), wl(WINDOW_ROWS)) == [0, 1000, 2000]


def test_a_job_ending_when_a_reservation_begins_overlaps_it(tmp_path: Path):
    # backfill.c, _attempt_backfill: a node-space slot is in a job's way when
    # begin_time <= end_time (end_time = start + limit), so a job whose limit ends exactly
    # when a reservation on its nodes begins does not start. j1 holds n1 until 1000; j2
    # (8 cores) is reserved on n1+n2 from 1000. At the pass at 30, j3 (4 cores) would end
    # at 30 + 970 = 1000: it waits for j2 (1000-2000); with a 969-s limit it starts at 30.
    rows = [(0, 1000, 1000, 4), (10, 1000, 1000, 8), (20, 970, 970, 4)]
    assert starts(conf(tmp_path), wl(rows)) == [0, 1000, 2000]
    rows[2] = (20, 969, 969, 4)
    assert starts(conf(tmp_path), wl(rows)) == [0, 1000, 30]


def test_will_run_releases_running_jobs_in_batches_of_close_ends(tmp_path: Path):
    # cons_common/job_test.c, _will_run_test: running jobs are released in batches, each
    # taking every job that ends within 30 s of the batch's first one, and the pending
    # job's start is the end of the batch's last job. j1 (2 cores) holds n1 until 1020,
    # j2 (4 cores) n2 until 1000. At the pass at 30, j3 (4 cores) fits on n2 at 1000, but
    # j1 ends within 30 s of that: the batch frees both nodes, j3's start is 1020, and
    # best fit reserves n1 from 1020. j4 (2 cores, ends at 30 + 1000 = 1030) would
    # overlap it on n1: it waits, and the main scheduler starts j3 (n2) and j4 (n1) at 1000.
    rows = [(0, 1020, 1020, 2), (0, 1000, 1000, 4), (10, 100, 100, 4), (20, 1000, 1000, 2)]
    assert starts(conf(tmp_path), wl(rows)) == [0, 0, 1000, 1000]
    # j1 ending at 1031 is beyond the window: j3 is reserved n2 from 1000, j4 starts on n1
    rows[0] = (0, 1031, 1031, 2)
    assert starts(conf(tmp_path), wl(rows)) == [0, 0, 1000, 30]


def test_a_planned_run_crossing_a_later_reservation_is_planned_again(tmp_path: Path):
    # backfill.c, _test_resv_overlap. j1 (4 cores) holds n1 until 1000, j2 (2 cores) n2
    # until 100. Pass at 30: j3 (8 cores) is reserved on n1+n2 from 1000. j4 (4 cores,
    # 950 s): from now its window [30, 980] misses that reservation, and the will-run
    # test finds n2 at 100; but [100, 1050] crosses j3's reservation on n2, so j4 is
    # planned again from 100 and lands after j3 (1100). j5 (2 cores, 500 s) then fits
    # now on n2 and starts at 30 (with j4 reserved on n2 from 100 it waited for the next
    # pass, at 60, whose window from 60 reaches j3's reservation).
    rows = [(0, 1000, 1000, 4), (0, 100, 100, 2), (10, 100, 100, 8), (15, 950, 950, 4),
            (20, 500, 500, 2)]
    assert starts(conf(tmp_path), wl(rows)) == [0, 0, 1000, 1100, 30]


def test_bf_window_bounds_reservations(tmp_path: Path):
    # A one-minute window: j2's start (1000) lies beyond it, so no reservation holds n2,
    # j3 starts there at the pass at 30, and j2 waits for it (5030).
    path = conf(tmp_path, extra=",bf_window=1")
    assert starts(path, wl(WINDOW_ROWS)) == [0, 5030, 30]


def test_partition_tier_orders_before_priority(tmp_path: Path):
    # Two partitions on the same nodes; 'hi' has PriorityTier=2. j1 fills the machine;
    # j2 (tier 1, submitted first) and j3 (tier 2) wait; at 100 j3 goes first.
    more = "PartitionName=hi Nodes=n[1-2] PriorityTier=2\n"
    rows = [(0, 100, 100, 8), (10, 500, 500, 8), (20, 500, 500, 8)]
    path = conf(tmp_path, "sched/builtin", more=more)
    assert starts(path, wl(rows, queue=["p", "p", "hi"])) == [0, 600, 100]


def test_a_failed_partition_withholds_its_nodes_from_other_partitions(tmp_path: Path):
    # 'wide' spans both nodes, 'one' only n2. j1 holds n1; j2 (wide, 8 cores) cannot start,
    # so n1 and n2 are withheld from later jobs of every pass: j3 (one, 1 core), though n2
    # is idle, waits until j2 has run (sched/builtin).
    text = ("SchedulerType=sched/builtin\nNodeName=n[1-2] CPUs=4\n"
            "PartitionName=wide Nodes=n[1-2] Default=YES\nPartitionName=one Nodes=n2\n")
    path = tmp_path / "slurm.conf"
    path.write_text(text)
    rows = [(0, 100, 100, 4), (10, 100, 100, 8), (20, 100, 100, 1)]
    assert starts(str(path), wl(rows, queue=["wide", "wide", "one"])) == [0, 100, 200]


def test_multifactor_job_size_favor_small_reorders(tmp_path: Path):
    # j1 fills the machine until 100; j2 (8 cores) and j3 (1 core) wait. With
    # PriorityFavorSmall and only the job-size weight, j3 ranks first: at 100 it starts,
    # and j2 (8 cores) then waits until j3 ends at 150.
    more = ("PriorityType=priority/multifactor\nPriorityWeightJobSize=1000\n"
            "PriorityFavorSmall=YES\n")
    rows = [(0, 100, 100, 8), (10, 500, 500, 8), (20, 50, 50, 1)]
    assert starts(conf(tmp_path, "sched/builtin", more=more), wl(rows)) == [0, 150, 100]
    basic = conf(tmp_path, "sched/builtin")
    assert starts(basic, wl(rows)) == [0, 100, 600]


@pytest.mark.parametrize("sched", ["sched/builtin", "sched/backfill"])
def test_invariants_on_a_random_trace(tmp_path: Path, sched: str):
    rng = np.random.default_rng(4)
    n = 50
    submit = np.sort(rng.integers(0, 40000, n))
    wall = rng.integers(60, 4000, n)
    run = np.minimum(wall, rng.integers(10, 4000, n))
    cores = rng.integers(1, 9, n)
    users = [f"u{k}" for k in rng.integers(0, 5, n)]
    more = ("PriorityType=priority/multifactor\nPriorityWeightAge=100\n"
            "PriorityWeightFairshare=1000\nPriorityWeightJobSize=10\nPriorityMaxAge=60\n"
            "PriorityDecayHalfLife=1:00:00\nPriorityCalcPeriod=1\n")
    path = conf(tmp_path, sched, more=more)
    work = Workload.from_columns(submit=submit, walltime=wall, runtime=run, units=cores,
                                 req={"cores": [1] * n}, user=users)
    res = simulate(work, resolve_platform(path), f"slurm:conf={path}")
    jobs = res.jobs.sort_values("job_id")
    assert (jobs["start"] >= jobs["submit"]).all()
    assert len(jobs) == n
    # deterministic: the same run twice gives the same schedule
    again = simulate(work, resolve_platform(path), f"slurm:conf={path}")
    assert again.jobs.sort_values("job_id")["start"].tolist() == jobs["start"].tolist()


def test_default_queue_depth_bounds_event_passes_not_the_periodic_one(tmp_path: Path):
    # p1 = n1, p2 = n2. j1 fills n1; j2, j2b (p1) wait; j3 (p2, 1 core) arrives at 10.
    # The pass at 10 looks at 2 jobs (depth 1 + 1: j2, j2b) and stops before j3; the full
    # pass at sched_interval (60) starts it. With the default depth (100) it starts at 10.
    text = ("SchedulerType=sched/builtin\nSchedulerParameters=default_queue_depth={d}\n"
            "NodeName=n[1-2] CPUs=4\nPartitionName=p1 Nodes=n1 Default=YES\n"
            "PartitionName=p2 Nodes=n2\n")
    rows = [(0, 1000, 1000, 4), (5, 1000, 1000, 4), (6, 1000, 1000, 4), (10, 100, 100, 1)]
    queues = ["p1", "p1", "p1", "p2"]
    for depth, j3 in ((1, 60), (100, 10)):
        path = tmp_path / f"d{depth}.conf"
        path.write_text(text.format(d=depth))
        assert starts(str(path), wl(rows, queue=queues)) == [0, 1000, 2000, j3]


def test_fair_share_from_the_run_s_own_usage(tmp_path: Path):
    # One 4-core node. j1 (user a) runs 0..600; j2 (a) and j3 (b) wait. At submission both
    # users have no usage (fair-share factor 1: priority 1000 each, j2 first by job id).
    # The PriorityCalcPeriod pass at 60 charges a's j1: a ranks below b (0.5 vs 1.0),
    # so at 600 b's j3 starts first; under priority/basic j2 does.
    more = ("PriorityType=priority/multifactor\nPriorityWeightFairshare=1000\n"
            "PriorityCalcPeriod=1\n")
    rows = [(0, 600, 600, 4), (10, 100, 100, 4), (20, 100, 100, 4)]
    text = "SchedulerType=sched/builtin\nNodeName=n1 CPUs=4\nPartitionName=p Nodes=n1 Default=YES\n"
    for name, extra, expected in (("mf", more, [0, 700, 600]), ("basic", "", [0, 600, 700])):
        path = tmp_path / f"{name}.conf"
        path.write_text(text + extra)
        assert starts(str(path), wl(rows, user=["a", "a", "b"])) == expected


def test_cr_core_memory_places_by_cores_and_memory(tmp_path: Path):
    # Two nodes of 4 cores and 8000 MB; jobs of 1 core and 6000 MB. Memory, not cores,
    # limits each node to one job: j1 on n1, j2 on n2, j3 waits for j1 (ends at 100).
    text = ("SchedulerType=sched/builtin\nSelectTypeParameters=CR_Core_Memory\n"
            "NodeName=n[1-2] CPUs=4 RealMemory=8000\nPartitionName=p Nodes=ALL Default=YES\n")
    path = tmp_path / "slurm.conf"
    path.write_text(text)
    work = Workload.from_columns(submit=[0, 1, 2], walltime=[100] * 3, runtime=[100] * 3,
                                 units=[1, 1, 1], req={"cores": [1] * 3, "mem": [6000] * 3})
    res = simulate(work, resolve_platform(str(path)), f"slurm:conf={path}")
    jobs = res.jobs.sort_values("job_id")
    assert jobs["start"].tolist() == [0, 1, 100]
    assert [str(v) for v in jobs["node_list"]] == ["n1", "n2", "n1"]


def test_any_dispatcher_runs_on_a_slurm_conf_platform(tmp_path: Path):
    path = conf(tmp_path, "sched/builtin")
    res = simulate(wl(ROWS), resolve_platform(path), "easy")
    assert len(res.jobs) == len(ROWS)


def test_builtin_with_basic_priority_starts_in_submission_order(tmp_path: Path):
    # sched/builtin stops at the first job that cannot start and priority/basic is
    # first come, first served: no job starts before an earlier one (one partition).
    rng = np.random.default_rng(7)
    n = 60
    submit = np.sort(rng.integers(0, 20000, n))
    wall = rng.integers(60, 4000, n)
    run = np.minimum(wall, rng.integers(10, 4000, n))
    work = Workload.from_columns(submit=submit, walltime=wall, runtime=run,
                                 units=rng.integers(1, 9, n), req={"cores": [1] * n})
    path = conf(tmp_path, "sched/builtin")
    jobs = simulate(work, resolve_platform(path), f"slurm:conf={path}").jobs
    start = jobs.sort_values(["submit", "job_id"])["start"].to_numpy()
    assert (np.diff(start) >= 0).all()
    backfill = conf(tmp_path, "sched/backfill")
    jobs = simulate(work, resolve_platform(backfill), f"slurm:conf={backfill}").jobs
    start = jobs.sort_values(["submit", "job_id"])["start"].to_numpy()
    assert (np.diff(start) < 0).any()  # backfill does pass jobs on the same trace


def test_a_job_end_is_handled_before_the_submissions_of_its_second(tmp_path: Path):
    # slurmctld acts on a job's end when it happens (proc_req.c,
    # _slurm_rpc_complete_batch_script, queues the scheduler, job_scheduler.c _schedule):
    # the engine orders the events of one second ends first, so the pass at j1's end (100)
    # sees j2 (2 cores, waiting since 10) and not j3 (8 cores), submitted that second with
    # the larger job-size priority (multifactor, PriorityWeightJobSize only). j2 starts at
    # 100; j3 then needs all 8 cores and starts when j2 ends at 150. (Were j3 seen
    # together with the end, it would rank first and start at 100, j2 at 600.) Seen in a
    # replay of a CTC slice on the real slurmctld: the end's pass ran, then the
    # submissions arrived.
    more = "PriorityType=priority/multifactor\nPriorityWeightJobSize=1000\n"
    rows = [(0, 100, 100, 8), (10, 500, 50, 2), (100, 500, 500, 8)]
    for sched in ("sched/builtin", "sched/backfill"):
        assert starts(conf(tmp_path, sched, more=more), wl(rows)) == [0, 100, 150]
