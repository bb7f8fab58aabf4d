"""The first-fit loop of the variable-capacity strategies (``ff-aware``, ``ff-unaware``) on a
machine whose machines leave and come back: one function, compiled.

Mirrors :meth:`Simulator.run <dispatchlab.engine.simulator.Simulator.run>` driving
:class:`~dispatchlab.dispatchers.variable_capacity.first_fit.FirstFitVC`: every job is one
unit of ``c`` cores on one machine; at each decision point the queue is taken by (release,
job) — the job index, as the workload is sorted by submit time and a re-queued job keeps
its release — and each job that fits goes to the first alive machine with ``c`` free cores
(the dispatcher's scan: among the per-size queues whose size fits the largest free count,
the head of lowest index, until none fits).

At one time the engine applies segment ends, then scenario rows (in file order), then
submissions; then the dispatcher decides once. Each scenario row arrives here resolved:
the machines it takes away or brings back, in the order the engine moves them (the
dispatcher's ``choose_nodes`` answers are drawn before the loop:
:mod:`.scenario_choice`). A machine that leaves aborts the jobs running on it, which go
back to the queue (``requeue``: from zero, or from their last checkpoint) or fail.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dispatchlab.dispatchers.rule_based.compiled.loop_parts import (
    ev_room,
    idle_wait,
    room,
    room_rows,
)
from dispatchlab.engine.compiled.slot_availability_ops import heap_pop, heap_push

#: Status codes (``FALLBACK``: the general loop must run, to raise its own error: a stuck
#: queue, or an idle machine waiting too long).
DONE, FALLBACK = 0, 1
NEVER = 1 << 62
#: Node states, as :mod:`dispatchlab.platform.node_states`.
ON, DOWN = 0, 4
#: Segment outcomes, as :mod:`dispatchlab.engine.recorder`.
COMPLETED, KILLED, ABORTED = 0, 1, 2


def first_fit_loop(submit: Any, runtime: Any, walltime: Any, kill: bool, cores: Any,
                   size_of: Any, sizes: Any, size_room: Any, skip: Any, node_cores: Any,
                   cap_res: Any, s_time: Any, s_leave: Any, s_off: Any,
                   s_nodes: Any, requeue: bool, checkpoint: Any) -> Any:
    """Simulate; see the module docstring.

    Per job: ``runtime``/``walltime`` (``kill``: end a run at its wall-time), ``cores``,
    ``size_of`` (index of its size in ``sizes``, whose queue holds at most
    ``size_room[k]`` jobs), ``skip`` (rejected: never queued), ``checkpoint`` (s of work
    between checkpoints, 0: none). Per machine: ``node_cores``, ``cap_res[n, r]`` (every
    resource). Scenario row ``k`` at ``s_time[k]``
    takes the machines ``s_nodes[s_off[k]:s_off[k + 1]]`` away (``s_leave[k]``) or brings
    them back, in that order.

    Returns ``(status, seg_job, seg_t0, seg_t1, seg_out, seg_lost, seg_node, points,
    alive_pts, node_log, failed)``: segments in the order they started;
    ``points`` rows ``(time, queued, running, busy cores)`` and ``alive_pts`` the alive
    capacity per resource, per decision point; ``node_log`` rows ``(time, node, state)``.
    """
    n = submit.shape[0]
    n_nodes = node_cores.shape[0]
    n_res = cap_res.shape[1]
    n_rows = s_time.shape[0]
    n_sizes = sizes.shape[0]
    node_free = node_cores.copy()
    state = np.zeros(n_nodes, np.int64)
    alive_res = np.zeros(n_res, np.int64)
    for nd in range(n_nodes):
        for r in range(n_res):
            alive_res[r] += cap_res[nd, r]
    # the jobs on each machine (a job takes one core at least)
    width = 1
    for nd in range(n_nodes):
        if node_cores[nd] > width:
            width = node_cores[nd]
    node_jobs = np.empty((n_nodes, width), np.int64)
    node_nj = np.zeros(n_nodes, np.int64)
    job_node = np.full(n, -1, np.int64)
    # per-size queues: heaps of job indices (key = id = job), one slice each
    q_base = np.zeros(n_sizes + 1, np.int64)
    for k in range(n_sizes):
        q_base[k + 1] = q_base[k] + size_room[k]
    q_key = np.empty(max(q_base[n_sizes], 1), np.int64)
    q_id = np.empty(max(q_base[n_sizes], 1), np.int64)
    q_n = np.zeros(n_sizes, np.int64)
    no_pos = np.zeros(0, np.int64)  # (no positions tracked)
    # per job: current segment, its work and end
    cur = np.full(n, -1, np.int64)
    fresh = np.ones(n, np.bool_)
    left = runtime.astype(np.float64)  # reference seconds of work left
    work_from = np.zeros(n, np.int64)
    end_seq = np.full(n, -1, np.int64)
    end_killed = np.zeros(n, np.bool_)
    failed = np.zeros(n, np.bool_)
    # segments (grown on demand)
    seg_job = np.empty(n + 16, np.int64)
    seg_t0 = np.empty(n + 16, np.int64)
    seg_t1 = np.empty(n + 16, np.int64)
    seg_out = np.empty(n + 16, np.int64)
    seg_lost = np.empty(n + 16, np.int64)
    seg_node = np.empty(n + 16, np.int64)
    n_seg = 0
    points = np.empty((2 * n + n_rows + 16, 4), np.int64)
    alive_pts = np.empty((2 * n + n_rows + 16, n_res), np.int64)
    n_points = 0
    node_log = np.empty((n_nodes + 16, 3), np.int64)
    n_log = 0
    # end events by (time, number), stale ones dropped lazily as the engine does
    h_time = np.empty(n + 16, np.int64)
    h_id = np.empty(n + 16, np.int64)
    ev_job = np.empty(n + 16, np.int64)
    hn = 0
    n_ev = 0
    busy = 0  # cores in use
    rn = 0  # running jobs
    queued = 0  # the engine's queue (rejected jobs never join it)
    nxt = 0
    srow = 0
    idle_since = -1
    status = DONE
    while nxt < n or queued > 0 or rn > 0:
        # the next time: stale ends at the top of the heap are dropped first
        while hn > 0 and end_seq[ev_job[h_id[0]]] != h_id[0]:
            hn = heap_pop(h_time, h_id, no_pos, hn)
        t = NEVER
        if hn > 0:
            t = h_time[0]
        if srow < n_rows and s_time[srow] < t:
            t = s_time[srow]
        if nxt < n:
            if submit[nxt] < t:
                t = submit[nxt]
        else:
            if t == NEVER:
                status = FALLBACK  # queued jobs, nothing pending: the engine's error
                break
            idle_since, too_long = idle_wait(idle_since, t, rn == 0)
            if too_long:
                status = FALLBACK
                break
        # 1. segment ends at t (stale entries ignored)
        while hn > 0 and h_time[0] == t:
            job = ev_job[h_id[0]]
            live = end_seq[job] == h_id[0]
            hn = heap_pop(h_time, h_id, no_pos, hn)
            if not live:
                continue
            nd = job_node[job]
            node_free[nd] += cores[job]
            for a in range(node_nj[nd]):
                if node_jobs[nd, a] == job:
                    node_nj[nd] -= 1
                    node_jobs[nd, a] = node_jobs[nd, node_nj[nd]]
                    break
            busy -= cores[job]
            rn -= 1
            end_seq[job] = -1
            s = cur[job]
            seg_t1[s] = t
            seg_out[s] = KILLED if end_killed[job] else COMPLETED
            seg_lost[s] = 0
            cur[job] = -1
        # 2. scenario rows at t: each moves its machines, in the engine's order
        while srow < n_rows and s_time[srow] == t:
            leaving = s_leave[srow]
            for a in range(s_off[srow], s_off[srow + 1]):
                nd = s_nodes[a]
                if leaving:
                    if state[nd] == DOWN:
                        continue
                    for b in range(node_nj[nd]):  # its jobs are aborted
                        job = node_jobs[nd, b]
                        node_free[nd] += cores[job]
                        busy -= cores[job]
                        rn -= 1
                        end_seq[job] = -1
                        worked = t - work_from[job]
                        if worked < 0:
                            worked = 0
                        c = checkpoint[job]
                        kept = (worked // c) * c if c > 0 else 0
                        s = cur[job]
                        seg_t1[s] = t
                        seg_out[s] = ABORTED
                        seg_lost[s] = worked - kept
                        rest = left[job] - kept / 1.0
                        left[job] = rest if rest > 0.0 else 0.0
                        fresh[job] = False
                        cur[job] = -1
                        if requeue:  # back in its size's queue, with its release
                            k = size_of[job]
                            q_n[k] = heap_push(q_key[q_base[k]:q_base[k + 1]],
                                               q_id[q_base[k]:q_base[k + 1]], no_pos, q_n[k],
                                               job, job)
                            queued += 1
                        else:
                            failed[job] = True
                    node_nj[nd] = 0
                    for r in range(n_res):
                        alive_res[r] -= cap_res[nd, r]
                    node_free[nd] = 0
                    state[nd] = DOWN
                else:
                    if state[nd] != DOWN:
                        continue
                    for r in range(n_res):
                        alive_res[r] += cap_res[nd, r]
                    node_free[nd] = node_cores[nd]
                    state[nd] = ON
                node_log = room_rows(node_log, n_log + 1)
                node_log[n_log, 0] = t
                node_log[n_log, 1] = nd
                node_log[n_log, 2] = state[nd]
                n_log += 1
            srow += 1
        # 3. submissions at t join their size's queue
        while nxt < n and submit[nxt] == t:
            j = nxt
            nxt += 1
            if skip[j]:
                continue
            k = size_of[j]
            q_n[k] = heap_push(q_key[q_base[k]:q_base[k + 1]], q_id[q_base[k]:q_base[k + 1]],
                               no_pos, q_n[k], j, j)
            queued += 1
        # 4. the dispatcher's scan: the lowest queued job that fits the largest free
        # count, on the first machine with room, until none fits
        best = 0
        for nd in range(n_nodes):
            if node_free[nd] > best:
                best = node_free[nd]
        while best > 0 and queued > 0:
            top = -1
            kt = -1
            for k in range(n_sizes):
                if q_n[k] > 0 and sizes[k] <= best:
                    head = q_id[q_base[k]]
                    if top < 0 or head < top:
                        top = head
                        kt = k
            if top < 0:
                break
            q_n[kt] = heap_pop(q_key[q_base[kt]:q_base[kt + 1]],
                               q_id[q_base[kt]:q_base[kt + 1]], no_pos, q_n[kt])
            queued -= 1
            c = sizes[kt]
            nd = 0
            while node_free[nd] < c:
                nd += 1
            node_free[nd] -= c
            if node_free[nd] + c == best:
                best = 0
                for x in range(n_nodes):
                    if node_free[x] > best:
                        best = node_free[x]
            # the engine opens a segment and schedules its end
            if n_seg >= seg_job.shape[0]:
                seg_job = room(seg_job, n_seg + 1)
                seg_t0 = room(seg_t0, n_seg + 1)
                seg_t1 = room(seg_t1, n_seg + 1)
                seg_out = room(seg_out, n_seg + 1)
                seg_lost = room(seg_lost, n_seg + 1)
                seg_node = room(seg_node, n_seg + 1)
            seg_job[n_seg] = top
            seg_t0[n_seg] = t
            seg_t1[n_seg] = -1
            seg_out[n_seg] = -1
            seg_lost[n_seg] = 0
            seg_node[n_seg] = nd
            cur[top] = n_seg
            n_seg += 1
            job_node[top] = nd
            node_jobs[nd, node_nj[nd]] = top
            node_nj[nd] += 1
            busy += c
            rn += 1
            work_from[top] = t
            natural = t + runtime[top] if fresh[top] else t + np.int64(np.ceil(left[top]))
            kill_at = t + walltime[top] if kill else NEVER
            end_killed[top] = kill_at < natural
            et = int(kill_at if kill_at < natural else natural)
            h_time, h_id, ev_job = ev_room(h_time, h_id, ev_job, n_ev)
            ev_job[n_ev] = top
            hn = heap_push(h_time, h_id, no_pos, hn, et, n_ev)
            end_seq[top] = n_ev
            n_ev += 1
        # 5. one sample per decision point
        if n_points >= points.shape[0]:
            points = room_rows(points, n_points + 1)
            alive_pts = room_rows(alive_pts, n_points + 1)
        points[n_points, 0] = t
        points[n_points, 1] = queued
        points[n_points, 2] = rn
        points[n_points, 3] = busy
        for r in range(n_res):
            alive_pts[n_points, r] = alive_res[r]
        n_points += 1
    return (status, seg_job[:n_seg].copy(), seg_t0[:n_seg].copy(), seg_t1[:n_seg].copy(),
            seg_out[:n_seg].copy(), seg_lost[:n_seg].copy(), seg_node[:n_seg].copy(),
            points[:n_points].copy(), alive_pts[:n_points].copy(), node_log[:n_log].copy(),
            failed)
