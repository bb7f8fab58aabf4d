"""The slot loop for a machine whose nodes leave and come back: one function, compiled.

Mirrors :meth:`Simulator.run <dispatchlab.engine.simulator.Simulator.run>` driving a
:class:`~dispatchlab.dispatchers.rule_based.policy.Policy` (static ordering, strict or EASY
selection,
first-fit, a :class:`~dispatchlab.dispatchers.machine.SlotMachine`) under a scenario of
``node_down`` / ``node_up`` / ``alive_nodes`` rows, as :mod:`.slot_loop` does for a fixed
machine: same decision points (submissions, live segment ends, scenario rows), same starts
and nodes, same EASY reservations (its backfill jumping over jobs that cannot start, as the
slot loop's does). A node that leaves aborts the jobs running on it (in the
order they started), which go back to the queue (``requeue``: from zero, or from their last
checkpoint) or fail; a job runs in several segments then, each logged as the engine's
recorder logs it. No power cap (the general loop takes those).

At one time the engine applies segment ends, then scenario rows (in file order), then
submissions; then the dispatcher decides once. ``alive_nodes`` takes the highest-index
present nodes away and brings the lowest-index absent ones back (the engine's default when
the dispatcher has no ``choose_nodes``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dispatchlab.engine.compiled.loop_parts import (
    backfill_kind,
    easy_shadow,
    ends_insert,
    ends_remove,
    ev_room,
    first_fit,
    gather,
    give_back,
    idle_wait,
    q_compact,
    q_insert,
    room,
    room_rows,
    take,
)
from dispatchlab.engine.compiled.slot_availability_ops import heap_pop, heap_push
from dispatchlab.engine.compiled.slot_loop import _ABSENT, _jump, idx_new, idx_put

#: Status codes returned by :func:`scenario_loop` (``FALLBACK``: the general loop must run,
#: to raise its own error: a stuck queue, or an idle machine waiting too long).
DONE, FALLBACK, BROKEN = 0, 1, 2
NEVER = 1 << 62
#: Node states, as :mod:`dispatchlab.engine.state`.
ON, DOWN = 0, 4
#: Segment outcomes, as :mod:`dispatchlab.engine.recorder`.
COMPLETED, KILLED, ABORTED = 0, 1, 2
#: Scenario row kinds.
NODE_DOWN, NODE_UP, ALIVE_NODES = 0, 1, 2


def scenario_loop(submit: Any, runtime: Any, walltime: Any, kill: bool, units: Any,
                  est: Any, rank: Any, skip: Any, slots: Any, easy: bool, depth: int,
                  cap_res: Any, req: Any, s_time: Any, s_kind: Any, s_value: Any,
                  s_off: Any, s_nodes: Any, requeue: bool, checkpoint: Any) -> Any:
    """Simulate; see the module docstring.

    ``runtime``/``walltime``: per job (``kill``: end a run at its wall-time);
    ``cap_res[n, r]``: node capacity per resource, ``req``: the per-unit request; scenario
    row ``k`` at ``s_time[k]`` of kind ``s_kind[k]`` with ``s_value[k]`` (``alive_nodes``)
    or target nodes ``s_nodes[s_off[k]:s_off[k + 1]]``.

    Returns ``(status, seg_job, seg_t0, seg_t1, seg_out, seg_lost, seg_off, seg_nodes,
    seg_counts, n_seg, planned, points, alive_pts, n_points, node_log, n_log, failed,
    backfilled, bad_job)``: segments in the order they started; ``points`` rows ``(time,
    queued, running, busy units)`` and ``alive_pts`` the usable capacity per resource,
    per decision point; ``node_log`` rows ``(time, node, state)``.
    """
    n = submit.shape[0]
    n_nodes = slots.shape[0]
    n_res = req.shape[0]
    n_rows = s_time.shape[0]
    node_free = slots.copy()
    state = np.zeros(n_nodes, np.int64)
    alive_res = np.zeros(n_res, np.int64)
    for nd in range(n_nodes):
        for r in range(n_res):
            alive_res[r] += cap_res[nd, r]
    alive_slots = 0
    for nd in range(n_nodes):
        alive_slots += slots[nd]
    lo = 0  # every node below lo has no free slot
    # per job: current segment, its work and end
    planned = np.full(n, -1, np.int64)
    cur = np.full(n, -1, np.int64)  # its open segment
    fresh = np.ones(n, np.bool_)
    left = runtime.astype(np.float64)  # reference seconds of work left
    work_from = np.zeros(n, np.int64)
    end_seq = np.full(n, -1, np.int64)  # its live end event
    end_killed = np.zeros(n, np.bool_)
    run_pos = np.full(n, -1, np.int64)  # its place among the running jobs, in start order
    failed = np.zeros(n, np.bool_)
    # segments (grown on demand)
    seg_job = np.empty(n + 16, np.int64)
    seg_t0 = np.empty(n + 16, np.int64)
    seg_t1 = np.empty(n + 16, np.int64)
    seg_out = np.empty(n + 16, np.int64)
    seg_lost = np.empty(n + 16, np.int64)
    seg_pos = np.empty(n + 16, np.int64)
    seg_len = np.empty(n + 16, np.int64)
    n_seg = 0
    flat_nodes = np.empty(n + n_nodes, np.int32)
    flat_counts = np.empty(n + n_nodes, np.int32)
    n_flat = 0
    points = np.empty((2 * n + n_rows + 16, 4), np.int64)
    alive_pts = np.empty((2 * n + n_rows + 16, n_res), np.int64)
    n_points = 0
    node_log = np.empty((n_nodes + 16, 3), np.int64)
    n_log = 0
    # running jobs in start order (the engine's dict order: victims are aborted in it)
    run_list = np.empty(n, np.int64)
    moving = np.empty(n_nodes, np.int64)  # the nodes a scenario row moves
    rn = 0
    # queue sorted by rank
    q_job = np.empty(n, np.int64)
    q_rank = np.empty(n, np.int64)
    q_gone = np.zeros(n, np.bool_)
    qn = 0
    # EASY without a depth limit: the queue indexed by rank, as in the slot loop
    indexed = easy and depth < 0
    size, t_u, t_e, t_p = idx_new(n, indexed, False)  # (no power in this loop)
    # end events by (time, number), stale ones dropped lazily as the engine does
    h_time = np.empty(n + 16, np.int64)
    h_id = np.empty(n + 16, np.int64)
    h_pos = np.zeros(0, np.int64)  # (no positions tracked)
    ev_job = np.empty(n + 16, np.int64)
    hn = 0
    n_ev = 0  # events numbered in the engine's sequence order (after the scenario rows)
    e_time = np.empty(n, np.int64)  # EASY: running jobs by (expected end, job)
    e_job = np.empty(n, np.int64)
    en = 0
    end_of = np.zeros(n, np.int64)
    fin = np.empty(n, np.int64)  # finished or aborted at this point
    requeued = np.empty(n, np.int64)
    free = alive_slots
    busy = 0
    queued = 0  # the engine's queue (rejected jobs never join it)
    head = -1
    shadow = -1
    plan_head = -1
    plan_time = -1
    extra = 0
    backfilled = 0
    nxt = 0
    srow = 0
    idle_since = -1
    status = DONE
    bad_job = -1
    while nxt < n or queued > 0 or rn > 0:
        # the next time: stale ends at the top of the heap are dropped first
        while hn > 0 and end_seq[ev_job[h_id[0]]] != h_id[0]:
            hn = heap_pop(h_time, h_id, h_pos, hn)
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
                bad_job = q_job[0] if qn > 0 else -1
                break
            idle_since, too_long = idle_wait(idle_since, t, rn == 0)
            if too_long:
                status = FALLBACK
                break
        n_fin = 0
        n_abort = 0
        n_req = 0
        nodes_changed = False
        # 1. segment ends at t (stale entries ignored)
        while hn > 0 and h_time[0] == t:
            job = ev_job[h_id[0]]
            live = end_seq[job] == h_id[0]
            hn = heap_pop(h_time, h_id, h_pos, hn)
            if not live:
                continue
            s = cur[job]
            lo = give_back(node_free, flat_nodes, flat_counts, seg_pos[s], seg_len[s], lo)
            busy -= units[job]
            end_seq[job] = -1
            seg_t1[s] = t
            seg_out[s] = KILLED if end_killed[job] else COMPLETED
            seg_lost[s] = 0
            cur[job] = -1
            pos = run_pos[job]
            for m in range(pos, rn - 1):
                run_list[m] = run_list[m + 1]
                run_pos[run_list[m]] = m
            rn -= 1
            run_pos[job] = -1
            fin[n_fin] = job
            n_fin += 1
        # 2. scenario rows at t: the nodes each moves, chosen before any moves (in the
        # engine's order: targets as listed; alive_nodes: the highest present nodes leave,
        # the lowest absent ones join, in increasing index order)
        while srow < n_rows and s_time[srow] == t:
            kind = s_kind[srow]
            n_mv = 0
            if kind == ALIVE_NODES:
                present = 0
                for x in range(n_nodes):
                    if state[x] != DOWN:
                        present += 1
                want = s_value[srow]
                leaving = want < present
                if leaving:
                    seen = 0
                    for x in range(n_nodes):
                        if state[x] != DOWN:
                            if seen >= want:
                                moving[n_mv] = x
                                n_mv += 1
                            seen += 1
                elif want > present:
                    for x in range(n_nodes):
                        if state[x] == DOWN and n_mv < want - present:
                            moving[n_mv] = x
                            n_mv += 1
            else:
                leaving = kind == NODE_DOWN
                for a in range(s_off[srow], s_off[srow + 1]):
                    moving[n_mv] = s_nodes[a]
                    n_mv += 1
            for step in range(n_mv):
                nd = moving[step]
                if not leaving and state[nd] != DOWN:
                    continue
                if leaving:
                    if state[nd] == DOWN:
                        continue
                    if node_free[nd] != slots[nd]:  # jobs run on it: abort them
                        m = 0
                        while m < rn:
                            job = run_list[m]
                            s = cur[job]
                            p = seg_pos[s]
                            hit = False
                            for a in range(seg_len[s]):
                                if flat_nodes[p + a] == nd:
                                    hit = True
                                    break
                            if not hit:
                                m += 1
                                continue
                            lo = give_back(node_free, flat_nodes, flat_counts, p, seg_len[s],
                                           lo)
                            busy -= units[job]
                            end_seq[job] = -1
                            worked = t - work_from[job]
                            if worked < 0:
                                worked = 0
                            c = checkpoint[job]
                            kept = (worked // c) * c if c > 0 else 0
                            seg_t1[s] = t
                            seg_out[s] = ABORTED
                            seg_lost[s] = worked - kept
                            rest = left[job] - kept / 1.0
                            left[job] = rest if rest > 0.0 else 0.0
                            fresh[job] = False
                            cur[job] = -1
                            for mm in range(m, rn - 1):
                                run_list[mm] = run_list[mm + 1]
                                run_pos[run_list[mm]] = mm
                            rn -= 1
                            run_pos[job] = -1
                            n_abort += 1
                            fin[n_fin] = job  # the machine forgets it either way
                            n_fin += 1
                            if requeue:
                                requeued[n_req] = job
                                n_req += 1
                                queued += 1
                            else:
                                failed[job] = True
                    alive_slots -= slots[nd]
                    for r in range(n_res):
                        alive_res[r] -= cap_res[nd, r]
                    node_free[nd] = 0
                    state[nd] = DOWN
                else:
                    alive_slots += slots[nd]
                    for r in range(n_res):
                        alive_res[r] += cap_res[nd, r]
                    node_free[nd] = slots[nd]
                    if nd < lo:
                        lo = nd
                    state[nd] = ON
                node_log = room_rows(node_log, n_log + 1)
                node_log[n_log, 0] = t
                node_log[n_log, 1] = nd
                node_log[n_log, 2] = state[nd]
                n_log += 1
                nodes_changed = True
            srow += 1
        # 3. submissions at t, then requeued jobs, join the queue in rank order
        k_sub = 0
        while True:
            if nxt < n and submit[nxt] == t:
                jn = nxt
                nxt += 1
                if skip[jn]:
                    continue
                queued += 1
            elif k_sub < n_req:
                jn = requeued[k_sub]
                k_sub += 1
            else:
                break
            r = rank[jn]
            qn = q_insert(q_job, q_rank, qn, jn, r)
            if indexed:
                idx_put(t_u, t_e, t_p, size, r, units[jn], est[jn], 0.0)
        # 4. the policy's decision: the machine forgets jobs that stopped running ...
        for f in range(n_fin):
            job = fin[f]
            if easy:
                en = ends_remove(e_time, e_job, en, end_of[job], job)
        free = alive_slots - busy
        # ... then starts the startable prefix (and, for EASY, backfills)
        n_gone = 0
        if qn > 0 and free > 0:
            i = 0
            stop = 0
            while True:
                if i >= qn:
                    break
                j = q_job[i]
                u = units[j]
                if stop == 0:
                    kind = 1 if u <= free else 0
                else:
                    if i >= stop:
                        break
                    kind = backfill_kind(t, est[j], u, free, shadow, extra)
                if kind == 0:
                    if stop > 0:
                        i += 1
                        if indexed and i < qn:
                            i = _jump(t_u, t_e, t_p, size, q_rank, qn, q_rank[i], free, 0.0,
                                      extra, shadow - t)
                        continue
                    if not easy or free <= 0:
                        break
                    # EASY: reserve for the head (again when anything changed), backfill
                    if (i > 0 or n_fin > 0 or nodes_changed or j != head
                            or shadow <= t):
                        head = j
                        shadow, extra = easy_shadow(e_time, e_job, en, units, free, units[j],
                                                    t)
                        if shadow < 0:  # too large for the usable nodes: no reservation
                            shadow = NEVER
                            extra = free
                    if shadow < NEVER and (plan_head != j or plan_time != shadow):
                        plan_head = j
                        plan_time = shadow
                        planned[j] = shadow
                    stop = qn if depth < 0 else min(qn, i + depth)
                    i += 1
                    if indexed and i < qn:
                        i = _jump(t_u, t_e, t_p, size, q_rank, qn, q_rank[i], free, 0.0,
                                  extra, shadow - t)
                    continue
                if kind == 3:
                    extra -= u
                if kind > 1:
                    backfilled += 1
                # first fit over the usable nodes' free slots
                flat_nodes = room(flat_nodes, n_flat + n_nodes)
                flat_counts = room(flat_counts, n_flat + n_nodes)
                p = n_flat
                k_ff, left_u = first_fit(node_free, lo, u, flat_nodes, flat_counts, p)
                if left_u > 0:
                    status = BROKEN
                    bad_job = j
                    break
                lo = take(node_free, flat_nodes, flat_counts, p, k_ff, lo)
                n_flat += k_ff
                if n_seg >= seg_job.shape[0]:
                    seg_job = room(seg_job, n_seg + 1)
                    seg_t0 = room(seg_t0, n_seg + 1)
                    seg_t1 = room(seg_t1, n_seg + 1)
                    seg_out = room(seg_out, n_seg + 1)
                    seg_lost = room(seg_lost, n_seg + 1)
                    seg_pos = room(seg_pos, n_seg + 1)
                    seg_len = room(seg_len, n_seg + 1)
                seg_job[n_seg] = j
                seg_t0[n_seg] = t
                seg_t1[n_seg] = -1
                seg_out[n_seg] = -1
                seg_lost[n_seg] = 0
                seg_pos[n_seg] = p
                seg_len[n_seg] = n_flat - p
                cur[j] = n_seg
                n_seg += 1
                free -= u
                busy += u
                run_list[rn] = j
                run_pos[j] = rn
                rn += 1
                queued -= 1
                q_gone[i] = True
                if indexed:
                    idx_put(t_u, t_e, t_p, size, q_rank[i], _ABSENT, _ABSENT, 0.0)
                n_gone += 1
                # the run's end: exact for a first run, from the work left otherwise
                work_from[j] = t
                natural = t + runtime[j] if fresh[j] else t + np.int64(np.ceil(left[j]))
                kill_at = t + walltime[j] if kill else NEVER
                end_killed[j] = kill_at < natural
                et = int(kill_at if kill_at < natural else natural)
                h_time, h_id, ev_job = ev_room(h_time, h_id, ev_job, n_ev)
                ev_job[n_ev] = j
                hn = heap_push(h_time, h_id, h_pos, hn, et, n_ev)
                end_seq[j] = n_ev
                n_ev += 1
                if easy:  # expected end, kept sorted by (end, job)
                    end_of[j] = t + est[j]
                    en = ends_insert(e_time, e_job, en, end_of[j], j)
                i += 1
                if stop > 0 and free <= 0:
                    break
                if stop > 0 and indexed and i < qn:
                    i = _jump(t_u, t_e, t_p, size, q_rank, qn, q_rank[i], free, 0.0, extra,
                              shadow - t)
            if status != DONE:
                break
            if n_gone:
                qn = q_compact(q_job, q_rank, q_gone, qn)
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
    # placements in segment order
    seg_off, seg_nodes, seg_counts = gather(seg_pos, seg_len, n_seg, flat_nodes, flat_counts)
    return (status, seg_job[:n_seg].copy(), seg_t0[:n_seg].copy(), seg_t1[:n_seg].copy(),
            seg_out[:n_seg].copy(), seg_lost[:n_seg].copy(), seg_off, seg_nodes, seg_counts,
            n_seg, planned, points[:n_points].copy(), alive_pts[:n_points].copy(), n_points,
            node_log[:n_log].copy(), n_log, failed, backfilled, bad_job)
