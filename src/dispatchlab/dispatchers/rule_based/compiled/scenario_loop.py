"""The slot loop for a machine whose nodes leave and come back: one function, compiled.

Mirrors :meth:`Simulator.run <dispatchlab.engine.simulator.Simulator.run>` driving a
:class:`~dispatchlab.dispatchers.rule_based.policy.Policy` (static ordering, strict, EASY or
``easy-power`` selection, first-fit, a
:class:`~dispatchlab.dispatchers.machine.SlotMachine`) under a scenario of ``node_down`` /
``node_up`` / ``alive_nodes`` rows, as :mod:`.slot_loop` does for a fixed
machine: same decision points (submissions, live segment ends, scenario rows), same starts
and nodes, same EASY reservations (its backfill jumping over jobs that cannot start, as the
slot loop's does). A node that leaves aborts the jobs running on it (in the
order they started), which go back to the queue (``requeue``: from zero, or from their last
checkpoint) or fail; a job runs in several segments then, each logged as the engine's
recorder logs it. A power cap (fixed, or varying with the scenario's ``power_cap`` rows;
through the node model or the job power column) is checked at every start as the engine's
meter does.

At one time the engine applies segment ends, then scenario rows (in file order), then
submissions; then the dispatcher decides once. ``alive_nodes`` takes the highest-index
present nodes away and brings the lowest-index absent ones back (the engine's default when
the dispatcher has no ``choose_nodes``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dispatchlab.dispatchers.rule_based.compiled.dynamic_order import (
    STATIC,
    order_queue,
    order_work,
)
from dispatchlab.dispatchers.rule_based.compiled.loop_parts import (
    ends_remove,
    ev_room,
    gather,
    give_back,
    idle_wait,
    least_power,
    next_joiner,
    q_insert,
    queue_arrays,
    release_power,
    room,
    sample_point,
)
from dispatchlab.dispatchers.rule_based.compiled.node_rows import apply_node_rows
from dispatchlab.dispatchers.rule_based.compiled.queue_index import idx_new, idx_put
from dispatchlab.dispatchers.rule_based.compiled.start_scan import EXTRA, start_scan
from dispatchlab.engine.compiled.slot_availability_ops import heap_pop, heap_push

#: Status codes returned by :func:`scenario_loop` (``FALLBACK``: the general loop must run,
#: to raise its own error: a stuck queue, or an idle machine waiting too long).
DONE, FALLBACK, BROKEN = 0, 1, 2
NEVER = 1 << 62
#: Segment outcomes, as :mod:`dispatchlab.engine.recorder`.
COMPLETED, KILLED, ABORTED = 0, 1, 2
#: Scenario row kinds.
NODE_DOWN, NODE_UP, ALIVE_NODES = 0, 1, 2


def scenario_loop(submit: Any, runtime: Any, walltime: Any, kill: bool, units: Any,
                  est: Any, rank: Any, skip: Any, slots: Any, easy: bool, depth: int,
                  easy_power: bool, cap_res: Any, req: Any, s_time: Any, s_kind: Any, s_value: Any,
                  s_off: Any, s_nodes: Any, requeue: bool, checkpoint: Any, power: bool,
                  cap_w: float, used_w: float, node_w: Any, down_w: Any, job_w: Any,
                  unit_w: float, c_time: Any, c_value: Any, score: int, term_a: Any,
                  term_b: Any) -> Any:
    """Simulate; see the module docstring.

    ``runtime``/``walltime``: per job (``kill``: end a run at its wall-time);
    ``cap_res[n, r]``: node capacity per resource, ``req``: the per-unit request; scenario
    row ``k`` at ``s_time[k]`` of kind ``s_kind[k]`` with ``s_value[k]`` (``alive_nodes``)
    or target nodes ``s_nodes[s_off[k]:s_off[k + 1]]``; ``easy_power``: EASY's reservation
    is ``easy-power``'s under a cap (:mod:`.power_shadow`). ``power``: a cap of ``cap_w`` W
    holds, ``c_value[k]`` from ``c_time[k]`` on (waited for when it falls), the power
    tabulated as in :mod:`.slot_loop` (``node_w[n, k]``: node ``n`` on with ``k`` slots in
    use, ``down_w[n]``: node ``n`` down). ``score``, ``term_a``, ``term_b``: a dynamic
    ordering, as in :mod:`.slot_loop`.

    Returns ``(status, seg_job, seg_t0, seg_t1, seg_out, seg_lost, seg_off, seg_nodes,
    seg_counts, n_seg, planned, points, alive_pts, n_points, node_log, n_log, failed,
    backfilled, bad_job, watts, caps)``: segments in the order they started; ``points``
    rows ``(time, queued, running, busy units)`` and ``alive_pts`` the usable capacity per
    resource, per decision point, ``watts`` the IT power after each and ``caps`` the cap
    then (power runs only); ``node_log`` rows ``(time, node, state)``.
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
    # power (as the slot loop): what each node draws now, the engine's running sum
    n_c = c_time.shape[0]
    crow = 0  # the next cap row
    watts = np.empty(2 * n + n_rows + n_c + 16 if power else 0, np.float64)
    caps = np.empty(2 * n + n_rows + n_c + 16 if power else 0, np.float64)
    cur_w = np.zeros(n_nodes, np.float64)
    least_w = least_power(job_w, unit_w, power)  # a lower bound of what any job adds
    if power:
        for nd in range(n_nodes):
            cur_w[nd] = node_w[nd, 0]
    used = used_w
    # running jobs in start order (the engine's dict order: victims are aborted in it)
    run_list = np.empty(n, np.int64)
    moving = np.empty(n_nodes, np.int64)  # the nodes a scenario row moves
    rn = 0
    # queue sorted by rank
    q_job, q_rank, q_gone = queue_arrays(n)
    qn = 0
    # EASY without a depth limit: the queue indexed by rank, as in the slot loop
    indexed = easy and depth < 0 and score == STATIC  # (a dynamic order: no fixed ranks)
    size, t_u, t_e, t_p = idx_new(n, indexed, power)
    work = order_work(n, score)
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
    res = np.full(5, -1, np.int64)  # EASY's head, shadow, extra, last plan (start_scan)
    res[EXTRA] = 0
    started = np.empty(n, np.int64)  # one decision's starts and their placements
    # easy-power under a cap: each running job's start and placement, work arrays
    on = easy_power and power
    job_at = np.full((max(n, n_nodes) if on else 0, 4), -1, np.int64)
    scratch_w = np.empty(n_nodes if on else 0, np.float64)
    st_pos = np.empty(n, np.int64)
    st_len = np.empty(n, np.int64)
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
        if crow < n_c and c_time[crow] < t:
            t = c_time[crow]
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
            if power:
                used = release_power(used, job_w[job], node_w, cur_w, node_free, slots,
                                      flat_nodes, seg_pos[s], seg_len[s])
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
        # 2. scenario rows at t (:func:`.node_rows.apply_node_rows`)
        if srow < n_rows and s_time[srow] == t:
            logged = n_log
            srow, counts, node_log, n_log, used = apply_node_rows(
                t, srow, (s_time, s_kind, s_value, s_off, s_nodes),
                (state, node_free, slots, alive_res, cap_res, moving),
                (run_list, run_pos, cur, end_seq, work_from, left, fresh, failed, checkpoint,
                 units), (seg_pos, seg_len, seg_t1, seg_out, seg_lost, flat_nodes, flat_counts),
                power, (node_w, cur_w, job_w), down_w, requeue,
                (rn, lo, busy, n_fin, n_req, queued, alive_slots), node_log, n_log, fin,
                requeued, used)
            rn, lo, busy, n_fin, n_req, queued, alive_slots = counts
            nodes_changed = n_log > logged
        while crow < n_c and c_time[crow] == t:  # cap rows (waited for when it falls)
            cap_w = c_value[crow]
            crow += 1
        # 3. submissions at t, then requeued jobs, join the queue in rank order
        k_sub = 0
        while True:
            jn, nxt, k_sub, submitted = next_joiner(t, submit, skip, nxt, requeued, k_sub,
                                                    n_req)
            if jn < 0:
                break
            if submitted:
                queued += 1
            r = rank[jn]
            qn = q_insert(q_job, q_rank, qn, jn, r)
            if indexed:
                idx_put(t_u, t_e, t_p, size, r, units[jn], est[jn],
                        job_w[jn] + units[jn] * unit_w if power else 0.0)
        # 4. the policy's decision: the machine forgets jobs that stopped running ...
        for f in range(n_fin):
            job = fin[f]
            if easy:
                en = ends_remove(e_time, e_job, en, end_of[job], job)
        free = alive_slots - busy
        # ... then starts the startable prefix (and, for EASY, backfills)
        if qn > 0 and free > 0:
            if score != STATIC:  # a dynamic ordering: the queue sorted afresh
                order_queue(score, t, q_job, q_rank, qn, submit, term_a, term_b, work)
            renew = n_fin > 0 or nodes_changed
            (status, bad_job, qn, n_new, lo, n_flat, flat_nodes, flat_counts, free, used, en,
             n_back, _) = start_scan(
                t, renew, (q_job, q_rank, q_gone), qn, units, est, planned, node_free, lo,
                slots, flat_nodes, flat_counts, n_flat, free, easy, depth, True, size,
                (t_u, t_e, t_p), (e_time, e_job, end_of), en, res, power, cap_w - used,
                used, least_w, unit_w, (node_w, cur_w, job_w), (started, st_pos, st_len),
                (easy_power, n_points, cap_w, crow, c_time, c_value, job_at, scratch_w))
            backfilled += n_back
            if status != DONE:
                break
            for k in range(n_new):  # the engine opens a segment and schedules its end
                j = started[k]
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
                seg_pos[n_seg] = st_pos[k]
                seg_len[n_seg] = st_len[k]
                cur[j] = n_seg
                n_seg += 1
                busy += units[j]
                run_list[rn] = j
                run_pos[j] = rn
                rn += 1
                queued -= 1
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
        # 5. one sample per decision point
        points, alive_pts, watts, caps = sample_point(points, alive_pts, watts, caps, n_points, t,
                                                      queued, rn, busy, alive_res, power, used,
                                                      cap_w)
        n_points += 1
    # placements in segment order
    seg_off, seg_nodes, seg_counts = gather(seg_pos, seg_len, n_seg, flat_nodes, flat_counts)
    return (status, seg_job[:n_seg].copy(), seg_t0[:n_seg].copy(), seg_t1[:n_seg].copy(),
            seg_out[:n_seg].copy(), seg_lost[:n_seg].copy(), seg_off, seg_nodes, seg_counts,
            n_seg, planned, points[:n_points].copy(), alive_pts[:n_points].copy(), n_points,
            node_log[:n_log].copy(), n_log, failed, backfilled, bad_job,
            watts[:n_points].copy(), caps[:n_points].copy())

