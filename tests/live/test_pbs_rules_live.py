"""Queue limits, a stopped queue and an advance reservation on a real OpenPBS
(tools/pbs-local's cluster: 4 vnodes of 2 CPUs, no scheduler): the adapter starts what
they allow, where they allow it, and nothing else."""

from __future__ import annotations

import io
import json
import subprocess
import time
from collections.abc import Iterator

import pytest

from dispatchlab.live.adapter import Cycle, JsonLog, LiveAdapter
from dispatchlab.live.pbs_client import PbsClient
from dispatchlab.live.pbs_events import PbsEvents
from dispatchlab.live.pbs_local import SERVER, LocalPbs
from dispatchlab.live.pbs_state import exec_vnode, job_number
from tests.live.pbs_jobs import all_finished, qstat, wait_for


@pytest.fixture
def cluster(pbs_cluster: LocalPbs) -> Iterator[LocalPbs]:
    """The session's PBS; the jobs, queues and reservations a test made are removed."""
    queues: list[str] = []
    pbs_cluster.made_queues = queues  # type: ignore[attr-defined]
    yield pbs_cluster
    live = [j for j, s in qstat(pbs_cluster).items() if s not in ("F", "X")]
    if live:
        subprocess.run(pbs_cluster.wrap(["qdel", "-W", "force", *map(str, live)]),
                       capture_output=True)
        wait_for(lambda: all_finished(pbs_cluster, live), 30, "jobs deleted")
    for resv in _reservations(pbs_cluster):
        subprocess.run(pbs_cluster.wrap(["pbs_rdel", resv]), capture_output=True)
    for q in queues:
        pbs_cluster.qmgr(f"delete queue {q}")


def _reservations(cluster: LocalPbs) -> list[str]:
    out = subprocess.run(cluster.wrap(["pbs_rstat", "-f"]), capture_output=True, text=True)
    return [line.split(":", 1)[1].strip() for line in out.stdout.splitlines()
            if line.startswith("Resv ID:")]


def _queue(cluster: LocalPbs, name: str, *settings: str) -> None:
    cluster.qmgr(f"create queue {name} queue_type=execution",
                 *(f"set queue {name} {s}" for s in settings),
                 f"set queue {name} enabled=true")
    cluster.made_queues.append(name)  # type: ignore[attr-defined]


def _submit(cluster: LocalPbs, queue: str, select: str, walltime: str,
            seconds: int = 600) -> int:
    out = subprocess.run(cluster.as_user([
        "qsub", "-q", queue, "-l", f"select={select}", "-l", "place=free", "-l",
        f"walltime={walltime}", "-j", "oe", "-o", "/dev/null", "--", "/bin/sleep",
        str(seconds)]), capture_output=True, text=True, check=True)
    return job_number(out.stdout.strip())


def _cycle(cluster: LocalPbs, queue: str, spec: str = "easy") -> Cycle:
    client = PbsClient(queue=queue, prefix=cluster.prefix())
    return LiveAdapter(client, queue, spec, log=JsonLog(io.StringIO())).cycle()


def _jobs(cluster: LocalPbs) -> dict[int, dict[str, object]]:
    out = subprocess.run(cluster.wrap(["qstat", "-f", "-F", "json"]), capture_output=True,
                         text=True, check=True)
    return {job_number(k): v for k, v in (json.loads(out.stdout).get("Jobs") or {}).items()}


def _vnodes(job: dict[str, object]) -> set[str]:
    return {n for n, _ in exec_vnode(str(job.get("exec_vnode", "")))}


def test_queue_limits_and_a_stopped_queue_are_respected(cluster: LocalPbs) -> None:
    _queue(cluster, "lim", "max_run = '[o:PBS_ALL=1]'", "started = true")
    over = _submit(cluster, "lim", "1:ncpus=1", "00:05:00")
    cluster.qmgr("set queue lim resources_max.walltime = 00:02:00")  # now over the limit
    first = _submit(cluster, "lim", "1:ncpus=1", "00:01:00")
    second = _submit(cluster, "lim", "1:ncpus=1", "00:01:00")
    cyc = _cycle(cluster, "lim")
    assert list(cyc.started) == [first]
    assert "allows at most 120 s of wall-time, job asks 300 s" in cyc.refused[over]
    assert "max_run is 1" in cyc.refused[second]  # refused before qrun: one may run
    cyc = _cycle(cluster, "lim")  # the next read: at max_run, the queue starts nothing
    assert cyc.started == {} and second not in cyc.refused
    states = qstat(cluster)
    assert (states[first], states[second], states[over]) == ("R", "Q", "Q")

    _queue(cluster, "halt", "started = false")
    job = _submit(cluster, "halt", "1:ncpus=1", "00:01:00")
    assert _cycle(cluster, "halt").started == {} and qstat(cluster)[job] == "Q"
    cluster.qmgr("set queue halt started = true")  # qstart
    assert list(_cycle(cluster, "halt").started) == [job]
    wait_for(lambda: qstat(cluster)[job] == "R", 20, "the job running")


def test_a_confirmed_reservation_keeps_its_vnodes_in_its_window(cluster: LocalPbs) -> None:
    start = int(time.time()) + 150
    out = subprocess.run(cluster.as_user([
        "pbs_rsub", "-R", time.strftime("%H%M.%S", time.localtime(start)), "-D",
        "00:10:00", "-l", "select=2:ncpus=2", "-l", "place=scatter"]),
        capture_output=True, text=True, check=True)
    resv = out.stdout.split()[0]
    _confirm(cluster, resv, "(vnode1:ncpus=2)+(vnode2:ncpus=2)")
    wide = _submit(cluster, "workq", "4:ncpus=1", "00:05:00")  # fits on vnode3+vnode4 only
    late = _submit(cluster, "workq", "2:ncpus=1", "00:05:00")  # would run into the window
    short = _submit(cluster, "workq", "2:ncpus=1", "00:00:30", seconds=5)  # ends before it
    cyc = _cycle(cluster, "workq")
    assert set(cyc.started) == {wide, short} and late not in cyc.started
    wait_for(lambda: all(qstat(cluster)[j] in ("R", "E", "F", "X") for j in (wide, short)),
             20, "the jobs running")
    jobs = _jobs(cluster)
    assert _vnodes(jobs[wide]) <= {"vnode3", "vnode4"}
    assert jobs[late]["job_state"] == "Q"
    # a second cycle (the reservation still ahead) starts nothing more
    assert _cycle(cluster, "workq").started == {}
    assert qstat(cluster)[late] == "Q"


def test_a_reservations_confirmation_wakes_the_adapter(cluster: LocalPbs) -> None:
    events = PbsEvents(cluster.prefix())
    try:
        assert events.install() is None
        start = int(time.time()) + 600
        out = subprocess.run(cluster.as_user([
            "pbs_rsub", "-R", time.strftime("%H%M.%S", time.localtime(start)), "-D",
            "00:05:00", "-l", "select=1:ncpus=1"]), capture_output=True, text=True, check=True)
        while events.wait(1):  # (nothing is expected from a submission)
            pass
        _confirm(cluster, out.stdout.split()[0], "(vnode4:ncpus=1)")
        assert events.wait(10), "no event from the resv_confirm hook"
    finally:
        events.close()


def _confirm(cluster: LocalPbs, resv: str, vnodes: str) -> None:
    """Confirm ``resv`` on ``vnodes`` as a scheduler would (none runs here): the build's
    Python bindings' ``pbs_confirmresv``, as root (a manager)."""
    code = ("import sys, pbs_ifl\n"
            f"c = pbs_ifl.pbs_connect({SERVER!r})\n"
            f"rc = pbs_ifl.pbs_confirmresv(c, {resv!r}, {vnodes!r}, 0, "
            "'PBS_RESV_CONFIRM_SUCCESS')\n"
            "sys.exit(f'pbs_confirmresv: {rc} {pbs_ifl.pbs_geterrmsg(c)}' if rc else 0)\n")
    altair = cluster.exec_prefix / "lib" / "python" / "altair"
    subprocess.run(cluster.wrap(["env", f"PYTHONPATH={altair}", "/usr/bin/python3", "-c", code]),
                   capture_output=True, text=True, check=True)
    out = subprocess.run(cluster.wrap(["pbs_rstat", "-f", resv]), capture_output=True,
                         text=True, check=True)
    assert "RESV_CONFIRMED" in out.stdout, out.stdout
