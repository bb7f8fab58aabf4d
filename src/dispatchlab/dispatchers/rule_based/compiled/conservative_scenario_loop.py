"""Conservative backfilling on a machine that changes: nodes leaving and coming back, a
power cap (fixed, or varying with a scenario's ``power_cap`` rows), or both. One function,
compiled.

Mirrors :meth:`Simulator.run <dispatchlab.engine.simulator.Simulator.run>` driving a
:class:`~dispatchlab.dispatchers.rule_based.policy.Policy` with a static ordering,
:class:`~dispatchlab.dispatchers.rule_based.selection.conservative.Conservative` selection
without a depth limit, first-fit allocation and a
:class:`~dispatchlab.dispatchers.machine.SlotMachine`, as :mod:`.conservative_loop` does for
a fixed machine without a cap, with what the general loop's scheme does when the machine
changes:

- **Nodes leave or come back** (:func:`.node_rows.apply_node_rows`, shared with
  :mod:`.scenario_loop`: jobs on a leaving node aborted in start order, re-queued from zero
  or a checkpoint, or failed; each run its own segment; the node log): the availability is
  made afresh from the usable slots and the running jobs' holds until their expected ends,
  and every queued job is reserved again in priority order (a *rebuild*); a job asking more
  slots than the usable nodes have holds no reservation until they come back.
- **A power cap refuses a due start** (its first-fit placement costed from the tabulated
  node power against what the cap leaves, as the machine's ``power_allows``): its hold is
  given back and it is reserved again at its earliest fit — now —, and at the next decision
  point that reservation is in the past, so the book is rebuilt
  (:func:`~dispatchlab.dispatchers.slot_book_ops.rebuild_book`, the general loop's own
  rebuild). The engine's running power sum follows starts, ends, aborts and node changes as
  in :mod:`.scenario_loop`.
- Otherwise as the fixed-machine loop: early ends compress the book, arrivals (and re-queued
  jobs) are reserved in priority order, due reservations start by (start, job), the scheme
  asks to be woken at the earliest reservation.

A job that would outlive its expected end (no wall-time kill, run time over the estimate:
the general loop holds it and rebuilds) stops the loop with status ``OUTLIVES``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dispatchlab.dispatchers.rule_based.compiled.book_parts import compress_book
from dispatchlab.dispatchers.rule_based.compiled.loop_parts import (
    ev_room,
    first_fit,
    gather,
    idle_wait,
    next_joiner,
    q_insert,
    reread_nodes,
    room,
    sample_point,
    take,
)
from dispatchlab.dispatchers.slot_book_ops import TABLES, rebuild_book
from dispatchlab.engine.compiled.slot_availability_ops import (
    NEVER,
    NONE,
    avail_add,
    avail_advance,
    avail_reserve,
    book_pop_due,
    heap_pop,
    heap_push,
)
from dispatchlab.engine.core.node_rows import (
    COMPLETED,
    KILLED,
    ON,
    apply_node_rows,
    stop_run,
)

#: Status codes (``FALLBACK``: the general loop must run to report a stuck queue or an idle
#: machine waiting too long; ``OUTLIVES``: a job would outlive its expected end).
DONE, FALLBACK, BROKEN, OUTLIVES = 0, 1, 2, 3
#: The engine's tolerance of a start's power against what the cap leaves.
EPS = 1e-6


def conservative_scenario_loop(submit: Any, runtime: Any, walltime: Any, kill: bool,
                               units: Any, est: Any, rank: Any, skip: Any, slots: Any,
                               cap_res: Any, req: Any, s_time: Any, s_kind: Any,
                               s_value: Any, s_off: Any, s_nodes: Any, requeue: bool,
                               checkpoint: Any, power: bool, cap_w: float, used_w: float,
                               node_w: Any, down_w: Any, job_w: Any, c_time: Any,
                               c_value: Any) -> Any:
    """Simulate; see the module docstring. Arguments as :func:`.scenario_loop.scenario_loop`'s
    (no EASY ones).

    Returns ``(status, seg_job, seg_t0, seg_t1, seg_out, seg_lost, seg_off, seg_nodes,
    seg_counts, n_seg, planned, points, alive_pts, n_points, node_log, n_log, failed,
    compressions, rebuilds, moves, bad_job, watts, caps)`` (as the scenario loop's, with the
    scheme's statistics).
    """
    n = submit.shape[0]
    n_nodes = slots.shape[0]
    n_res = req.shape[0]
    n_rows = s_time.shape[0]
    node_free = slots.copy()
    state = np.full(n_nodes, ON, np.int64)
    alive_res = np.zeros(n_res, np.int64)
    for nd in range(n_nodes):
        for r in range(n_res):
            alive_res[r] += cap_res[nd, r]
    alive_slots = 0
    for nd in range(n_nodes):
        alive_slots += slots[nd]
    lo = 0
    planned = np.full(n, -1, np.int64)
    cur = np.full(n, -1, np.int64)
    fresh = np.ones(n, np.bool_)
    left = runtime.astype(np.float64)
    work_from = np.zeros(n, np.int64)
    end_seq = np.full(n, -1, np.int64)
    end_killed = np.zeros(n, np.bool_)
    run_pos = np.full(n, -1, np.int64)
    failed = np.zeros(n, np.bool_)
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
    n_c = c_time.shape[0]
    crow = 0
    watts = np.empty(2 * n + n_rows + n_c + 16 if power else 0, np.float64)
    caps = np.empty(2 * n + n_rows + n_c + 16 if power else 0, np.float64)
    cur_w = np.zeros(n_nodes, np.float64)
    if power:
        for nd in range(n_nodes):
            cur_w[nd] = node_w[nd, 0]
    used = used_w
    run_list = np.empty(n, np.int64)
    moving = np.empty(n_nodes, np.int64)
    rn = 0
    q_job = np.empty(n, np.int64)
    q_rank = np.empty(n, np.int64)
    qn = 0
    # the engine's events: segment ends (job ≥ 0; stale once the job stopped otherwise) and
    # wake-ups (job −1), by (time, number)
    h_time = np.empty(2 * n + 16, np.int64)
    h_id = np.empty(2 * n + 16, np.int64)
    h_pos = np.zeros(0, np.int64)
    ev_job = np.empty(2 * n + 16, np.int64)
    hn = 0
    n_ev = 0
    fin = np.empty(n, np.int64)
    requeued = np.empty(n, np.int64)
    busy = 0
    queued = 0
    # the availability, the book of reservations (jobs by (start, job)), expected ends
    times = np.zeros(64, np.int64)
    pfree = np.zeros(64, np.int64)
    pn = 1
    pfree[0] = alive_slots
    r_start = np.full(n, NONE, np.int64)
    r_end = np.full(n, NONE, np.int64)
    b_key = np.zeros(n, np.int64)
    b_heap = np.zeros(n, np.int64)
    b_pos = np.full(n, -1, np.int64)
    bn = 0
    run_end = np.zeros(n, np.int64)
    moved = np.empty(n, np.int64)
    best = np.zeros((TABLES, 0), np.int64)  # the compression's skipping tables
    cached = np.full(TABLES, -1, np.int64)
    due = np.empty(n, np.int64)
    new = np.empty(n, np.int64)
    was = np.zeros(n, np.int64)
    last_wake = -1
    compressions = 0
    rebuilds = 0
    moves = 0
    nxt = 0
    srow = 0
    idle_since = -1
    status = DONE
    bad_job = -1
    tables = (node_w, cur_w, job_w)
    while nxt < n or queued > 0 or rn > 0:
        while hn > 0 and ev_job[h_id[0]] >= 0 and end_seq[ev_job[h_id[0]]] != h_id[0]:
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
                status = FALLBACK
                bad_job = q_job[0] if qn > 0 else -1
                break
            idle_since, too_long = idle_wait(idle_since, t, rn == 0)
            if too_long:
                status = FALLBACK
                break
        n_fin = 0
        n_req = 0
        nodes_changed = False
        runs = (run_list, run_pos, cur, end_seq, work_from, left, fresh, failed, checkpoint,
                units)
        segs = (seg_pos, seg_len, seg_t1, seg_out, seg_lost, flat_nodes, flat_counts)
        # 1. segment ends and wake-ups at t
        while hn > 0 and h_time[0] == t:
            job = ev_job[h_id[0]]
            live = job >= 0 and end_seq[job] == h_id[0]
            hn = heap_pop(h_time, h_id, h_pos, hn)
            if not live:
                continue
            s = cur[job]
            lo, used, rn = stop_run(t, job, runs, segs, node_free, slots, lo, power, tables,
                                    used, rn)
            busy -= units[job]
            seg_out[s] = KILLED if end_killed[job] else COMPLETED
            seg_lost[s] = 0
            fin[n_fin] = job
            n_fin += 1
        # 2. scenario rows, then cap rows, at t
        if srow < n_rows and s_time[srow] == t:
            logged = n_log
            srow, counts, node_log, n_log, used = apply_node_rows(
                t, srow, (s_time, s_kind, s_value, s_off, s_nodes),
                (state, node_free, slots, alive_res, cap_res, moving), runs, segs, power,
                tables, down_w, requeue, (rn, lo, busy, n_fin, n_req, queued, alive_slots),
                node_log, n_log, fin, requeued, used)
            rn, lo, busy, n_fin, n_req, queued, alive_slots = counts
            nodes_changed = n_log > logged
        while crow < n_c and c_time[crow] == t:
            cap_w = c_value[crow]
            crow += 1
        # 3. submissions, then re-queued jobs, join the queue in rank order
        n_new = 0
        k_sub = 0
        while True:
            jn, nxt, k_sub, submitted = next_joiner(t, submit, skip, nxt, requeued, k_sub,
                                                    n_req)
            if jn < 0:
                break
            if submitted:
                queued += 1
            qn = q_insert(q_job, q_rank, qn, jn, rank[jn])
            new[n_new] = jn
            n_new += 1
        # 4. the policy's decision: the availability drops the past ...
        pn = avail_advance(times, pfree, pn, t)
        freed = False
        if nodes_changed:  # ... is made afresh from the usable slots and running jobs ...
            times[0] = t
            pfree[0] = alive_slots
            pn = 1
            for m in range(rn):
                j = run_list[m]
                if run_end[j] > t:
                    times = room(times, pn + 2)
                    pfree = room(pfree, pn + 2)
                    pn = avail_add(times, pfree, pn, t, run_end[j], -units[j])
        else:  # ... or gets back what ended early
            for f in range(n_fin):
                j = fin[f]
                if run_end[j] > t:
                    times = room(times, pn + 2)
                    pfree = room(pfree, pn + 2)
                    pn = avail_add(times, pfree, pn, t, run_end[j], units[j])
                    freed = True
        if nodes_changed:  # every queued job reserved again, in priority order
            rebuilds += 1
            for h in range(bn):
                j = b_heap[h]
                r_start[j] = NONE
                r_end[j] = NONE
                b_pos[j] = -1
            bn = 0
            for k in range(qn):
                j = q_job[k]
                times = room(times, pn + 2)
                pfree = room(pfree, pn + 2)
                pn, bn, s = avail_reserve(times, pfree, pn, j, units[j], est[j], NEVER,
                                          r_start, r_end, b_key, b_heap, b_pos, bn)
                if s != NONE:
                    planned[j] = s
        elif bn > 0 and b_key[0] < t:  # a reservation left in the past: rebuild the book
            rebuilds += 1
            times = room(times, pn + 4 * bn + 4)
            pfree = room(pfree, pn + 4 * bn + 4)
            pn, bn, n_placed = rebuild_book(times, pfree, pn, q_job, qn, r_start, r_end,
                                            units, t, b_key, b_heap, b_pos, bn, was, moved)
            for m in range(n_placed):
                planned[moved[m]] = r_start[moved[m]]
        elif freed:  # ... compresses the reservations in priority order
            compressions += 1
            times, pfree, pn, n_moved, best = compress_book(
                times, pfree, pn, q_job, qn, r_start, r_end, units, t, (b_key, b_heap, b_pos),
                bn, moved, planned, best, cached)
            moves += n_moved
        # ... reserves the arrivals in priority order ...
        for a in range(1, n_new):
            x = new[a]
            b = a - 1
            while b >= 0 and rank[new[b]] > rank[x]:
                new[b + 1] = new[b]
                b -= 1
            new[b + 1] = x
        for a in range(n_new):
            j = new[a]
            if b_pos[j] >= 0:
                continue  # reserved by the rebuild
            times = room(times, pn + 2)
            pfree = room(pfree, pn + 2)
            pn, bn, s = avail_reserve(times, pfree, pn, j, units[j], est[j], NEVER, r_start,
                                      r_end, b_key, b_heap, b_pos, bn)
            if s != NONE:
                planned[j] = s
        # ... and starts what is due now, by (reserved start, job), first-fit on the nodes,
        # each within what the cap leaves (else reserved again)
        bn, n_due = book_pop_due(r_start, b_key, b_heap, b_pos, bn, t, due)
        power_left = cap_w - used
        n_started = 0
        for a in range(n_due):
            j = due[a]
            u = units[j]
            flat_nodes = room(flat_nodes, n_flat + n_nodes)
            flat_counts = room(flat_counts, n_flat + n_nodes)
            p = n_flat
            k_ff, left_u = first_fit(node_free, lo, u, flat_nodes, flat_counts, p)
            if left_u > 0:
                status = BROKEN
                bad_job = j
                break
            if power:  # what the start adds, node by node (the machine's power_allows)
                job_p = job_w[j]
                for a2 in range(k_ff):
                    nd = flat_nodes[p + a2]
                    k = slots[nd] - node_free[nd]
                    job_p += node_w[nd, k + flat_counts[p + a2]] - node_w[nd, k]
                if not job_p <= power_left + EPS:
                    times = room(times, pn + 4)
                    pfree = room(pfree, pn + 4)
                    pn = avail_add(times, pfree, pn, t, r_end[j], u)
                    pn, bn, s = avail_reserve(times, pfree, pn, j, u, est[j], NEVER, r_start,
                                              r_end, b_key, b_heap, b_pos, bn)
                    if s != NONE:
                        planned[j] = s
                    continue
                power_left -= job_p
            lo = take(node_free, flat_nodes, flat_counts, p, k_ff, lo)
            n_flat += k_ff
            if power:  # the engine's running sum
                used += job_w[j] + reread_nodes(node_w, cur_w, node_free, slots, flat_nodes,
                                                p, k_ff)
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
            seg_len[n_seg] = k_ff
            cur[j] = n_seg
            n_seg += 1
            busy += u
            run_list[rn] = j
            run_pos[j] = rn
            rn += 1
            queued -= 1
            n_started += 1
            run_end[j] = r_end[j]
            # the run's end: exact for a first run, from the work left otherwise
            work_from[j] = t
            natural = t + runtime[j] if fresh[j] else t + np.int64(np.ceil(left[j]))
            kill_at = t + walltime[j] if kill else NEVER
            end_killed[j] = kill_at < natural
            et = int(kill_at if kill_at < natural else natural)
            if et > run_end[j]:
                status = OUTLIVES  # it would outlive its expected end
                bad_job = j
                break
            h_time, h_id, ev_job = ev_room(h_time, h_id, ev_job, n_ev)
            ev_job[n_ev] = j
            hn = heap_push(h_time, h_id, h_pos, hn, et, n_ev)
            end_seq[j] = n_ev
            n_ev += 1
        if status != DONE:
            break
        if n_started:  # started jobs leave the queue
            w = 0
            for k in range(qn):
                if cur[q_job[k]] < 0:
                    q_job[w] = q_job[k]
                    q_rank[w] = q_rank[k]
                    w += 1
            qn = w
        # the scheme asks to be woken at the earliest reservation
        wake = b_key[0] if bn > 0 else NEVER
        if wake != last_wake and t < wake < NEVER:
            last_wake = wake
            h_time, h_id, ev_job = ev_room(h_time, h_id, ev_job, n_ev)
            ev_job[n_ev] = -1
            hn = heap_push(h_time, h_id, h_pos, hn, wake, n_ev)
            n_ev += 1
        # 5. one sample per decision point
        points, alive_pts, watts, caps = sample_point(points, alive_pts, watts, caps, n_points, t,
                                                      queued, rn, busy, alive_res, power, used,
                                                      cap_w)
        n_points += 1
    seg_off, seg_nodes, seg_counts = gather(seg_pos, seg_len, n_seg, flat_nodes, flat_counts)
    return (status, seg_job[:n_seg].copy(), seg_t0[:n_seg].copy(), seg_t1[:n_seg].copy(),
            seg_out[:n_seg].copy(), seg_lost[:n_seg].copy(), seg_off, seg_nodes, seg_counts,
            n_seg, planned, points[:n_points].copy(), alive_pts[:n_points].copy(), n_points,
            node_log[:n_log].copy(), n_log, failed, compressions, rebuilds, moves, bad_job,
            watts[:n_points].copy(), caps[:n_points].copy())
