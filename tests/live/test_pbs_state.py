"""PBS's JSON (qstat -f -F json, pbsnodes -av -F json) as the live cycle's snapshot, and the
adapter's own free-CPU check before qrun -H (which checks nothing)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from dispatchlab.live.pbs_client import PbsClient, PbsCommandError
from dispatchlab.live.pbs_state import (
    duration,
    exec_vnode,
    exec_vnode_text,
    free_cpus,
    job_number,
    pbs_snapshot,
    pbs_time,
    select_chunks,
)
from dispatchlab.live.slurm_records import SlurmStateError
from dispatchlab.live.twin import build_twin


def _vnode(state: str, cpus: int = 2) -> dict[str, Any]:
    return {"Mom": "pbshost", "state": state, "resources_available": {"ncpus": cpus}}


def _job(state: str, ncpus: int, *, vnodes: str = "", walltime: str = "00:10:00",
         stime: str = "") -> dict[str, Any]:
    job: dict[str, Any] = {"Job_Name": "j", "Job_Owner": "pbsuser@pbshost", "job_state": state,
                           "queue": "workq", "ctime": "Mon Dec  7 20:33:51 2026",
                           "qtime": "Mon Dec  7 20:33:51 2026",
                           "Resource_List": {"ncpus": ncpus, "walltime": walltime}}
    if vnodes:
        job["exec_vnode"] = vnodes
    if stime:
        job["stime"] = stime
    return job


def _docs() -> tuple[dict[str, Any], dict[str, Any]]:
    nodes = {"nodes": {"pbshost": _vnode("free", 0), "vnode1": _vnode("job-busy"),
                       "vnode2": _vnode("free"), "vnode3": _vnode("offline"),
                       "vnode4": _vnode("free")}}
    jobs = {"Jobs": {
        "1.pbshost": _job("R", 3, vnodes="(vnode1:ncpus=2)+(vnode2:ncpus=1)",
                          stime="Mon Dec  7 20:34:00 2026"),
        "2.pbshost": _job("Q", 2), "3.pbshost": _job("H", 1),
        "4.pbshost": _job("E", 1, vnodes="(vnode3:ncpus=1)", stime="Mon Dec  7 20:34:00 2026")}}
    return jobs, nodes


def test_snapshot_maps_states_allocations_and_the_adapters_jobs() -> None:
    jobs, nodes = _docs()
    snap = pbs_snapshot(1_796_676_000, jobs, nodes, "workq")
    assert [n.name for n in snap.nodes] == ["vnode1", "vnode2", "vnode3", "vnode4"]
    assert [n.usable for n in snap.nodes] == [True, True, False, True]
    table = snap.jobs
    assert table.job_id.tolist() == [1, 2, 3, 4]
    assert table.user_held.tolist() == [False, True, False, False]  # only Q waits for us
    assert table.running.tolist() == [True, False, False, True]  # E still holds CPUs
    assert table.time_limit.tolist() == [600] * 4
    assert table.record(0).alloc == (("vnode1", 2), ("vnode2", 1))
    assert free_cpus(snap) == {"vnode1": 0, "vnode2": 1, "vnode4": 2}


def test_twin_waits_the_queued_job_and_closes_the_offline_vnode_with_a_job() -> None:
    jobs, nodes = _docs()
    twin = build_twin(pbs_snapshot(1_796_676_000, jobs, nodes, "workq"), "workq")
    assert [twin.slurm_id(j) for j in twin.waiting] == [2]
    assert twin.closed == [2]  # vnode3: offline with job 4 on it, takes no new job
    assert 3 in twin.skipped  # held (H): not the adapter's


def test_field_conversions() -> None:
    assert job_number("12.pbshost") == 12
    assert job_number("12[3].pbshost") == 12
    assert duration("01:02:03", "w") == 3723
    for text in ("Mon Dec  7 20:33:51 2026", "Sun Mar 29 03:30:00 2026",
                 "Wed Jan 31 23:59:59 2024"):
        assert pbs_time(text, "t") == int(time.mktime(time.strptime(text, "%a %b %d %H:%M:%S %Y")))
    assert pbs_time("1796675631", "t") == 1796675631
    with pytest.raises(SlurmStateError, match="stime: not a time"):
        pbs_time("yesterday", "stime")
    assert duration(None, "w") == -1
    assert exec_vnode("(vnode1:ncpus=2:mem=1gb)+(vnode3:ncpus=1)+(vnode1:ncpus=1)") == [
        ("vnode1", 3), ("vnode3", 1)]
    assert exec_vnode_text([("vnode1", 2), ("vnode3", 1)]) == "(vnode1:ncpus=2)+(vnode3:ncpus=1)"
    assert exec_vnode("(vnode2:ncpus=1+vnode4:ncpus=1)") == [("vnode2", 1), ("vnode4", 1)]
    assert select_chunks("3:ncpus=1") == [1, 1, 1]
    assert select_chunks("2:ncpus=2+1:mem=1gb") == [2, 2, 1]
    hosts = {"v1": "h1", "v2": "h1", "v3": "h2"}
    assert exec_vnode_text([("v1", 2), ("v2", 1)], [1, 1, 1], hosts) == (
        "(v1:ncpus=1)+(v1:ncpus=1)+(v2:ncpus=1)")
    assert exec_vnode_text([("v1", 2), ("v2", 1)], [3], hosts) == "(v1:ncpus=2+v2:ncpus=1)"
    with pytest.raises(ValueError, match="span hosts"):
        exec_vnode_text([("v2", 1), ("v3", 1)], [2], hosts)
    with pytest.raises(ValueError, match="ask 4"):
        exec_vnode_text([("v2", 1), ("v3", 1)], [4], hosts)
    with pytest.raises(SlurmStateError, match=r"job id .x\.pbshost."):
        job_number("x.pbshost")
    with pytest.raises(SlurmStateError, match="walltime"):
        duration("ten minutes", "walltime")


def test_start_beyond_a_vnodes_free_cpus_is_refused_before_qrun() -> None:
    jobs, nodes = _docs()
    client = PbsClient(prefix=["/nonexistent/qrun-never-called"])
    client.last = snap = pbs_snapshot(1_796_676_000, jobs, nodes, "workq")
    client.free = free_cpus(snap)
    with pytest.raises(PbsCommandError, match="start refused: vnode2 has 1 free CPU"):
        client.start(2, ["vnode2"], [2])
    with pytest.raises(PbsCommandError, match="start refused: vnode3 has 0"):
        client.start(2, ["vnode3"], [1])  # offline
    with pytest.raises(PbsCommandError, match="No such file"):  # allowed: qrun is run
        client.start(2, ["vnode4"], [2])


def test_a_synthetic_pbs_state_converts_as_its_slurm_twin() -> None:
    from dispatchlab.live.slurm_state import snapshot
    from dispatchlab.live.synthetic_state import synthetic_docs, synthetic_pbs_docs

    qstat, pbsnodes = synthetic_pbs_docs(40, 12, 30, cpus=8, seed=3)
    squeue, sinfo = synthetic_docs(40, 12, 30, cpus=8, seed=3)
    pbs = build_twin(pbs_snapshot(1_800_000_000, qstat, pbsnodes, "main"), "main")
    slurm = build_twin(snapshot(1_800_000_000, squeue, sinfo), "main")
    assert pbs.workload.job_id.tolist() == slurm.workload.job_id.tolist()
    assert pbs.workload.units.tolist() == slurm.workload.units.tolist()
    assert pbs.workload.walltime.tolist() == slurm.workload.walltime.tolist()
    assert pbs.workload.submit.tolist() == slurm.workload.submit.tolist()
    assert [(p.job, p.nodes.tolist()) for p in pbs.placed] == [
        (p.job, p.nodes.tolist()) for p in slurm.placed]
    assert pbs.waiting == slurm.waiting


def test_a_malformed_job_is_named_with_its_field() -> None:
    jobs, nodes = _docs()
    jobs["Jobs"]["1.pbshost"]["stime"] = "soon"
    with pytest.raises(SlurmStateError, match=r"qstat: job 1\.pbshost: field stime: not a time"):
        pbs_snapshot(1_796_676_000, jobs, nodes, "workq")
    jobs, _ = _docs()
    del jobs["Jobs"]["2.pbshost"]["job_state"]
    with pytest.raises(SlurmStateError, match=r"job 2\.pbshost: no field 'job_state'"):
        pbs_snapshot(1_796_676_000, jobs, nodes, "workq")
    jobs, _ = _docs()
    jobs["Jobs"]["3.pbshost"]["Resource_List"]["ncpus"] = "many"
    with pytest.raises(SlurmStateError, match=r"job 3\.pbshost: invalid literal"):
        pbs_snapshot(1_796_676_000, jobs, nodes, "workq")
