"""The columnar conversion (job columns, array-built twin, allocations reused between
polls) gives exactly the twin of the record-based one it replaced, on random states with
down, drained and draining nodes, running jobs of several partitions, and pending jobs
held, released (pinned to nodes) or Slurm's own; in both Slurm JSON shapes."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatchlab.dispatchers.registry import get_dispatcher
from dispatchlab.engine.decisions import Start
from dispatchlab.live.slurm_state import SlurmStateError, parse_squeue, snapshot
from dispatchlab.live.twin import Twin, build_twin
from tests.live.record_conversion import parse_squeue as record_parse_squeue
from tests.live.record_conversion import record_snapshot, record_twin

NOW = 1_800_000_000
NODE_STATES = ["idle", "mixed", "allocated", "down", "idle+drain", "mixed+drain"]
USERS = ["ann", "bob", "", None, "-"]  # a missing name counts as "-"


def _num(value: int, new_shape: bool) -> Any:
    return {"set": True, "infinite": False, "number": value} if new_shape else value


def random_state(seed: int) -> tuple[dict[str, Any], dict[str, Any], int]:
    """``(squeue, sinfo, cpus per node)`` of a random small machine (node names out of
    natural order, some of another partition)."""
    rng = np.random.default_rng(seed)
    new_shape = bool(rng.integers(0, 2))  # Slurm 23.02+: wrapped numbers, state lists
    n_nodes, cpus = int(rng.integers(2, 13)), int(rng.integers(1, 9))
    names = [f"n{k + 1}" for k in range(n_nodes)]
    order = rng.permutation(n_nodes)
    nodes = []
    for k in order.tolist():
        state = str(rng.choice(NODE_STATES))
        base, _, flag = state.partition("+")
        nodes.append({"name": names[k], "cpus": _num(cpus, new_shape),
                      "state": [base.upper()] if new_shape else base,
                      "state_flags": [flag.upper()] if flag else [],
                      "partitions": ["main"] if k == 0 or rng.random() < 0.85 else ["other"]})
    free = {n: cpus for n in names}
    jobs = []
    for jid in range(1, int(rng.integers(0, 40)) + 1):
        kind = rng.choice(["running", "held", "released", "own", "other"])
        limit = int(rng.choice([1, 5, 30, 0xFFFFFFFF]))
        user = USERS[int(rng.integers(0, len(USERS)))]
        job: dict[str, Any] = {
            "job_id": jid, "partition": "main" if kind != "other" else "other",
            "user_name": user, "submit_time": NOW - int(rng.integers(0, 5000)),
            "time_limit": limit, "cpus": int(rng.integers(1, 2 * cpus + 1)),
            "start_time": 0, "end_time": 0, "job_resources": None,
            "state_reason": "Priority", "priority": int(rng.integers(0, 100)),
            "required_nodes": ""}
        state = "PENDING"
        if kind == "running":
            hosts = [n for n in rng.permutation(names).tolist()[:int(rng.integers(1, 4))]
                     if free[n] > 0]
            if not hosts:
                continue
            alloc = []
            for n in hosts:
                c = int(rng.integers(1, free[n] + 1))
                free[n] -= c
                alloc.append((n, c))
            state = str(rng.choice(["RUNNING", "COMPLETING", "SUSPENDED"]))
            start = NOW - int(rng.integers(0, 4000))
            job.update(cpus=sum(c for _, c in alloc), start_time=start,
                       end_time=start + 60 * limit, state_reason="None",
                       job_resources={"allocated_nodes": [
                           {"nodename": n, "cpus": c} if new_shape else
                           {"nodename": n, "sockets": {str(s): {"cores": {"0": "allocated"}}
                                                       for s in range(c)}}
                           for n, c in alloc]})
        elif kind == "held":
            job["state_reason"] = "JobHeldUser"
        elif kind == "released":
            job["required_nodes"] = f"n[{int(rng.integers(1, n_nodes + 1))}-{n_nodes}]"
            job["cpus"] = int(rng.integers(1, cpus + 1))
        if new_shape:
            for key in ("submit_time", "time_limit", "start_time", "end_time", "priority"):
                job[key] = (_num(job[key], True) if job[key] != 0xFFFFFFFF
                            else {"set": True, "infinite": True, "number": 0})
        job["job_state"] = [state] if new_shape else state
        jobs.append(job)
    return {"jobs": jobs}, {"nodes": nodes}, cpus


def assert_same_twin(new: Twin, old: Twin) -> None:
    assert new.platform.node_names == old.platform.node_names
    assert np.array_equal(new.platform.capacity, old.platform.capacity)
    assert (new.origin, new.now) == (old.origin, old.now)
    for col in ("job_id", "submit", "walltime", "runtime", "units", "user", "queue"):
        a, b = getattr(new.workload, col), getattr(old.workload, col)
        assert np.array_equal(a, b), col
    assert new.workload.users == old.workload.users
    assert [(p.job, p.start, p.nodes.tolist(), p.counts.tolist()) for p in new.placed] == \
        [(p.job, p.start, p.nodes.tolist(), p.counts.tolist()) for p in old.placed]
    assert (new.down, new.closed, new.waiting) == (old.down, old.closed, old.waiting)
    assert new.index == old.index
    assert list(new.skipped.items()) == list(old.skipped.items())


def _starts(twin: Twin) -> list[tuple[int, list[int], list[int]]]:
    _, decisions = twin.decide(get_dispatcher("easy"))
    return [(d.job, d.nodes.tolist(), d.counts.tolist()) for d in decisions
            if isinstance(d, Start)]


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), every_pending=st.booleans())
def test_columnar_twin_equals_the_record_based_one(seed: int, every_pending: bool) -> None:
    squeue, sinfo, _ = random_state(seed)
    old = record_twin(record_snapshot(NOW, squeue, sinfo), "main", every_pending=every_pending)
    snap = snapshot(NOW, squeue, sinfo)
    new = build_twin(snap, "main", every_pending=every_pending)
    assert_same_twin(new, old)
    assert parse_squeue(squeue) == record_parse_squeue(squeue)
    assert _starts(new) == _starts(old)
    # the next poll of the same state reuses the allocations: the same twin
    again = build_twin(snapshot(NOW, squeue, sinfo, previous=snap), "main",
                       every_pending=every_pending)
    assert_same_twin(again, old)


def test_a_changed_allocation_is_not_reused() -> None:
    """A job with the same id, start and CPUs on other nodes (or another layout) is read
    again, not taken from the previous poll."""
    def running(nodes: list[tuple[str, int]]) -> dict[str, Any]:
        return {"jobs": [{"job_id": 1, "job_state": "RUNNING", "partition": "main",
                          "user_name": "ann", "submit_time": NOW - 10, "time_limit": 5,
                          "cpus": 2, "start_time": NOW - 5, "end_time": NOW + 295,
                          "job_resources": {"allocated_nodes": [
                              {"nodename": n, "cpus": c} for n, c in nodes]},
                          "state_reason": "None", "priority": 1, "required_nodes": ""}]}

    nodes = {"nodes": [{"name": f"n{k}", "cpus": 4, "state": "mixed", "state_flags": [],
                        "partitions": ["main"]} for k in (1, 2, 3)]}
    first = snapshot(NOW, running([("n1", 1), ("n2", 1)]), nodes)
    moved = snapshot(NOW, running([("n2", 1), ("n3", 1)]), nodes, previous=first)
    assert moved.jobs.record(0).alloc == (("n2", 1), ("n3", 1))
    same = snapshot(NOW, running([("n1", 1), ("n2", 1)]), nodes, previous=moved)
    assert same.jobs.record(0).alloc == (("n1", 1), ("n2", 1))


@pytest.mark.parametrize(("job", "message"), [
    ({"job_state": "PENDING"}, "a job has no field 'job_id'"),
    ({"job_id": 1}, "a job has no field 'job_state'"),
    ({"job_id": 1, "job_state": "PENDING", "time_limit": "soon"},
     "field 'time_limit': not a number: 'soon'"),
    ({"job_id": {"set": True, "number": 2}, "job_state": ["PENDING"], "cpus": [1, 2]},
     "field 'cpus': not a number"),
])
def test_malformed_jobs_are_named(job: dict[str, Any], message: str) -> None:
    good = {"job_id": 9, "job_state": "RUNNING"}
    with pytest.raises(SlurmStateError, match=re.escape(message)):
        snapshot(NOW, {"jobs": [good, job]}, {"nodes": []})


@pytest.mark.parametrize("limits", [
    [5, 0xFFFFFFFF, 0xFFFFFFFE],  # Slurm 22.05: plain numbers only (the C-speed path)
    [{"set": True, "infinite": False, "number": 5}, {"set": False, "infinite": True,
     "number": 0}, {"set": False, "infinite": False, "number": 0}],  # 23.02+
    [5, {"set": True, "infinite": False, "number": 0xFFFFFFFF}, None],  # mixed and hostile
    [5, 0xFFFFFFFFFFFFFFFF, {"set": True, "infinite": False, "number": 0xFFFFFFFE}],
])
def test_unlimited_and_unset_time_limits_are_unlimited(limits: list[Any]) -> None:
    """Slurm's INFINITE and NO_VAL (plain, 64-bit, inside an object, or as flags) give -1:
    a pending job without a limit of its own gets the partition's, unknown here."""
    jobs = [{"job_id": k + 1, "job_state": "PENDING", "partition": "main",
             "user_name": "ann", "submit_time": NOW - 10, "time_limit": limit, "cpus": 1,
             "start_time": 0, "end_time": 0, "job_resources": None,
             "state_reason": "Priority", "priority": 1, "required_nodes": ""}
            for k, limit in enumerate(limits)]
    state = snapshot(NOW, {"jobs": jobs}, {"nodes": []})
    assert state.jobs.time_limit.tolist() == [300, -1, -1]
