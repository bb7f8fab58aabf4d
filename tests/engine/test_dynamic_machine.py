"""Hand-computed schedules for a machine that changes while it runs: nodes leaving and
coming back, power caps, power states, reconfiguration, kills and requeues, stale ends."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from dispatchlab import Platform, Workload, simulate
from dispatchlab.dispatchers.base import BaseDispatcher
from dispatchlab.dispatchers.registry import get_dispatcher
from dispatchlab.engine.decisions import (
    Decision,
    Kill,
    PowerOff,
    PowerOn,
    Reconfigure,
    Requeue,
    Start,
    WakeAt,
)
from dispatchlab.engine.events import Events
from dispatchlab.engine.recorder import ABORTED, COMPLETED, RECONFIGURED
from dispatchlab.engine.scenario import Change, Scenario
from dispatchlab.engine.simulator import Simulator
from dispatchlab.engine.state import SystemView
from dispatchlab.errors import ConfigError, InvalidDecision
from dispatchlab.metrics.audit import AuditError, audit
from dispatchlab.platform.node_states import BOOTING, OFF, ON

ARR = np.array


def jobs(*rows: tuple[int, int, int, int], **extra: Any) -> Workload:
    """Jobs as (submit, runtime, walltime, units), 1 core per unit."""
    sub, run, wall, units = zip(*rows, strict=True)
    return Workload.from_columns(submit=list(sub), runtime=list(run), walltime=list(wall),
                                 units=list(units), req={"cores": [1] * len(rows)}, **extra)


def segments(res: Any) -> list[tuple[int, int, int, list[int], int]]:
    """(job id, t0, t1, nodes, outcome) per segment, in log order."""
    rec = res.recorder
    seg = rec.segments
    ids = rec.workload.job_id
    return [(int(ids[seg.job[k]]), int(seg.t0[k]), int(seg.t1[k]),
             seg.nodes[seg.offsets[k]:seg.offsets[k + 1]].tolist(), int(seg.outcome[k]))
            for k in range(len(seg))]


# ---- nodes that leave -----------------------------------------------------------------------

def test_node_removed_aborts_its_job_which_requeues_and_restarts() -> None:
    # Two 1-core nodes. Job 1 (100 s) on n0, job 2 (100 s) on n1 from t=0. n1 leaves at 30:
    # job 2 is aborted and requeued (it loses 30 s). n1 returns at 50: job 2 restarts from
    # zero there and ends at 150. Job 3 (submitted at 40, 10 s) waits for a node: n1 at 50
    # goes to job 2 first (FIFO by submit time: job 2 was submitted at 0).
    wl = jobs((0, 100, 200, 1), (0, 100, 200, 1), (40, 10, 20, 1))
    scen = Scenario([Change(30, "node_down", target="n1"), Change(50, "node_up", target="n1")])
    res = simulate(wl, "nodes=2,cores=1", "fifo", scenario=scen)
    assert segments(res) == [(1, 0, 100, [0], COMPLETED), (2, 0, 30, [1], ABORTED),
                             (2, 50, 150, [1], COMPLETED), (3, 100, 110, [0], COMPLETED)]
    j = res.jobs.set_index("job_id")
    assert j.loc[2, "start"] == 0 and j.loc[2, "last_start"] == 50 and j.loc[2, "end"] == 150
    assert j.loc[2, "restarts"] == 1 and j.loc[2, "lost_work"] == 30  # 30 s × 1 core
    assert j.loc[2, "outcome"] == "completed"
    assert res.summary["aborted_segments"] == 1 and res.summary["lost_work_core_seconds"] == 30
    # utilization over alive capacity: busy 100 + 30 + 100 + 10 = 240 core-s; alive
    # 2 × 150 − 20 (n1 down 30..50) = 280 core-s, from t=0 to the last end 150
    assert res.summary["utilization"] == pytest.approx(240 / 280)
    ts = res.timeseries
    assert ts.loc[ts["time"] == 30, "alive_cores"].item() == 1


def test_checkpointed_job_loses_only_the_work_since_its_last_checkpoint() -> None:
    # One node. Job 1: 100 s of work, checkpoint every 20 s. The node leaves at 55 and comes
    # back at 60: checkpoints at 20 and 40 saved 40 s, so 15 s are lost and 60 s remain.
    wl = jobs((0, 100, 500, 1), checkpoint=[20])
    scen = Scenario([Change(55, "node_down", target="n0"), Change(60, "node_up", target="n0")])
    res = simulate(wl, "nodes=1,cores=1", "fifo", scenario=scen)
    assert segments(res) == [(1, 0, 55, [0], ABORTED), (1, 60, 120, [0], COMPLETED)]
    assert res.jobs["lost_work"].tolist() == [15]


def test_abort_policy_fail_ends_the_job() -> None:
    wl = jobs((0, 100, 200, 1))
    scen = Scenario([Change(30, "node_down", target="n0"), Change(40, "node_up", target="n0")])
    res = simulate(wl, "nodes=1,cores=1", "fifo", scenario=scen, on_abort="fail")
    assert segments(res) == [(1, 0, 30, [0], ABORTED)]
    assert res.jobs["outcome"].tolist() == ["aborted"] and not res.jobs["rejected"].any()
    assert res.summary["failed"] == 1


def test_alive_count_removes_the_highest_indices_by_default() -> None:
    # Four nodes, four 100 s jobs on n0..n3; alive_nodes drops to 2 at 10: n3 and n2 leave,
    # their jobs wait until the count is back to 4 at 50 and restart on n2, n3.
    wl = jobs(*[(0, 100, 200, 1)] * 4)
    scen = Scenario([Change(10, "alive_nodes", 2), Change(50, "alive_nodes", 4)])
    res = simulate(wl, "nodes=4,cores=1", "fifo", scenario=scen)
    assert sorted(segments(res)) == [
        (1, 0, 100, [0], COMPLETED), (2, 0, 100, [1], COMPLETED), (3, 0, 10, [2], ABORTED),
        (3, 50, 150, [2], COMPLETED), (4, 0, 10, [3], ABORTED), (4, 50, 150, [3], COMPLETED)]


class Riskless(BaseDispatcher):
    """FIFO first-fit that sends the lowest-index nodes away first."""

    name = "riskless"

    def decide(self, view: SystemView, events: Events) -> Sequence[Decision]:
        out: list[Decision] = []
        free = view.free.copy()
        for j in view.queue:
            n = np.flatnonzero(free[:, 0] >= 1)
            if not len(n):
                break
            free[n[0], 0] -= 1
            out.append(Start(j, ARR([n[0]]), ARR([1])))
        return out

    def choose_nodes(self, view: SystemView, candidates: np.ndarray, count: int,
                     leaving: bool) -> list[int]:
        return [int(x) for x in candidates[:count]]


def test_dispatcher_chooses_which_nodes_leave() -> None:
    wl = jobs((0, 100, 200, 1), (0, 100, 200, 1))
    scen = Scenario([Change(10, "alive_nodes", 1)])
    res = simulate(wl, "nodes=2,cores=1", Riskless(), scenario=scen)
    assert segments(res)[:2] == [(1, 0, 10, [0], ABORTED), (2, 0, 100, [1], COMPLETED)]
    assert segments(res)[2] == (1, 100, 200, [1], COMPLETED)


# ---- power ----------------------------------------------------------------------------------

def test_a_falling_power_cap_forbids_a_start_until_enough_power_frees() -> None:
    # Four 1-core nodes; jobs draw 100 W each. Cap 300 W, then 150 W from t=5. Jobs 1-3 start
    # at 0 (300 W). Job 4 arrives at 10: 300 W run under a 150 W cap, no start. Job 1 ends at
    # 20 (200 W), job 2 at 30 (100 W): job 4 starts at 30 (200 W > 150: not yet)… job 3 ends
    # at 40 → 0 W in use, job 4 starts at 40.
    wl = jobs((0, 20, 100, 1), (0, 30, 100, 1), (0, 40, 100, 1), (10, 10, 100, 1),
              power=[100.0] * 4)
    scen = Scenario([Change(5, "power_cap", 150.0)])
    res = simulate(wl, "nodes=4,cores=1", "fifo", power_cap=300, scenario=scen)
    assert res.jobs["start"].tolist() == [0, 0, 0, 40]
    assert res.summary["power"]["peak_w"] == 300
    assert res.summary["power"]["over_cap_seconds"] == 25  # 300 W over 150 W from 5 to 30


def test_power_cap_blocks_a_start_in_a_fixed_budget() -> None:
    wl = jobs((0, 10, 100, 1), (0, 10, 100, 1), power=[60.0, 60.0])
    res = simulate(wl, "nodes=2,cores=1", "fifo", power_cap=100)
    assert res.jobs["start"].tolist() == [0, 10]


class Greedy(BaseDispatcher):
    """Starts every queued job on node 0 regardless of power (to test validation)."""

    name = "greedy"

    def decide(self, view: SystemView, events: Events) -> Sequence[Decision]:
        return [Start(j, ARR([0]), ARR([1])) for j in view.queue]


def test_engine_refuses_a_start_over_the_cap() -> None:
    wl = jobs((0, 10, 100, 1), (0, 10, 100, 1), power=[60.0, 60.0])
    with pytest.raises(InvalidDecision, match=r"job 2 needs 60 W: power cap 100 W, 60 W in use"):
        simulate(wl, "nodes=1,cores=2", Greedy(), power_cap=100)


# ---- power states ---------------------------------------------------------------------------

class Scripted(BaseDispatcher):
    """Returns the decisions scripted for each decision time, then FIFO on usable nodes."""

    name = "scripted"

    def __init__(self, script: dict[int, list[Decision]]) -> None:
        self.script = script
        self.seen: list[tuple[int, list[int], list[int]]] = []

    def decide(self, view: SystemView, events: Events) -> Sequence[Decision]:
        self.seen.append((view.now, list(events.nodes), view.node_state.tolist()))
        out = list(self.script.get(view.now, []))
        free = view.free[:, 0].copy()
        for j in view.queue:
            n = np.flatnonzero(free >= 1)
            if not len(n):
                break
            free[n[0]] -= 1
            out.append(Start(j, ARR([n[0]]), ARR([1])))
        return out


def test_powered_on_node_is_usable_only_after_its_boot_delay() -> None:
    # n0 runs job 1 (0..100). n1 is switched off at 0 (shutdown 5 s) and on at 20 (boot 30 s):
    # job 2, submitted at 25, starts on n1 only at 50.
    plat = Platform.homogeneous(2, {"cores": 1})
    plat = Platform(plat.resources, plat.capacity, plat.node_names, boot_time=30,
                    shutdown_time=5)
    wl = jobs((0, 100, 200, 1), (25, 10, 100, 1))
    disp = Scripted({0: [PowerOff((1,))], 20: [PowerOn((1,))]})
    res = simulate(wl, plat, disp, scenario=Scenario([Change(20, "signal", 1.0, "tick")]))
    assert segments(res) == [(1, 0, 100, [0], COMPLETED), (2, 50, 60, [1], COMPLETED)]
    log = np.frombuffer(res.recorder.node_log, dtype=np.int64).reshape(-1, 3).tolist()
    assert log == [[0, 1, 3], [5, 1, OFF], [20, 1, BOOTING], [50, 1, ON]]
    boot_done = [s for s in disp.seen if s[0] == 50]
    assert boot_done and boot_done[0][1] == [1]  # the dispatcher is told n1 is up


def test_power_off_and_on_are_validated() -> None:
    wl = jobs((0, 100, 200, 1))
    with pytest.raises(InvalidDecision, match="cannot power off node n0: jobs run on it"):
        simulate(wl, "nodes=1,cores=1", _after_start(PowerOff((0,))))
    with pytest.raises(InvalidDecision, match="cannot power on node n0: it is on"):
        simulate(wl, "nodes=1,cores=1", Scripted({0: [PowerOn((0,))]}))


def _after_start(d: Decision) -> BaseDispatcher:
    class After(Scripted):
        def decide(self, view: SystemView, events: Events) -> Sequence[Decision]:
            return [*super().decide(view, events), d]

    return After({})


def test_start_on_a_node_that_is_off_names_its_state() -> None:
    wl = jobs((0, 10, 100, 1))

    class Blind(BaseDispatcher):
        name = "blind"

        def decide(self, view: SystemView, events: Events) -> Sequence[Decision]:
            return [PowerOff((0,)), *(Start(j, ARR([0]), ARR([1])) for j in view.queue)]

    with pytest.raises(InvalidDecision, match="node n0 is off, not usable"):
        simulate(wl, "nodes=1,cores=1", Blind())


# ---- reconfiguration, kills, requeues, stale ends -------------------------------------------

class Resizer(BaseDispatcher):
    """Starts job 0 on 2 of 4 nodes, moves it to 4 nodes at t=10."""

    name = "resizer"

    def decide(self, view: SystemView, events: Events) -> Sequence[Decision]:
        if view.now == 0:
            return [Start(0, ARR([0, 1]), ARR([1, 1])), WakeAt(10)]
        if view.now == 10:
            return [Reconfigure(0, ARR([0, 1, 2, 3]), ARR([1, 1, 1, 1]))]
        return []


def test_reconfiguration_moves_the_end_as_the_speedup_model_says() -> None:
    # Job 0: 100 s on 2 units, α = 1. From 0 to 10 it does 10 of 100 reference s; on 4
    # units the remaining 90 s take 90 · (2/4)^1 = 45 s, after a pause (D/m)(ceil(m/n) − 1)
    # = (8/4)(2 − 1) = 2 s: it ends at 10 + 2 + 45 = 57.
    wl = jobs((0, 100, 1000, 2), min_units=[1], max_units=[4], alpha=[1.0], data=[8.0])
    res = simulate(wl, "nodes=4,cores=1", Resizer())
    assert segments(res) == [(1, 0, 10, [0, 1], RECONFIGURED),
                             (1, 10, 57, [0, 1, 2, 3], COMPLETED)]
    j = res.jobs.iloc[0]
    assert (j["start"], j["end"], j["restarts"], j["units_used"]) == (0, 57, 0, 4)


def test_stale_end_entries_never_release_anything() -> None:
    # Without the reconfiguration job 0 would end at 100; that entry is stale after t=10.
    # Job 1 (1 unit, submitted at 60) must wait for job 0's real end at 57 — it fits at 60 —
    # and nothing is released at 100 (the audit would catch a double release).
    wl = jobs((0, 100, 1000, 2), (60, 50, 100, 4), min_units=[1, 4], max_units=[4, 4],
              alpha=[1.0, 1.0], data=[8.0, 0.0])

    class ResizeThenFifo(Resizer):
        def decide(self, view: SystemView, events: Events) -> Sequence[Decision]:
            out = list(super().decide(view, events))
            if 1 in view.queue and view.free[:, 0].sum() >= 4:
                out.append(Start(1, ARR([0, 1, 2, 3]), ARR([1, 1, 1, 1])))
            return out

    res = simulate(wl, "nodes=4,cores=1", ResizeThenFifo())
    assert res.jobs["start"].tolist() == [0, 60] and res.jobs["end"].tolist() == [57, 110]
    assert 100 not in res.recorder.decision_at.tolist()  # the stale entry made no event


def test_kill_and_requeue_decisions() -> None:
    wl = jobs((0, 100, 200, 1), (0, 100, 200, 1))
    disp = Scripted({10: [Kill(0), Requeue(1), Start(1, ARR([0]), ARR([1]))]})
    res = simulate(wl, "nodes=2,cores=1", disp,
                   scenario=Scenario([Change(10, "signal", 0.0, "tick")]))
    # job 1 is cancelled at 10; job 2 is requeued at 10 and restarts at 10 from zero
    assert segments(res) == [(1, 0, 10, [0], 5), (2, 0, 10, [1], 4), (2, 10, 110, [0], 0)]
    assert res.jobs["outcome"].tolist() == ["cancelled", "completed"]


def test_reconfigure_outside_the_range_is_refused() -> None:
    wl = jobs((0, 100, 1000, 2), min_units=[2], max_units=[3])
    with pytest.raises(InvalidDecision, match="malleable job 1 runs on 2–3 units"):
        simulate(wl, "nodes=4,cores=1", Resizer())


# ---- the audit on corrupted records ---------------------------------------------------------

def test_audit_fails_on_a_node_used_while_down() -> None:
    wl = jobs((0, 100, 200, 1), (0, 100, 200, 1))
    scen = Scenario([Change(30, "node_down", target="n1"), Change(50, "node_up", target="n1")])
    res = simulate(wl, "nodes=2,cores=1", "fifo", scenario=scen)
    rec = res.recorder
    audit(rec)
    seg = rec.segments
    k = int(np.flatnonzero(seg.outcome == ABORTED)[0])
    seg.t1[k] = 60  # the aborted segment now runs on through the node's down time
    with pytest.raises(AuditError, match="node n1 became down at t=30 while jobs used 1 cores"):
        audit(rec)
    seg.t1[k] = 30
    seg.t0[k + 1] = 40  # the restart now begins while n1 is still down
    with pytest.raises(AuditError, match="started at 40 on node n1, which was down"):
        audit(rec)


def test_audit_catches_overcommit_double_start_and_late_kill() -> None:
    wl = jobs((0, 100, 200, 1), (0, 100, 200, 1), (0, 300, 50, 1))
    res = simulate(wl, "nodes=3,cores=1", "fifo")
    rec = res.recorder
    seg = rec.segments
    audit(rec)
    saved = seg.nodes.copy()
    seg.nodes[:] = 0  # every job on n0: overcommit
    with pytest.raises(AuditError, match="node n0 uses 2 cores > capacity 1"):
        audit(rec)
    seg.nodes[:] = saved
    seg.job[1] = seg.job[0]  # job 1 started twice, job 2 never
    with pytest.raises(AuditError):
        audit(rec)
    seg.job[1] = 1
    seg.t1[2] += 5  # the kill at the wall-time came late
    with pytest.raises(AuditError, match=r"min\(runtime, walltime\)"):
        audit(rec)


# ---- no peeking -----------------------------------------------------------------------------

class Peeker(BaseDispatcher):
    """Tries to read what a real scheduler cannot know."""

    name = "peeker"

    def __init__(self, what: str) -> None:
        self.what = what

    def decide(self, view: SystemView, events: Events) -> Sequence[Decision]:
        if self.what == "runtime":
            view.jobs.runtime  # noqa: B018
        elif self.what == "future":
            view.jobs.submit[view.jobs.known]
        elif self.what == "end":
            for run in view.running.values():
                run.end  # type: ignore[attr-defined]  # noqa: B018
        return [Start(j, ARR([0]), ARR([1])) for j in view.queue if not view.running]


def test_a_dispatcher_cannot_read_actual_run_times_or_the_future() -> None:
    wl = jobs((0, 10, 100, 1), (5, 10, 100, 1))
    with pytest.raises(AttributeError, match="actual run times are hidden"):
        simulate(wl, "nodes=1,cores=1", Peeker("runtime"))
    with pytest.raises(IndexError):
        simulate(wl, "nodes=1,cores=1", Peeker("future"))
    with pytest.raises(AttributeError):
        simulate(wl, "nodes=1,cores=1", Peeker("end"))
    ok = simulate(wl, "nodes=1,cores=1", Peeker("none"))
    assert "oracle" not in ok.summary


def test_oracle_estimates_are_declared_and_recorded() -> None:
    wl = jobs((0, 10, 100, 1), (5, 10, 100, 1))
    res = simulate(wl, "nodes=1,cores=1", "order=fifo,select=easy,estimate=real")
    assert res.summary["oracle"] is True and res.config["engine_settings"]["oracle"] is True


# ---- loop API, compiled whitelist, wall-time kills -------------------------------------------

def test_step_and_run_until() -> None:
    wl = jobs((0, 10, 100, 1), (5, 10, 100, 1), (30, 10, 100, 1))
    sim = Simulator(wl, Platform.homogeneous(1, {"cores": 1}), get_dispatcher("fifo"))
    sim.run(until=12)
    assert sim.view.now == 10 and list(sim.view.running) == [1]  # job 2 started at 10
    sim.step()
    assert sim.view.now == 20 and not sim.view.running
    rec = sim.run()
    assert rec.start_time.tolist() == [0, 10, 30]


def test_scenario_runs_take_the_general_loop() -> None:
    """Except scenarios of nodes leaving and coming back, of power caps, or of
    informational rows on a fixed machine."""
    wl = jobs((0, 10, 100, 1))
    plain = simulate(wl, "nodes=1,cores=1", "fifo")
    assert plain.summary["loop"] == "compiled"
    scen = simulate(wl, "nodes=1,cores=1", "fifo",
                    scenario=Scenario([Change(5, "temperature", 20.0)]))
    assert scen.summary["loop"] == "compiled"
    mixed = Scenario([Change(5, "temperature", 20.0), Change(6, "alive_nodes", 1.0)])
    assert simulate(wl, "nodes=2,cores=1", "fifo", scenario=mixed).summary["loop"] == "general"
    nodes = simulate(wl, "nodes=2,cores=1", "fifo",
                     scenario=Scenario([Change(5, "alive_nodes", 1.0)]))
    assert nodes.summary["loop"] == "compiled"
    with pytest.raises(ConfigError, match=r"scenario kind.*temperature"):
        simulate(wl, "nodes=2,cores=1", "fifo", loop="compiled", scenario=mixed)


def test_without_walltime_kills_jobs_run_their_actual_time() -> None:
    wl = jobs((0, 300, 50, 1), (0, 10, 100, 1))
    kill = simulate(wl, "nodes=1,cores=1", "fifo")
    run = simulate(wl, "nodes=1,cores=1", "fifo", walltime_kill=False)
    assert kill.jobs["end"].tolist() == [50, 60] and kill.jobs["killed"].tolist() == [True, False]
    assert run.jobs["end"].tolist() == [300, 310] and not run.jobs["killed"].any()


@pytest.mark.parametrize("compiled", [False, True])
def test_both_capacity_sweeps_give_the_same_verdicts(compiled: bool) -> None:
    """The vectorised per-pair sweep (small runs) and the compiled event sweep (large ones)
    accept the same schedules and catch the same corruptions."""
    from dispatchlab.metrics.audit import _check_capacity

    wl = jobs((0, 100, 200, 1), (0, 100, 200, 1), (5, 10, 200, 1))
    scen = Scenario([Change(30, "node_down", target="n1"), Change(50, "node_up", target="n1")])
    rec = simulate(wl, "nodes=2,cores=1", "fifo", scenario=scen).recorder
    _check_capacity(rec, compiled)
    seg = rec.segments
    k = int(np.flatnonzero(seg.outcome == ABORTED)[0])
    seg.t1[k] = 60
    with pytest.raises(AuditError, match="node n1 became down at t=30 while jobs used 1 cores"):
        _check_capacity(rec, compiled)
    seg.t1[k] = 30
    seg.t0[k + 1] = 40
    with pytest.raises(AuditError, match="started at 40 on node n1, which was down"):
        _check_capacity(rec, compiled)
    seg.t0[k + 1] = 50
    seg.nodes[:] = 0
    with pytest.raises(AuditError, match="node n0 uses 2 cores > capacity 1"):
        _check_capacity(rec, compiled)


def _strict_fifo_pool(submit: list[int], run: list[int], units: list[int], cap: int
                      ) -> list[int]:
    """Starts of strict FIFO on a pool of ``cap`` interchangeable cores (reference)."""
    import heapq

    ends: list[tuple[int, int]] = []
    free, t, starts = cap, 0, []
    for s, r, u in zip(submit, run, units, strict=True):
        t = max(t, s)
        while ends and ends[0][0] <= t:
            free += heapq.heappop(ends)[1]
        while free < u:
            t = max(t, ends[0][0])
            while ends and ends[0][0] <= t:
                free += heapq.heappop(ends)[1]
        starts.append(t)
        free -= u
        heapq.heappush(ends, (t + r, u))
    return starts


def test_no_walltime_kill_on_hpc2n_runs_every_job_its_actual_time() -> None:
    from dispatchlab.workload import SwfOptions, load_swf
    from tests.conftest import shared_trace

    wl = load_swf(shared_trace("HPC2N-2002-2.2-cln.swf.gz"), SwfOptions(limit=1024))
    over = wl.runtime > wl.walltime
    assert over.sum() > 10  # the window has jobs that a wall-time kill would stop
    res = simulate(wl, "nodes=120,cores=2", "fifo", walltime_kill=False)
    ref = _strict_fifo_pool(wl.submit.tolist(), wl.runtime.tolist(), wl.units.tolist(), 240)
    assert res.jobs["start"].tolist() == ref
    assert (res.jobs["end"] - res.jobs["start"]).tolist() == wl.runtime.tolist()
    assert not res.jobs["killed"].any()
    killed = simulate(wl, "nodes=120,cores=2", "fifo")
    assert killed.jobs["killed"].sum() == over.sum()
