"""The event loop of a rule-based run whose jobs ask different per-unit resource vectors
(Eurora: cores, memory, GPUs, MICs per unit), in one function.

Mirrors :meth:`Simulator.run <dispatchlab.engine.simulator.Simulator.run>` driving a
:class:`~dispatchlab.dispatchers.rule_based.policy.Policy` with a static ordering, first-fit
(or the ``energy-model`` allocator of ``prb-power``) and strict,
non-strict, EASY or ``easy-power`` selection on a
:class:`~dispatchlab.dispatchers.machine.NodeMachine`: the same decision points, starts,
nodes, reservations and power figures. The machine is the node × resource free matrix and
its pooled totals (:mod:`.vector_parts`); a job fits when its demand fits the totals, the
allocator places it on the matrix and, under a power cap, what the start adds
(the meter's figure, from the free matrix after the decision's starts so far) fits what
the cap left at the start of the decision. EASY's head gets the reservation
``NodeMachine.reserve`` makes (placed by the allocator; its *extra* matrix: what stays
free beside it at the shadow time); a later job starts if it fits now and ends by the
shadow time, or fits on ``min(free, extra)`` (taking those resources from the extra
matrix); under ``easy-power`` the reservation holds in power too (:mod:`.vector_shadow`)
and a job on the extra matrix must also fit the extra power — costed, as ``EasyPower``
does, on the placement it would get on the whole free matrix. The reservation is kept
between decisions while only arrivals happened and the head is the same job
(``Easy._reserve_head``). The engine's power sum follows every start and end as
``MachinePower.refresh`` does.

Nodes may leave and come back (a scenario's ``node_down`` / ``node_up`` / ``alive_nodes``
rows, applied after the segment ends of their time by :mod:`.vector_rows`, as the
unit-slot scenario loop applies them): the jobs on a leaving node are aborted in the order
they started and re-queued (from zero or their last checkpoint) or failed; each run of a
job is a segment of its own, logged as the engine's recorder logs it, and a leaving node
draws its down power. On a fixed machine there are no rows and one segment per job.

Compiled by :mod:`dispatchlab.dispatchers.rule_based.compiled.kernel`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dispatchlab.dispatchers.rule_based.compiled.loop_parts import (
    ends_insert,
    ends_remove,
    ev_room,
    gather,
    idle_wait,
    q_compact,
    q_insert,
    queue_arrays,
    room,
    room_rows,
)
from dispatchlab.dispatchers.rule_based.compiled.queue_index import EPS
from dispatchlab.dispatchers.rule_based.compiled.vector_parts import (
    NEVER,
    any_free,
    fits_total,
    give_v,
    reread,
    start_delta,
    take_v,
    vfirst_fit,
    vplace,
    vreserve,
)
from dispatchlab.dispatchers.rule_based.compiled.vector_rows import apply_vector_rows
from dispatchlab.dispatchers.rule_based.compiled.vector_shadow import vpower_shadow
from dispatchlab.engine.compiled.slot_availability_ops import heap_pop, heap_push
from dispatchlab.engine.core.segment_parts import run_end, seg_room

#: Status codes (``STUCK``: jobs left queued on an idle machine; ``FALLBACK``: an idle
#: machine waited on cap rows beyond the engine's limit — the general loop reports both).
DONE, STUCK, FALLBACK = 0, 1, 3
#: Selection schemes.
STRICT, EASY, NONSTRICT = 0, 1, 2
#: Segment outcomes, as :mod:`dispatchlab.engine.recorder`.
COMPLETED, KILLED = 0, 1


def vector_loop(submit: Any, runtime: Any, walltime: Any, kill: bool, units: Any, est: Any,
                rank: Any, skip: Any, req: Any, cap: Any, sel: int, depth: int,
                easy_power: bool, power: bool, cap_w: float, used_w: float, mode: int,
                tab: Any, cols: Any, count_idle: bool, cur_w0: Any, job_w: Any, down_w: Any,
                c_time: Any, c_value: Any, energy: bool, atab: Any, acols: Any, scale: Any,
                s_time: Any, s_kind: Any, s_value: Any, s_off: Any, s_nodes: Any,
                requeue: bool, checkpoint: Any) -> Any:
    """Simulate; see the module docstring. ``runtime``/``walltime``: per job (``kill``: end
    a run at its wall-time); ``req[j]``: job ``j``'s per-unit vector; ``cap``: the nodes'
    capacity; ``sel``: :data:`STRICT`, :data:`EASY` or :data:`NONSTRICT`; ``depth < 0``: no
    depth limit.

    ``power``: a budget holds, of ``cap_w`` W (``inf``: none yet), which becomes
    ``c_value[k]`` at ``c_time[k]`` (decision points of their own, applied after the ends
    of their time). ``mode``, ``tab``, ``cols``, ``count_idle``: the power meter
    (:mod:`.vector_parts`); ``cur_w0``: what each node draws idle, ``used_w`` their sum as
    the engine starts it; ``job_w``: each job's own power; ``down_w``: what each node draws
    down. ``energy``: the ``energy-model`` allocator places jobs (:func:`.vplace_energy`:
    the platform's node model ``atab`` / ``acols``, the load weights ``scale``), else
    first-fit. Scenario row ``k`` at ``s_time[k]`` of kind ``s_kind[k]`` with
    ``s_value[k]`` (``alive_nodes``) or target nodes ``s_nodes[s_off[k]:s_off[k + 1]]``;
    ``requeue``: aborted jobs go back to the queue (else they fail), keeping the work up to
    their last ``checkpoint``.

    Returns ``(status, seg_job, seg_t0, seg_t1, seg_out, seg_lost, seg_off, seg_nodes,
    seg_counts, planned, points, alive_pts, node_log, failed, backfilled, watts, caps)``:
    segments in the order they started; rows of ``points`` are ``(time, queued, running,
    free total per resource)`` per decision point, ``alive_pts`` the usable capacity per
    resource then, ``watts`` the power after it and ``caps`` the cap then; ``node_log``
    rows ``(time, node, state)``.
    """
    n = submit.shape[0]
    n_nodes, n_res = cap.shape
    n_rows = s_time.shape[0]
    easy = sel == EASY
    free = cap.copy()
    ft = np.zeros(n_res, np.int64)
    alive_res = np.zeros(n_res, np.int64)
    for nd in range(n_nodes):
        for r in range(n_res):
            ft[r] += cap[nd, r]
            alive_res[r] += cap[nd, r]
    state = np.zeros(n_nodes, np.int64)
    moving = np.empty(n_nodes, np.int64)
    planned = np.full(n, -1, np.int64)
    # per job: its current placement, segment, work and end event
    alloc_pos = np.zeros(n, np.int64)
    alloc_len = np.zeros(n, np.int64)
    cur = np.full(n, -1, np.int64)
    fresh = np.ones(n, np.bool_)
    left = runtime.astype(np.float64)
    work_from = np.zeros(n, np.int64)
    end_seq = np.full(n, -1, np.int64)
    end_killed = np.zeros(n, np.bool_)
    run_pos = np.full(n, -1, np.int64)
    failed = np.zeros(n, np.bool_)
    run_list = np.empty(n, np.int64)  # running jobs in start order (victims' order)
    rn = 0
    # segments (grown on demand)
    seg_job = np.empty(n + 16, np.int64)
    seg_t0 = np.empty(n + 16, np.int64)
    seg_t1 = np.empty(n + 16, np.int64)
    seg_out = np.empty(n + 16, np.int64)
    seg_lost = np.empty(n + 16, np.int64)
    seg_pos = np.empty(n + 16, np.int64)
    seg_len = np.empty(n + 16, np.int64)
    n_seg = 0
    flat_nodes = np.empty(n + 2 * n_nodes + 2, np.int32)
    flat_counts = np.empty(n + 2 * n_nodes + 2, np.int32)
    n_flat = 0
    n_c = c_time.shape[0]
    crow = 0
    srow = 0
    idle_since = -1
    n_pts = 2 * n + n_c + n_rows + 1
    points = np.empty((n_pts, 3 + n_res), np.int64)
    alive_pts = np.empty((n_pts, n_res), np.int64)
    n_points = 0
    watts = np.empty(n_pts if power else 0, np.float64)
    caps = np.empty(n_pts if power else 0, np.float64)
    node_log = np.empty((n_nodes + 16, 3), np.int64)
    n_log = 0
    cur_w = cur_w0.copy()
    used = used_w
    q_job, q_rank, q_gone = queue_arrays(n)
    qn = 0
    # end events by (time, number), stale ones (aborted runs) dropped as the engine does
    h_time = np.empty(n + 16, np.int64)
    h_id = np.empty(n + 16, np.int64)
    h_pos = np.zeros(0, np.int64)
    ev_job = np.empty(n + 16, np.int64)
    hn = 0
    n_ev = 0
    e_time = np.empty(n, np.int64)  # running jobs by (expected end, job)
    e_job = np.empty(n, np.int64)
    en = 0
    end_of = np.zeros(n, np.int64)
    job_dec = np.full(n, -1, np.int64)  # the decision that started each job
    fin = np.empty(n, np.int64)
    requeued = np.empty(n, np.int64)
    # EASY's reservation (kept between decisions), its work arrays
    extra = np.zeros((n_nodes, n_res), np.int64)
    future = np.zeros((n_nodes, n_res), np.int64)
    scratch = np.zeros((n_nodes, n_res), np.int64)
    pooled = np.zeros(n_res, np.int64)
    sc_n = np.empty(n_nodes, np.int32)
    sc_c = np.empty(n_nodes, np.int32)
    vals = np.empty(n_nodes, np.float64)
    cand = np.empty(n + n_c + 1, np.int64)
    rank_work = (np.empty(n_nodes, np.int64), np.empty(n_nodes, np.int64),
                 np.empty(n_nodes, np.float64), np.empty(n_nodes, np.float64))
    power_in = (mode, tab, cols, count_idle, cap, state, down_w)
    alloc = (energy, cap, atab, acols, scale, rank_work)
    beside_m = np.zeros((n_nodes if energy else 0, n_res), np.int64)  # min(free, extra)
    work = (scratch, extra, vals, cand, sc_n, sc_c)
    in_power = easy_power and power
    head = -1
    shadow = -1
    plan_head = -1
    plan_time = -1
    spare = 0.0
    backfilled = 0
    nxt = 0
    status = DONE
    while nxt < n or rn > 0 or qn > 0:
        while hn > 0 and end_seq[ev_job[h_id[0]]] != h_id[0]:  # stale ends first
            hn = heap_pop(h_time, h_id, h_pos, hn)
        t = NEVER
        if nxt < n:
            t = submit[nxt]
        if hn > 0 and h_time[0] < t:
            t = h_time[0]
        if crow < n_c and c_time[crow] < t:
            t = c_time[crow]
        if srow < n_rows and s_time[srow] < t:
            t = s_time[srow]
        if t == NEVER:  # queued jobs, nothing pending: the engine's error
            status = STUCK
            break
        if nxt >= n:  # the engine's check of an idle machine waiting on timers only
            idle_since, too_long = idle_wait(idle_since, t, rn == 0)
            if too_long:
                status = FALLBACK
                break
        # 1. segment ends at t (stale entries ignored)
        n_fin = 0
        n_req = 0
        while hn > 0 and h_time[0] == t:
            e = h_id[0]
            job = ev_job[e]
            hn = heap_pop(h_time, h_id, h_pos, hn)
            if end_seq[job] != e:
                continue
            p = alloc_pos[job]
            give_v(free, ft, req[job], units[job], flat_nodes, flat_counts, p, alloc_len[job])
            if power:
                used -= job_w[job]
                used += reread(mode, tab, cols, count_idle, cap, free, cur_w, flat_nodes, p,
                               alloc_len[job])
            end_seq[job] = -1
            s = cur[job]
            seg_t1[s] = t
            seg_out[s] = KILLED if end_killed[job] else COMPLETED
            seg_lost[s] = 0
            cur[job] = -1
            for m in range(run_pos[job], rn - 1):
                run_list[m] = run_list[m + 1]
                run_pos[run_list[m]] = m
            rn -= 1
            run_pos[job] = -1
            fin[n_fin] = job
            n_fin += 1
        # 2. scenario rows at t: nodes leave (their jobs aborted) or come back
        nodes_changed = False
        if srow < n_rows and s_time[srow] == t:
            logged = n_log
            srow, tallies, node_log, n_log, used = apply_vector_rows(
                t, srow, (s_time, s_kind, s_value, s_off, s_nodes),
                (state, free, ft, cap, alive_res, req, moving),
                (run_list, run_pos, cur, end_seq, work_from, left, fresh, failed, checkpoint,
                 units), (seg_pos, seg_len, seg_t1, seg_out, seg_lost, flat_nodes, flat_counts),
                (alloc_pos, alloc_len), power,
                (mode, tab, cols, count_idle, cur_w, job_w, down_w), requeue,
                (rn, n_fin, n_req, 0), node_log, n_log, fin, requeued, used)
            rn, n_fin, n_req = tallies[0], tallies[1], tallies[2]
            nodes_changed = n_log > logged
        while crow < n_c and c_time[crow] == t:
            cap_w = c_value[crow]
            crow += 1
        # 3. submissions, then re-queued jobs, join the queue in rank order
        while nxt < n and submit[nxt] == t:
            if not skip[nxt]:
                qn = q_insert(q_job, q_rank, qn, nxt, rank[nxt])
            nxt += 1
        for k in range(n_req):
            qn = q_insert(q_job, q_rank, qn, requeued[k], rank[requeued[k]])
        # 4. the policy's decision
        if easy:
            for f in range(n_fin):
                job = fin[f]
                en = ends_remove(e_time, e_job, en, end_of[job], job)
        n_gone = 0
        if qn > 0 and any_free(ft):
            left_w = cap_w - used  # the workspace's power left
            used0 = used
            taken = 0.0
            i = 0
            stage = 0  # 0 the startable prefix, 1 behind the first job that waits
            stop = 0
            while i < qn:
                j = q_job[i]
                u = units[j]
                kind = 0  # 1 starts (prefix or non-strict), 2 ends by the shadow, 3 beside
                if stage == 1 and easy and t + est[j] > shadow:
                    kind = 3
                ok = fits_total(ft, req[j], u)
                if ok:
                    flat_nodes = room(flat_nodes, n_flat + 2 * n_nodes)
                    flat_counts = room(flat_counts, n_flat + 2 * n_nodes)
                    if energy:  # beside the head: on min(free, extra), as NodeMachine
                        if kind == 3:
                            for nd in range(n_nodes):
                                for r in range(n_res):
                                    beside_m[nd, r] = min(free[nd, r], extra[nd, r])
                        k, rest = vplace(alloc, beside_m if kind == 3 else free, req[j], u,
                                         flat_nodes, flat_counts, n_flat)
                    else:
                        k, rest = vfirst_fit(free, extra, kind == 3, req[j], u, flat_nodes,
                                             flat_counts, n_flat)
                    ok = rest == 0
                p_add = 0.0
                if ok and power:
                    p_add = start_delta(mode, tab, cols, count_idle, cap, free, job_w[j],
                                        req[j], flat_nodes, flat_counts, n_flat, k, vals)
                    ok = np.isinf(left_w) or p_add <= left_w + EPS
                if ok and kind == 3 and in_power:  # within the extra power, consumed
                    k2, rest2 = vplace(alloc, free, req[j], u, flat_nodes, flat_counts,
                                       n_flat + k)
                    p_full = np.inf
                    if rest2 == 0:
                        p_full = start_delta(mode, tab, cols, count_idle, cap, free,
                                             job_w[j], req[j], flat_nodes, flat_counts,
                                             n_flat + k, k2, vals)
                    if p_full > min(spare, left_w) + EPS:
                        ok = False
                    else:
                        spare -= p_full if p_full > 0.0 else 0.0
                if not ok:
                    if stage == 1:
                        i += 1
                        if i >= stop:
                            break
                        continue
                    if sel == STRICT or not any_free(ft):
                        break
                    stage = 1
                    stop = qn if depth < 0 else min(qn, i + depth)
                    if easy:  # reserve for the head, then backfill behind it
                        if in_power:
                            shadow = vreserve(t, j, free, ft, req, units, e_time, e_job, en,
                                              alloc_pos, alloc_len, flat_nodes, flat_counts,
                                              future, pooled, extra, sc_n, sc_c, alloc)
                            shadow, spare = vpower_shadow(
                                t, n_points, shadow, j, free, req, units, e_time, e_job, en,
                                job_dec, alloc_pos, alloc_len, flat_nodes, flat_counts,
                                power_in, job_w, used0 + taken, cap_w, c_time, c_value, crow,
                                work, alloc)
                        elif (i > 0 or n_fin > 0 or nodes_changed or j != head
                              or shadow <= t):
                            head = j
                            shadow = vreserve(t, j, free, ft, req, units, e_time, e_job, en,
                                              alloc_pos, alloc_len, flat_nodes, flat_counts,
                                              future, pooled, extra, sc_n, sc_c, alloc)
                        if shadow < NEVER and (plan_head != j or plan_time != shadow):
                            plan_head = j
                            plan_time = shadow
                            planned[j] = shadow
                    i += 1
                    if i >= stop:
                        break
                    continue
                # start job j on its placement: a segment opens, its end is scheduled
                p = n_flat
                take_v(free, ft, req[j], u, flat_nodes, flat_counts, p, k)
                n_flat += k
                if kind == 3:
                    for a in range(k):
                        nd = flat_nodes[p + a]
                        for r in range(n_res):
                            extra[nd, r] -= flat_counts[p + a] * req[j, r]
                if stage == 1 and easy:
                    backfilled += 1
                if power:  # the workspace, then the engine's running sum
                    left_w -= p_add
                    taken += p_add
                    used += job_w[j] + reread(mode, tab, cols, count_idle, cap, free, cur_w,
                                              flat_nodes, p, k)
                alloc_pos[j] = p
                alloc_len[j] = k
                job_dec[j] = n_points
                (seg_job, seg_t0, seg_t1, seg_out, seg_lost, seg_pos, seg_len) = seg_room(
                    (seg_job, seg_t0, seg_t1, seg_out, seg_lost, seg_pos, seg_len), n_seg)
                seg_job[n_seg] = j
                seg_t0[n_seg] = t
                seg_t1[n_seg] = -1
                seg_out[n_seg] = -1
                seg_lost[n_seg] = 0
                seg_pos[n_seg] = p
                seg_len[n_seg] = k
                cur[j] = n_seg
                n_seg += 1
                run_list[rn] = j
                run_pos[j] = rn
                rn += 1
                work_from[j] = t
                et = run_end(t, j, runtime, walltime, kill, fresh, left, end_killed)
                h_time, h_id, ev_job = ev_room(h_time, h_id, ev_job, n_ev)
                ev_job[n_ev] = j
                hn = heap_push(h_time, h_id, h_pos, hn, et, n_ev)
                end_seq[j] = n_ev
                n_ev += 1
                q_gone[i] = True
                n_gone += 1
                if easy:
                    end_of[j] = t + est[j]
                    en = ends_insert(e_time, e_job, en, end_of[j], j)
                i += 1
                if stage == 1 and (not any_free(ft) or i >= stop):
                    break
            if n_gone:
                qn = q_compact(q_job, q_rank, q_gone, qn)
        # 5. one sample per decision point
        if n_points >= points.shape[0]:
            points = room_rows(points, n_points + 1)
            alive_pts = room_rows(alive_pts, n_points + 1)
            if power:
                watts = room(watts, n_points + 1)
                caps = room(caps, n_points + 1)
        points[n_points, 0] = t
        points[n_points, 1] = qn
        points[n_points, 2] = rn
        for r in range(n_res):
            points[n_points, 3 + r] = ft[r]
            alive_pts[n_points, r] = alive_res[r]
        if power:
            watts[n_points] = used
            caps[n_points] = cap_w
        n_points += 1
        if rn == 0 and nxt >= n and qn > 0 and crow >= n_c and srow >= n_rows:
            status = STUCK
            break
    seg_off, seg_nodes, seg_counts = gather(seg_pos, seg_len, n_seg, flat_nodes, flat_counts)
    return (status, seg_job[:n_seg].copy(), seg_t0[:n_seg].copy(), seg_t1[:n_seg].copy(),
            seg_out[:n_seg].copy(), seg_lost[:n_seg].copy(), seg_off, seg_nodes, seg_counts,
            planned, points[:n_points].copy(), alive_pts[:n_points].copy(),
            node_log[:n_log].copy(), failed, backfilled, watts[:n_points].copy(),
            caps[:n_points].copy())
