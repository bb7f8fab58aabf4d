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

from dispatchlab.engine.compiled.slot_loop import _ABSENT, _jump, idx_put

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
#: The engine's limit for an idle machine with queued jobs and only timers ahead (s).
IDLE_LIMIT = 400 * 86400


def _grow(a: Any, size: int) -> Any:
    out = np.empty(max(2 * a.shape[0], size), a.dtype)
    out[:a.shape[0]] = a
    return out


def _grow2(a: Any, size: int) -> Any:
    out = np.empty((max(2 * a.shape[0], size), a.shape[1]), a.dtype)
    out[:a.shape[0]] = a
    return out


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
    end_seq = np.full(n, -1, np.int64)
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
    size = 1
    while size < n:
        size *= 2
    t_u = np.full(2 * size if indexed else 0, _ABSENT, np.int64)
    t_e = np.full(2 * size if indexed else 0, _ABSENT, np.int64)
    t_p = np.zeros(0, np.float64)  # (no power in this loop)
    # end heap (time, seq, job), stale entries dropped lazily as the engine does
    h_time = np.empty(n + 16, np.int64)
    h_seq = np.empty(n + 16, np.int64)
    h_job = np.empty(n + 16, np.int64)
    hn = 0
    e_time = np.empty(n, np.int64)  # EASY: running jobs by (expected end, job)
    e_job = np.empty(n, np.int64)
    en = 0
    end_of = np.zeros(n, np.int64)
    fin = np.empty(n, np.int64)  # finished or aborted at this point
    requeued = np.empty(n, np.int64)
    free = alive_slots
    busy = 0
    queued = 0  # the engine's queue (rejected jobs never join it)
    seq = n_rows  # scenario rows took sequence numbers 0 … n_rows − 1
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
        while hn > 0 and end_seq[h_job[0]] != h_seq[0]:
            hn -= 1
            if hn > 0:
                lt, ls, lj = h_time[hn], h_seq[hn], h_job[hn]
                k = 0
                while True:
                    c = 2 * k + 1
                    if c >= hn:
                        break
                    if c + 1 < hn and (h_time[c + 1] < h_time[c] or (
                            h_time[c + 1] == h_time[c] and h_seq[c + 1] < h_seq[c])):
                        c += 1
                    if h_time[c] < lt or (h_time[c] == lt and h_seq[c] < ls):
                        h_time[k], h_seq[k], h_job[k] = h_time[c], h_seq[c], h_job[c]
                        k = c
                    else:
                        break
                h_time[k], h_seq[k], h_job[k] = lt, ls, lj
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
            if rn == 0:
                if idle_since < 0:
                    idle_since = t
                elif t - idle_since > IDLE_LIMIT:
                    status = FALLBACK
                    break
            else:
                idle_since = -1
        n_fin = 0
        n_abort = 0
        n_req = 0
        nodes_changed = False
        # 1. segment ends at t (stale entries ignored)
        while hn > 0 and h_time[0] == t:
            job = h_job[0]
            live = end_seq[job] == h_seq[0]
            hn -= 1
            if hn > 0:
                lt, ls, lj = h_time[hn], h_seq[hn], h_job[hn]
                k = 0
                while True:
                    c = 2 * k + 1
                    if c >= hn:
                        break
                    if c + 1 < hn and (h_time[c + 1] < h_time[c] or (
                            h_time[c + 1] == h_time[c] and h_seq[c + 1] < h_seq[c])):
                        c += 1
                    if h_time[c] < lt or (h_time[c] == lt and h_seq[c] < ls):
                        h_time[k], h_seq[k], h_job[k] = h_time[c], h_seq[c], h_job[c]
                        k = c
                    else:
                        break
                h_time[k], h_seq[k], h_job[k] = lt, ls, lj
            if not live:
                continue
            s = cur[job]
            p = seg_pos[s]
            for a in range(seg_len[s]):
                nd = flat_nodes[p + a]
                node_free[nd] += flat_counts[p + a]
                if nd < lo:
                    lo = nd
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
                            for a in range(seg_len[s]):
                                x = flat_nodes[p + a]
                                node_free[x] += flat_counts[p + a]
                                if x < lo:
                                    lo = x
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
                if n_log >= node_log.shape[0]:
                    node_log = _grow2(node_log, n_log + 1)
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
            if qn == 0 or r > q_rank[qn - 1]:
                k = qn
            else:
                a, b = 0, qn
                while a < b:
                    m = (a + b) >> 1
                    if q_rank[m] < r:
                        a = m + 1
                    else:
                        b = m
                k = a
                for m in range(qn, k, -1):
                    q_rank[m] = q_rank[m - 1]
                    q_job[m] = q_job[m - 1]
            q_rank[k] = r
            q_job[k] = jn
            qn += 1
            if indexed:
                idx_put(t_u, t_e, t_p, size, r, units[jn], est[jn], 0.0)
        # 4. the policy's decision: the machine forgets jobs that stopped running ...
        for f in range(n_fin):
            job = fin[f]
            if easy:
                e = end_of[job]
                a, b = 0, en
                while a < b:
                    m = (a + b) >> 1
                    if e_time[m] < e or (e_time[m] == e and e_job[m] < job):
                        a = m + 1
                    else:
                        b = m
                for m in range(a, en - 1):
                    e_time[m] = e_time[m + 1]
                    e_job[m] = e_job[m + 1]
                en -= 1
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
                    if t + est[j] <= shadow:
                        kind = 2 if u <= free else 0
                    elif u <= free and u <= extra:
                        kind = 3
                    else:
                        kind = 0
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
                        need = units[j]
                        avail = free
                        soon = t + 1
                        shadow = -1
                        for k in range(en):
                            tk = e_time[k] if e_time[k] > soon else soon
                            if shadow >= 0 and tk > shadow:
                                break
                            avail += units[e_job[k]]
                            if shadow < 0 and avail >= need:
                                shadow = tk
                        if shadow < 0:  # too large for the usable nodes: no reservation
                            shadow = NEVER
                            extra = free
                        else:
                            extra = avail - need
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
                if n_flat + n_nodes > flat_nodes.shape[0]:
                    flat_nodes = _grow(flat_nodes, n_flat + n_nodes)
                    flat_counts = _grow(flat_counts, n_flat + n_nodes)
                p = n_flat
                left_u = u
                nd = lo
                while left_u > 0 and nd < n_nodes:
                    room = node_free[nd]
                    if room > 0:
                        c = room if room < left_u else left_u
                        flat_nodes[n_flat] = nd
                        flat_counts[n_flat] = c
                        n_flat += 1
                        node_free[nd] -= c
                        left_u -= c
                    nd += 1
                if left_u > 0:
                    status = BROKEN
                    bad_job = j
                    break
                while lo < n_nodes and node_free[lo] == 0:
                    lo += 1
                if n_seg >= seg_job.shape[0]:
                    seg_job = _grow(seg_job, n_seg + 1)
                    seg_t0 = _grow(seg_t0, n_seg + 1)
                    seg_t1 = _grow(seg_t1, n_seg + 1)
                    seg_out = _grow(seg_out, n_seg + 1)
                    seg_lost = _grow(seg_lost, n_seg + 1)
                    seg_pos = _grow(seg_pos, n_seg + 1)
                    seg_len = _grow(seg_len, n_seg + 1)
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
                et = kill_at if kill_at < natural else natural
                if hn >= h_time.shape[0]:
                    h_time = _grow(h_time, hn + 1)
                    h_seq = _grow(h_seq, hn + 1)
                    h_job = _grow(h_job, hn + 1)
                k = hn
                hn += 1
                while k > 0:
                    pk = (k - 1) >> 1
                    if h_time[pk] > et or (h_time[pk] == et and h_seq[pk] > seq):
                        h_time[k], h_seq[k], h_job[k] = h_time[pk], h_seq[pk], h_job[pk]
                        k = pk
                    else:
                        break
                h_time[k], h_seq[k], h_job[k] = et, seq, j
                end_seq[j] = seq
                seq += 1
                if easy:  # expected end, kept sorted by (end, job)
                    e = t + est[j]
                    end_of[j] = e
                    a, b = 0, en
                    while a < b:
                        m = (a + b) >> 1
                        if e_time[m] < e or (e_time[m] == e and e_job[m] < j):
                            a = m + 1
                        else:
                            b = m
                    for m in range(en, a, -1):
                        e_time[m] = e_time[m - 1]
                        e_job[m] = e_job[m - 1]
                    e_time[a] = e
                    e_job[a] = j
                    en += 1
                i += 1
                if stop > 0 and free <= 0:
                    break
                if stop > 0 and indexed and i < qn:
                    i = _jump(t_u, t_e, t_p, size, q_rank, qn, q_rank[i], free, 0.0, extra,
                              shadow - t)
            if status != DONE:
                break
            if n_gone:
                w = 0
                for k in range(qn):
                    if q_gone[k]:
                        q_gone[k] = False
                    else:
                        q_job[w] = q_job[k]
                        q_rank[w] = q_rank[k]
                        w += 1
                qn = w
        # 5. one sample per decision point
        if n_points >= points.shape[0]:
            points = _grow2(points, n_points + 1)
            alive_pts = _grow2(alive_pts, n_points + 1)
        points[n_points, 0] = t
        points[n_points, 1] = queued
        points[n_points, 2] = rn
        points[n_points, 3] = busy
        for r in range(n_res):
            alive_pts[n_points, r] = alive_res[r]
        n_points += 1
    # placements in segment order
    seg_off = np.zeros(n_seg + 1, np.int64)
    for s in range(n_seg):
        seg_off[s + 1] = seg_off[s] + seg_len[s]
    seg_nodes = np.empty(seg_off[n_seg], np.int32)
    seg_counts = np.empty(seg_off[n_seg], np.int32)
    for s in range(n_seg):
        p, o = seg_pos[s], seg_off[s]
        for a in range(seg_len[s]):
            seg_nodes[o + a] = flat_nodes[p + a]
            seg_counts[o + a] = flat_counts[p + a]
    return (status, seg_job[:n_seg].copy(), seg_t0[:n_seg].copy(), seg_t1[:n_seg].copy(),
            seg_out[:n_seg].copy(), seg_lost[:n_seg].copy(), seg_off, seg_nodes, seg_counts,
            n_seg, planned, points[:n_points].copy(), alive_pts[:n_points].copy(), n_points,
            node_log[:n_log].copy(), n_log, failed, backfilled, bad_job)
