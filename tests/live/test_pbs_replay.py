"""A tiny replay on the real OpenPBS (tools/pbs-local's 4 vnodes × 2 CPUs) under the live
adapter: every job is submitted by ``qsub``, started once by the adapter, never over a
vnode's CPUs, and read back from the server's accounting log with its start and an end on
the tick grid."""

from __future__ import annotations

import io
import threading

from dispatchlab.live.adapter import JsonLog, LiveAdapter
from dispatchlab.live.pbs_client import PbsClient
from dispatchlab.live.pbs_events import PbsEvents
from dispatchlab.live.pbs_local import LocalPbs
from dispatchlab.live.pbs_submit import PbsTarget
from dispatchlab.live.replay import scaled_workload, submit_replay
from dispatchlab.simulation import simulate
from dispatchlab.workload.workload import Workload
from tests.live.pbs_jobs import starts_and_peak, wait_for


def test_a_tiny_replay_runs_every_job_once_and_reads_back_its_times(
        pbs_cluster: LocalPbs) -> None:
    tick = 2
    slice_ = Workload.from_columns(
        submit=[0, 0, 1, 2, 3], runtime=[2, 1, 3, 1, 1], walltime=[30, 30, 30, 30, 30],
        units=[2, 4, 3, 8, 1], req={"cores": [1] * 5}, job_id=[11, 12, 13, 14, 15])
    scaled = scaled_workload(slice_, 1.0, tick)
    target = PbsTarget(pbs_cluster.env(), "workq", pbs_cluster.as_user([]),
                       pbs_cluster.accounting)
    adapter = LiveAdapter(PbsClient(queue="workq", prefix=pbs_cluster.prefix()), "workq",
                          "easy", log=JsonLog(io.StringIO()))
    events = PbsEvents(pbs_cluster.prefix())
    stop = threading.Event()
    thread = threading.Thread(target=adapter.run, kwargs={
        "poll": 0.3, "stop": stop.is_set, "wake": events.wait}, daemon=True)
    try:
        assert events.install() is None
        thread.start()
        sub = submit_replay(scaled, None, "workq", hold=target.adapter_holds, target=target)
        sub.check_complete()
        ids = set(sub.ids.values())
        wait_for(lambda: ids <= set(target.realized()), 90, "every replayed job's E record")
    finally:
        stop.set()
        if thread.is_alive():
            thread.join(timeout=30)
        events.close()  # after the adapter stopped waiting on its FIFO
    done = target.realized()
    assert all(done[i].runs == 1 for i in ids)
    runs, peak = starts_and_peak(pbs_cluster)
    assert {i: runs.get(i) for i in ids} == {i: 1 for i in ids}  # each started once
    assert max(peak.values()) <= 2, peak
    started = [int(k) for c in adapter.cycles for k in c.started]
    assert sorted(j for j in started if j in ids) == sorted(ids)  # by this adapter, once
    sim = simulate(scaled, "nodes=4,cores=2", "easy").jobs.set_index("job_id")
    for trace_id, pid in sub.ids.items():
        real, planned = done[pid], sim.loc[trace_id]
        assert real.start >= sub.t0 + int(planned["submit"]) * tick
        # the job script ends its run on the tick grid of its recorded start (the server
        # records the end up to ~1 s after it: the same tick, or the next one under load)
        ticks = (real.end - sub.t0) // tick - (real.start - sub.t0) // tick
        runtime = int(planned["end"] - planned["start"])
        assert runtime <= ticks <= runtime + 1, (trace_id, real, sub.t0)
