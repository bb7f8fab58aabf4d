"""What the engine does to jobs and nodes: segments that start and stop, nodes that leave,
come back, boot and shut down. Shared by the event handlers and the decision appliers.

Every function takes the :class:`~dispatchlab.engine.simulator.Simulator` whose state it
changes; none of them validates (the appliers do, before calling them).
"""

from __future__ import annotations

from heapq import heappush
from typing import TYPE_CHECKING

import numpy as np

from dispatchlab.arrays import IntArray
from dispatchlab.engine import kernels
from dispatchlab.engine.events import END
from dispatchlab.engine.recorder import ABORTED, PREEMPTED, RECONFIGURED
from dispatchlab.engine.state import Running
from dispatchlab.platform.node_states import DOWN, ON

if TYPE_CHECKING:
    from dispatchlab.engine.simulator import Simulator

_NEVER = 1 << 62


def begin_segment(sim: Simulator, job: int, nodes: IntArray, counts: IntArray,
                  new_run: bool, pause: int = 0) -> None:
    """Job ``job`` runs from now on ``nodes`` × ``counts`` (resources already taken).

    ``new_run``: it leaves the queue now (its wall-time clock starts); otherwise it is
    reconfigured and keeps its run's start. ``pause``: seconds before its work resumes.
    """
    view = sim.view
    t = view.now
    if new_run and sim.fresh[job]:  # rigid job, first run: exact integer arithmetic
        sim.run_start[job] = run_start = t
        end = t + sim.fresh_dur[job]
        killed = sim.fresh_killed[job]
        sim.work_from[job] = t
    else:
        if new_run:
            sim.run_start[job] = t
        run_start = sim.run_start[job]
        n = sim.held_units[job]
        work_from = t + pause
        sim.work_from[job] = work_from
        natural = work_from + sim.work.duration(job, sim.left[job], n)
        kill_at = run_start + sim.work.walltime[job] if sim.walltime_kill else _NEVER
        killed = kill_at < natural
        end = kill_at if killed else natural
    view.running[job] = Running(run_start, nodes, counts, run_start + sim.walltime[job])
    sim.rec.open(job, t, nodes, counts,
                 sim.job_power.get(job) if view.budget is not None else None)
    sim.end_killed[job] = killed
    seq = sim.seq
    heappush(sim.heap, (end, END, seq, job))
    sim.seq = seq + 1
    sim.end_seq[job] = seq


def take_budget(sim: Simulator, job: int, nodes: IntArray, counts: IntArray) -> None:
    """Charge the job's power (its own, and what its nodes now draw more) to the budget;
    called once its resources are taken."""
    budget, meter = sim.view.budget, sim.meter
    if budget is not None and meter is not None:
        p = meter.job_part(job, nodes, counts)
        sim.job_power[job] = p
        budget.used += p + meter.refresh(nodes)


def refresh_power(sim: Simulator, nodes: object) -> None:
    """Nodes changed state or usage: the budget follows what they draw now."""
    if sim.meter is not None and sim.view.budget is not None:
        sim.view.budget.used += sim.meter.refresh(nodes)


def release_job(sim: Simulator, job: int) -> Running:
    """Give back a running job's resources and power; it leaves ``view.running``."""
    view = sim.view
    run = view.running.pop(job)
    req = sim.req_one
    if req is None:
        req = sim.req[job]
    kernels.release(view.free, run.nodes, run.counts, req)
    ft = view.free_total
    n = sim.held_units[job]
    if n == sim.units[job]:
        for r, amount in view.demand_nz[job]:
            ft[r] += amount
    else:
        for r in np.flatnonzero(req).tolist():
            ft[r] += n * int(req[r])
    if view.budget is not None:
        view.budget.used -= sim.job_power.pop(job, 0.0)
        refresh_power(sim, run.nodes)
    sim.end_seq[job] = -1  # its end entry, if any, is stale now
    return run


def stop_job(sim: Simulator, job: int, outcome: int, keep_progress: bool = False) -> None:
    """End the job's current segment now with ``outcome``; bank or lose its work."""
    run = release_job(sim, job)
    bank_work(sim, job, run, outcome, keep_progress)


def bank_work(sim: Simulator, job: int, run: Running, outcome: int,
              keep_progress: bool = False) -> None:
    """Close the job's segment: count the work it did (kept when reconfigured, when asked,
    or up to its last checkpoint; lost otherwise)."""
    t = sim.view.now
    lost = 0
    if outcome in (ABORTED, PREEMPTED, RECONFIGURED):
        n = int(run.counts.sum())
        worked = max(0, t - sim.work_from[job])
        kept = worked if outcome == RECONFIGURED or keep_progress else sim.work.saved(job, worked)
        lost = worked - kept
        sim.left[job] = max(0.0, sim.left[job] - sim.work.done(job, kept, n))
        sim.fresh[job] = False
    sim.rec.close(job, t, outcome, lost)


def take_node_out(sim: Simulator, node: int, state: int) -> None:
    """Node ``node`` stops being usable (it must host no job): it enters ``state``."""
    set_node_state(sim, node, state)


def bring_node_in(sim: Simulator, node: int) -> None:
    """Node ``node`` is usable (on and idle) from now on."""
    set_node_state(sim, node, ON)


def set_node_state(sim: Simulator, node: int, state: int) -> None:
    """Node ``node`` enters ``state``; its capacity joins the usable totals (free, idle)
    when it becomes ``ON`` or leaves them (with what was free on it) when it stops being
    so; the power, the node log and the events follow."""
    view = sim.view
    usable, becomes = view.node_state[node] == ON, state == ON
    if usable != becomes:
        row = view.capacity[node]
        sign = 1 if becomes else -1
        gone = view.free[node]  # (all of it: no job runs on a node that leaves)
        for r in np.flatnonzero(row).tolist():
            view.alive_total[r] += sign * int(row[r])
            view.free_total[r] += int(row[r]) if becomes else -int(gone[r])
        view.free[node] = row if becomes else 0
        view.alive[node] = becomes
    view.node_state[node] = state
    view.node_changes += 1
    refresh_power(sim, node)
    sim.rec.node_state(view.now, node, state)
    sim.events.nodes.append(node)


def node_leaves(sim: Simulator, node: int) -> None:
    """Node ``node`` leaves the machine (scenario): its jobs are aborted, it is ``DOWN``."""
    view = sim.view
    if view.node_state[node] == DOWN:
        return
    if (view.free[node] != view.capacity[node]).any():  # only a used node has jobs to stop
        victims = [j for j, run in view.running.items() if node in run.nodes]
        for j in victims:
            abort_job(sim, j)
    sim.node_seq[node] = -1  # a boot or shutdown in progress will not complete
    take_node_out(sim, node, DOWN)


def abort_job(sim: Simulator, job: int, requeue: bool | None = None) -> None:
    """Stop ``job`` now (outcome ``aborted``, seen by dispatchers in ``events.aborted``);
    re-queue it (restarting from zero or its last checkpoint) or let it fail — ``requeue``,
    by default the run's abort policy for jobs whose node left."""
    stop_job(sim, job, ABORTED)
    ev = sim.events
    ev.aborted.append(job)
    if sim.on_abort == "requeue" if requeue is None else requeue:
        sim.view.queue[job] = None
        ev.requeued.append(job)
    else:
        sim.rec.failed.add(job)
        ev.finished.append(job)
        sim.done += 1
