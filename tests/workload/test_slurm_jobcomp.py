"""Slurm's job completion log (jobcomp/filetxt) read as a workload."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from dispatchlab.errors import WorkloadError
from dispatchlab.workload.slurm_jobcomp import load_jobcomp, read_jobcomp

LINE = ("JobId={id} UserId={user}(1000) GroupId=g(1000) Name=my job JobState={state} "
        "Partition={part} TimeLimit={limit} StartTime={start} EndTime={end} NodeList={nodes} "
        "NodeCnt=1 ProcCnt={procs} WorkDir=/tmp ReservationName= Tres=cpu=3,node=1 Account= "
        "QOS= WcKey= Cluster=unknown SubmitTime={submit} EligibleTime={submit} "
        "DerivedExitCode=0:0 ExitCode=0:0")


def _stamp(unix: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(unix))


def _line(job: int, submit: int, start: int | None, end: int | None, *, limit: str = "2",
          procs: int = 3, part: str = "main", state: str = "COMPLETED", user: str = "ann",
          nodes: str = "n1") -> str:
    t0 = 1_800_000_000
    return LINE.format(id=job, user=user, state=state, part=part, limit=limit, procs=procs,
                       nodes=nodes, submit=_stamp(t0 + submit),
                       start="Unknown" if start is None else _stamp(t0 + start),
                       end="Unknown" if end is None else _stamp(t0 + end))


def test_jobs_that_ran_become_core_units(tmp_path: Path) -> None:
    log = tmp_path / "jobcomp.log"
    log.write_text("\n".join([
        _line(1, 0, 2, 50),
        _line(2, 5, 50, 200, limit="UNLIMITED", procs=6, nodes="n[2-3]", user="bob"),
        _line(3, 6, None, None, state="CANCELLED", nodes="(null)"),
        _line(4, 7, 60, 70, part="other"),
    ]) + "\n")
    wl = load_jobcomp(log, partition="main")
    assert wl.job_id.tolist() == [1, 2]
    assert wl.submit.tolist() == [0, 5]
    assert wl.runtime.tolist() == [48, 150]
    assert wl.walltime.tolist() == [120, 150]
    assert wl.units.tolist() == [3, 6]
    assert [wl.users[u] for u in wl.user] == ["ann", "bob"]
    assert wl.logged_wait.tolist() == [2, 45]
    rep = wl.meta["load_report"]
    assert (rep["records"], rep["dropped_cancelled_before_start"], rep["dropped_other_partition"],
            rep["estimate_from_runtime"], rep["jobs"]) == (4, 1, 1, 1, 2)
    recs = read_jobcomp(log)
    assert recs[1].node_list == "n[2-3]" and recs[1].time_limit == -1
    assert recs[2].start is None


def test_bad_value_names_file_line_and_field(tmp_path: Path) -> None:
    log = tmp_path / "jobcomp.log"
    log.write_text(_line(1, 0, 2, 50) + "\n" + _line(2, 0, 2, 50, limit="soon") + "\n")
    with pytest.raises(WorkloadError, match=r"jobcomp.log:2, field 'TimeLimit'.*'soon'"):
        read_jobcomp(log)


def test_line_without_the_keys_is_refused(tmp_path: Path) -> None:
    log = tmp_path / "jobcomp.log"
    log.write_text("hello world\n")
    with pytest.raises(WorkloadError, match=r"jobcomp.log:1.*not a jobcomp/filetxt record"):
        read_jobcomp(log)
