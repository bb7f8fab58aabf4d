"""The local Slurm with real accounting (slurmdbd on a private MariaDB): jobs of several
widths run, then ``sacct --parsable2`` and ``sacct --json`` written by the real Slurm are
read back with dispatchlab's readers and checked job by job against the controller's own
record (``scontrol show job``), simulated again, and ``sshare`` shows the usage they made.
Skipped, saying why, without Slurm, slurmdbd or MariaDB."""

from __future__ import annotations

import os
import pwd
import re
import subprocess
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from dispatchlab.live.local_cluster import LocalCluster
from dispatchlab.live.slurm_accounting import missing_accounting_programs
from dispatchlab.platform.slurm_conf import load_slurm_platform
from dispatchlab.processes import pid_alive
from dispatchlab.simulation import simulate
from dispatchlab.workload.load import load_workload
from dispatchlab.workload.workload import Workload
from tests.live.slurm_jobs import start_or_skip, wait_for

pytestmark = pytest.mark.slow

#: (CPUs, seconds, account): 16 fills the 4×4 machine, so it waits and others queue
JOBS = [(1, 2, "alpha"), (6, 3, "beta"), (4, 1, "alpha"), (16, 2, "beta"), (3, 2, "alpha")]
FORMAT = ("JobID,JobIDRaw,Submit,Start,End,Elapsed,Timelimit,NCPUS,NNodes,ReqCPUS,"
          "Partition,Account,User,JobName,State")
#: a job longer than one PriorityCalcPeriod (whole minutes, slurm.conf(5)): it is charged
LONG = (2, 65, "beta")
SLACK = 3
#: DebugFlags=Priority at verbose logs each pass (the Fair Tree line) in slurmctld.log
MULTIFACTOR = ("PriorityType=priority/multifactor\nPriorityCalcPeriod=1\n"
               "DebugFlags=Priority\nSlurmctldDebug=verbose")


def _utc(env: dict[str, str]) -> dict[str, str]:
    return {**env, "TZ": "UTC"}


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    missing = missing_accounting_programs()
    if missing:
        pytest.skip(f"slurmdbd/MariaDB not installed ({', '.join(missing)} missing; "
                    ".ci/setup-slurm.sh installs slurmdbd mariadb-server)")
    c = start_or_skip(nodes=4, cpus=4, partition="main", accounting=True,
                      extra_conf=MULTIFACTOR)
    yield c
    c.stop()


@pytest.fixture(scope="module")
def ran(cluster: LocalCluster) -> dict[int, dict[str, int]]:
    """The jobs of ``JOBS``, run to completion: id → the controller's submit, start, end
    (Unix seconds) and CPUs, from ``scontrol show job``."""
    ids = []
    for cpus, seconds, account in [*JOBS, LONG]:
        out = subprocess.run(["sbatch", "--parsable", "-p", "main", "-n", str(cpus), "-t", "2",
                              "-A", account, "-o", "/dev/null", "-J", f"w{cpus}",
                              "--wrap", f"sleep {seconds}"], env=cluster.env(),
                             capture_output=True, text=True, check=True)
        ids.append(int(out.stdout.strip()))
    truth: dict[int, dict[str, int]] = {}

    def finished() -> bool:
        for job in ids:
            record = _scontrol_job(cluster, job)
            if record.get("JobState") != "COMPLETED":
                return False
            truth[job] = {"submit": _unix(record["SubmitTime"]),
                          "start": _unix(record["StartTime"]),
                          "end": _unix(record["EndTime"]), "cpus": int(record["NumCPUs"])}
        return True

    wait_for(finished, 180, 0.5)
    # slurmctld sends job ends to slurmdbd asynchronously
    wait_for(lambda: _sacct_completed(cluster, ids), 60, 0.5)
    return truth


def _scontrol_job(cluster: LocalCluster, job: int) -> dict[str, str]:
    out = subprocess.run(["scontrol", "-o", "show", "job", str(job)],
                         env=_utc(cluster.env()), capture_output=True, text=True, check=True)
    return dict(re.findall(r"(\w+)=(\S*)", out.stdout))


def _unix(text: str) -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp())


def _sacct_completed(cluster: LocalCluster, ids: list[int]) -> bool:
    out = subprocess.run(["sacct", "-X", "-n", "-P", "--format", "JobIDRaw,State", "-j",
                          ",".join(map(str, ids))], env=cluster.env(), capture_output=True,
                         text=True, check=True)
    states = dict(line.split("|") for line in out.stdout.split())
    return all(states.get(str(j)) == "COMPLETED" for j in ids)


def _export(cluster: LocalCluster, path: Path, *args: str) -> Path:
    """``sacct --allusers <args>`` (in UTC) written to ``path``."""
    out = subprocess.run(["sacct", "--allusers", *args], env=_utc(cluster.env()),
                         capture_output=True, text=True, check=True)
    path.write_text(out.stdout)
    return path


def _check_jobs(wl: Workload, truth: dict[int, dict[str, int]]) -> None:
    """Every job read back with the controller's submit, start, end and CPUs."""
    assert wl.origin_unix is not None
    index = {int(j): k for k, j in enumerate(wl.job_id.tolist())}
    assert set(truth) <= set(index)
    for job, real in truth.items():
        k = index[job]
        submit = wl.origin_unix + int(wl.submit[k])
        start = submit + int(wl.logged_wait[k])
        got = {"submit": submit, "start": start, "end": start + int(wl.runtime[k]),
               "cpus": int(wl.units[k])}
        assert got == real, f"job {job}"
        # sbatch -t 2, partition main, submitted by this process's user
        assert int(wl.walltime[k]) == 120, f"job {job}"
        assert wl.queues[int(wl.queue[k])].name == "main"
        assert wl.users[int(wl.user[k])] == pwd.getpwuid(os.geteuid()).pw_name
    assert wl.meta["load_report"]["steps_skipped"] >= len(truth)  # the .batch steps


def test_sacct_parsable2_reads_back_every_job(cluster: LocalCluster, ran: dict[int, dict[str, int]],
                                              tmp_path: Path) -> None:
    path = _export(cluster, tmp_path / "sacct.txt", "--duplicates", "--parsable2",
                   "--format", FORMAT)
    wl = load_workload(path)
    assert wl.meta["format"] == "sacct"
    _check_jobs(wl, ran)
    # the full machine's job waited for the others: Slurm queued it, the log says so
    wide = [k for k, j in enumerate(wl.job_id.tolist()) if ran.get(j, {}).get("cpus") == 16]
    assert wl.logged_wait[wide[0]] > 0


def test_sacct_json_reads_back_every_job(cluster: LocalCluster, ran: dict[int, dict[str, int]],
                                         tmp_path: Path) -> None:
    wl = load_workload(_export(cluster, tmp_path / "sacct.json", "--json"))
    assert wl.meta["format"] == "sacct-json"
    _check_jobs(wl, ran)


@pytest.mark.filterwarnings("ignore:.*cannot change a simulated schedule")  # daemon paths
def test_the_read_back_workload_simulates_on_the_clusters_own_conf(
        cluster: LocalCluster, ran: dict[int, dict[str, int]], tmp_path: Path) -> None:
    wl = load_workload(_export(cluster, tmp_path / "sacct.txt", "--parsable2",
                               "--format", FORMAT))
    platform = load_slurm_platform(cluster.conf)
    for spec in ("easy", f"slurm:conf={cluster.conf}"):
        res = simulate(wl, platform, spec)
        assert res.summary["jobs"] == wl.n_jobs == len(ran)


def test_sshare_usage_is_what_each_decay_pass_charged(cluster: LocalCluster,
                                                      ran: dict[int, dict[str, int]]) -> None:
    """Raw usage is CPU-seconds (decayed by a 7-day half-life: under 0.01 % here), added
    at each PriorityCalcPeriod pass for the jobs running then, from the later of their
    start and the previous pass. Measured on 22.05.8: the part of a job after the last
    pass before its end is never charged (a job that starts and ends between two passes
    adds nothing), so the ``LONG`` job, which spans a pass, is what makes usage here."""
    jobs = [(*spec, job) for spec, job in zip([*JOBS, LONG], sorted(ran), strict=True)]
    passes = _decay_passes(cluster.conf.parent / "slurmctld.log")
    low = {"alpha": 0.0, "beta": 0.0}
    high = dict(low)
    for _, _, account, job in jobs:
        start, end, cpus = ran[job]["start"], ran[job]["end"], ran[job]["cpus"]
        for k, p in enumerate(passes):
            before = passes[k - 1] if k else start
            # a pass takes its time up to SLACK s before it logs the Fair Tree line
            if start < p and p - SLACK < end:
                high[account] += cpus * (p - max(start, before - SLACK))
            if start < p - SLACK and p < end:
                low[account] += cpus * (p - SLACK - max(start, before))
    assert low["beta"] > 0, (passes, ran)  # the long job ran across a pass
    usage = _sshare_usage(cluster)
    for account in low:  # sshare prints usage truncated to an integer
        assert low[account] * 0.999 - 1 <= usage[account] <= high[account] + 1, (
            account, usage, low, high, passes)
    # the tail of every job is lost: less than the CPU-seconds the jobs ran
    ran_beta = sum(ran[j]["cpus"] * (ran[j]["end"] - ran[j]["start"])
                   for _, _, account, j in jobs if account == "beta")
    assert usage["beta"] < ran_beta


def _decay_passes(log: Path) -> list[int]:
    """The times (whole seconds, as slurmctld's ``time_t``) of the priority passes, from
    the Fair Tree line ``DebugFlags=Priority`` writes at each one."""
    passes = []
    for line in log.read_text().splitlines():
        if "Fair Tree fairshare algorithm" in line:
            stamp = line[1:line.index("]")]
            passes.append(int(datetime.fromisoformat(stamp).timestamp()))  # daemon's zone
    return passes


def _sshare_usage(cluster: LocalCluster) -> dict[str, float]:
    """Each account's raw usage (``sshare --all --long --parsable2``, account rows)."""
    out = subprocess.run(["sshare", "--all", "--long", "--parsable2"], env=cluster.env(),
                         capture_output=True, text=True, check=True)
    rows = [line.split("|") for line in out.stdout.splitlines()]
    usage = {}
    for row in rows[1:]:
        entry = dict(zip(rows[0], row, strict=True))
        if entry["User"] == "":
            usage[entry["Account"].strip()] = float(entry["RawUsage"])
    return usage


def test_a_second_cluster_with_accounting_runs_beside(cluster: LocalCluster,
                                                       ran: dict[int, dict[str, int]]) -> None:
    """Its own database and ports: it sees none of the first cluster's jobs; both stop
    by pid."""
    with LocalCluster(nodes=1, cpus=2, accounting=True) as other:
        assert other.dbd is not None and cluster.dbd is not None
        assert other.dbd.db_port != cluster.dbd.db_port
        out = subprocess.run(["sacct", "--allusers", "-X", "-n", "-P", "--format", "JobIDRaw"],
                             env=other.env(), capture_output=True, text=True, check=True)
        assert out.stdout.split() == []
        pids = dict(other.pids)
        names = {k: Path(f"/proc/{p}/comm").read_text().strip() for k, p in pids.items()}
        assert names["mariadbd"] == "mariadbd" and names["slurmdbd"] == "slurmdbd"
    deadline = time.monotonic() + 10
    while any(pid_alive(p) for p in pids.values()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(pid_alive(p) for p in pids.values())
    assert _sacct_completed(cluster, sorted(ran))  # the first one is untouched

