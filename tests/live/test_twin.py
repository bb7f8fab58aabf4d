"""Slurm's JSON → the engine's state, without a cluster."""

from __future__ import annotations

import numpy as np
import pytest

from dispatchlab.dispatchers.registry import get_dispatcher
from dispatchlab.engine.decisions import Start
from dispatchlab.live.adapter import live_dispatcher
from dispatchlab.live.slurm_state import expand_hostlist, snapshot
from dispatchlab.live.synthetic_state import synthetic_docs
from dispatchlab.live.twin import build_twin
from dispatchlab.platform.node_states import DOWN

NOW = 1_800_000_000


def _job(jid: int, state: str, cpus: int, *, reason: str = "None", nodes: tuple = (),
         required: str = "", start: int = 0, limit: int = 10) -> dict:
    return {"job_id": jid, "job_state": state, "partition": "main", "user_name": "ann",
            "submit_time": NOW - 100 + jid, "time_limit": limit, "cpus": cpus,
            "start_time": start, "end_time": start + 60 * limit if start else 0,
            "job_resources": {"allocated_nodes": [
                {"nodename": n, "sockets": {str(k): {"cores": {"0": "allocated"}}
                                            for k in range(c)}} for n, c in nodes]}
            if nodes else None, "state_reason": reason, "priority": 1,
            "required_nodes": required}


def _nodes(*states: str) -> dict:
    return {"nodes": [{"name": f"n{k + 1}", "state": s, "state_flags": [], "cpus": 4,
                       "partitions": ["main"]} for k, s in enumerate(states)]}


def test_hostlists_expand() -> None:
    assert expand_hostlist("n[1-3,7],m2") == ["n1", "n2", "n3", "n7", "m2"]
    assert expand_hostlist("c[08-10]") == ["c08", "c09", "c10"]
    assert expand_hostlist("") == []


def test_snapshot_becomes_engine_state() -> None:
    squeue = {"jobs": [
        _job(1, "RUNNING", 3, nodes=(("n1", 3),), start=NOW - 50),
        _job(2, "RUNNING", 4, nodes=(("n3", 2), ("n4", 2)), start=NOW - 20),  # n3 draining
        _job(3, "PENDING", 2, required="n4"),  # released by the adapter, not started yet
        _job(4, "PENDING", 6, reason="JobHeldUser"),  # the adapter's
        _job(5, "PENDING", 1, reason="Priority"),  # Slurm's own
    ]}
    sinfo = _nodes("mixed", "down", "mixed", "mixed")
    sinfo["nodes"][2]["state_flags"] = ["DRAIN"]
    twin = build_twin(snapshot(NOW, squeue, sinfo), "main")
    assert twin.platform.node_names == ("n1", "n2", "n3", "n4")
    assert twin.down == [1] and twin.closed == [2]
    assert [twin.slurm_id(j) for j in twin.waiting] == [4]
    assert 5 in twin.skipped
    placed = {twin.slurm_id(p.job): (p.nodes.tolist(), p.counts.tolist(), p.start)
              for p in twin.placed}
    assert twin.origin == NOW - 99 and placed[1] == ([0], [3], 49)  # since NOW - 50
    assert placed[3] == ([3], [2], twin.now)
    assert placed[-3][:2] == ([2], [2])  # blocker: n3's 2 free CPUs
    sim, decisions = twin.decide(get_dispatcher("easy"))
    assert sim.view.node_state[1] == DOWN
    # 6 CPUs: n1 has 1 free, n2 down, n3 draining, n4 0 free → cannot start now
    assert not [d for d in decisions if isinstance(d, Start)]


def test_requested_ends_are_slurm_end_times() -> None:
    squeue = {"jobs": [_job(1, "RUNNING", 4, nodes=(("n1", 4),), start=NOW - 30, limit=2),
                       _job(2, "PENDING", 4, reason="JobHeldUser")]}
    twin = build_twin(snapshot(NOW, squeue, _nodes("allocated", "idle")), "main")
    sim, decisions = twin.decide(get_dispatcher("fifo"))
    run = sim.view.running[twin.index[1]]
    assert run.requested_end + twin.origin == NOW - 30 + 120
    assert [(twin.slurm_id(d.job), twin.node_names(d.nodes)) for d in decisions
            if isinstance(d, Start)] == [(2, ["n2"])]


def test_synthetic_state_of_a_large_machine_converts() -> None:
    squeue, sinfo = synthetic_docs(200, 80, 500, seed=3)
    twin = build_twin(snapshot(NOW, squeue, sinfo), "main")
    assert twin.platform.n_nodes == 200
    assert len(twin.waiting) == 500
    assert len(twin.placed) == sum(1 for j in squeue["jobs"] if j["job_state"] == "RUNNING")


def test_predictions_band_from_the_estimators_error() -> None:
    """Walltime estimates on a history whose jobs ran 20–100 % of their request: the
    band reaches earlier than the point prediction, never later."""
    from dispatchlab.live.predict import predict
    from dispatchlab.workload.workload import Workload

    squeue = {"jobs": [_job(1, "RUNNING", 8, nodes=(("n1", 4), ("n2", 4)), start=NOW - 60,
                            limit=10),
                       _job(2, "PENDING", 8, reason="Priority", limit=5),
                       _job(3, "PENDING", 8, reason="Priority", limit=5)]}
    snap = snapshot(NOW, squeue, _nodes("allocated", "allocated"))
    rng = np.random.default_rng(0)
    wall = rng.integers(60, 600, 40)
    history = Workload.from_columns(submit=np.arange(40), walltime=wall,
                                    runtime=(wall * rng.uniform(0.2, 1.0, 40)).astype(int),
                                    units=[1] * 40, req={"cores": [1] * 40})
    preds = {p.job_id: p for p in predict(snap, "main", "easy", "walltime", history)}
    assert preds[2].predicted_start == NOW - 60 + 600  # when job 1's limit is up
    assert preds[3].predicted_start == preds[2].predicted_start + 300
    for p in preds.values():
        assert p.low < p.predicted_start == p.high and p.confidence == "80%"
    bare = {p.job_id: p for p in predict(snap, "main", "easy", "walltime")}
    assert all(p.low == p.high == p.predicted_start and p.confidence == ""
               for p in bare.values())


@pytest.mark.parametrize("spec", ["easy", "conservative", "pbs-fifo", "hcp3", "prb-power",
                                  "wfp3", "dardis70"])
def test_catalogue_dispatchers_decide_on_a_live_state(spec: str) -> None:
    """Each decides on a warm state with running jobs; the engine validated every start
    (capacity, node states) and they fill the free room."""
    squeue, sinfo = synthetic_docs(16, 2, 12, cpus=8, seed=2)
    twin = build_twin(snapshot(NOW, squeue, sinfo), "main")
    free_before = int(twin.platform.capacity.sum()) - sum(int(p.counts.sum())
                                                          for p in twin.placed)
    sim, decisions = twin.decide(live_dispatcher(spec))
    starts = [d for d in decisions if isinstance(d, Start)]
    assert starts and all(twin.index[twin.slurm_id(d.job)] in twin.waiting for d in starts)
    assert int(sim.view.free.sum()) == free_before - sum(int(d.counts.sum()) for d in starts)
