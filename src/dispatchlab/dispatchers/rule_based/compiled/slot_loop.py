"""The whole event loop of a rule-based run on interchangeable unit slots, in one function.

Mirrors, step for step, :meth:`Simulator.run <dispatchlab.engine.simulator.Simulator.run>`
driving a :class:`~dispatchlab.dispatchers.rule_based.policy.Policy` with a static ordering, strict
or
EASY selection, first-fit allocation and a
:class:`~dispatchlab.dispatchers.machine.SlotMachine`: same decision points, same starts,
same nodes, same EASY reservations (``easy-power``'s in power too under a cap:
:mod:`.power_shadow`). Compiled by :mod:`dispatchlab.dispatchers.rule_based.compiled.kernel`.

Under a fixed power cap (node model or job power column, :mod:`.slot_power`) a job also
needs its power to fit: the loop tries its first-fit placement, costs it node by node from
the tabulated node power (what the dispatcher's workspace computes) against what the cap
left at the start of the decision, and keeps the machine's power as the engine's running sum
(each start adds the job's own power plus its nodes' change, each end removes them), so a
job that fits in slots but not in power is EASY's head exactly as in the general loop.

The decision is written out here rather than calling :func:`~.start_scan.start_scan` (the
scenario loop's): as a part, copied in by Numba, it cost this loop 1.45–1.7× on HPC2N FIFO
and EASY (loop CPU time, 2026-11-27), its arrays bound anew at every decision.

State is plain arrays (:mod:`.loop_parts`): the queue sorted by rank, a heap of end
events by (end, sequence) like the engine's, the running jobs sorted by (expected end, job)
for EASY, free unit slots per node. With one resource vector per unit, a node's free slots are
``min_r free[node, r] // req[r]``, so first-fit on slots takes exactly the nodes and counts
first-fit takes on the resource matrix.
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
    backfill_kind,
    easy_shadow,
    ends_insert,
    ends_remove,
    first_fit,
    fixed_machine,
    gather,
    give_back,
    idle_wait,
    least_power,
    q_compact,
    q_insert,
    queue_arrays,
    release_power,
    reread_nodes,
    room,
    take,
)
from dispatchlab.dispatchers.rule_based.compiled.power_shadow import power_shadow
from dispatchlab.dispatchers.rule_based.compiled.queue_index import (
    ABSENT,
    EPS,
    idx_jump,
    idx_new,
    idx_put,
)
from dispatchlab.engine.compiled.slot_availability_ops import heap_pop, heap_push

#: Status codes returned by :func:`slot_loop` (``FALLBACK``: an idle machine waited on cap
#: rows beyond the engine's limit; the general loop runs, to report it).
DONE, STUCK, BROKEN, FALLBACK = 0, 1, 2, 3
#: A shadow time meaning "no reservation can be made now" (the machine's ``NEVER``).
NEVER = 1 << 62


def slot_loop(submit: Any, dur: Any, units: Any, est: Any, rank: Any, skip: Any,
              slots: Any, easy: bool, depth: int, easy_power: bool, power: bool,
              cap_w: float, used_w: float,
              node_w: Any, job_w: Any, unit_w: float, c_time: Any, c_value: Any,
              score: int, term_a: Any, term_b: Any) -> Any:
    """Simulate; see the module docstring. ``depth < 0``: no backfill depth limit;
    ``easy_power``: EASY's reservation is ``easy-power``'s under a cap (:mod:`.power_shadow`:
    in power too, made afresh at every decision, later jobs on the extra slots taking no
    more than the extra power).

    ``power``: a power cap of ``cap_w`` W holds, which becomes ``c_value[k]`` at
    ``c_time[k]`` (a scenario's ``power_cap`` rows: decision points of their own, applied
    after the segment ends of their time, as the engine applies them). ``node_w[n, k]`` is
    what node ``n`` draws with ``k`` of its slots in use, ``job_w[j]`` job ``j``'s own
    power (job-power mode; 0 with the node model), ``used_w`` the machine's power with
    every node idle, ``unit_w`` a lower bound of what one unit adds to a node (to skip
    hopeless jobs).

    ``score``: a dynamic ordering (:mod:`.dynamic_order`; 0: static, the ranks hold), its
    per-job terms ``term_a``, ``term_b``: the queue is sorted by it at every decision.

    Returns ``(status, start, end, planned, offsets, nodes, counts, points, n_points,
    backfilled, bad_job, watts, scanned, caps, order)``: job ``j`` ran on
    ``nodes[offsets[j]:offsets[j + 1]]`` with ``counts`` units each; ``points`` rows are
    ``(time, queued, running, busy slots)`` per decision point, ``watts`` the IT power after
    each and ``caps`` the cap then (power runs only), ``scanned`` how many queue entries
    EASY's backfill scans examined (without a depth limit they jump over jobs that cannot
    start: the queue index), ``order`` the jobs in the order they started.
    """
    n = submit.shape[0]
    n_nodes = slots.shape[0]
    (total, node_free, start, end, planned, alloc_pos, alloc_len, flat_nodes,
     flat_counts) = fixed_machine(n, slots)
    lo = 0  # every node below lo has no free slot
    n_flat = 0
    n_c = c_time.shape[0]
    crow = 0  # the next cap row
    idle_since = -1
    # each point consumes a submission, an end or a cap row
    points = np.empty((2 * n + n_c + 1, 4), np.int64)
    n_points = 0
    watts = np.empty(2 * n + n_c + 1 if power else 0, np.float64)
    caps = np.empty(2 * n + n_c + 1 if power else 0, np.float64)
    cur_w = np.zeros(n_nodes, np.float64)  # what each node draws now (power runs)
    if power:
        for nd in range(n_nodes):
            cur_w[nd] = node_w[nd, 0]
    used = used_w  # the engine's running sum, updated in its order
    left = 0.0  # what the cap leaves in this decision (the dispatcher's workspace)
    job_p = 0.0  # what the job being tried adds
    n_try = 0  # its tentative placement: flat entries [n_flat, n_flat + n_try)
    least_w = least_power(job_w, unit_w, power)  # a lower bound of what any job adds
    in_power = easy_power and power  # easy-power's reservation (plain EASY without a cap)
    spare = 0.0  # its extra power
    used0 = used_w  # the machine's power when the decision began
    taken = 0.0  # what the decision's starts add
    # each job's starting decision and placement, a work column (:func:`power_shadow`)
    job_at = np.full((max(n, n_nodes) if in_power else 0, 4), -1, np.int64)
    scratch_w = np.empty(n_nodes if in_power else 0, np.float64)
    q_job, q_rank, q_gone = queue_arrays(n)
    qn = 0
    # EASY without a depth limit: the queue indexed by rank (minima of units, estimate and
    # least power per subtree), so a backfill scan jumps from one job that may start to the
    # next instead of examining every queued job (near-linear on long, blocked queues)
    indexed = easy and depth < 0 and score == STATIC  # (a dynamic order: no fixed ranks)
    size, t_u, t_e, t_p = idx_new(n, indexed, power)
    work = order_work(n, score)
    h_time = np.empty(n, np.int64)  # end events (one per start) by (time, number) ...
    h_id = np.empty(n, np.int64)
    h_pos = np.zeros(0, np.int64)  # (no positions tracked)
    ev_job = np.empty(n, np.int64)  # ... event e ends job ev_job[e]
    hn = 0
    e_time = np.empty(n, np.int64)  # EASY: running jobs by (expected end, job)
    e_job = np.empty(n, np.int64)
    en = 0
    end_of = np.zeros(n, np.int64)
    fin = np.empty(n, np.int64)
    free = total
    running = 0
    seq = 0
    head = -1
    shadow = -1
    plan_head = -1
    plan_time = -1
    extra = 0
    backfilled = 0
    scanned = 0  # queue entries the backfill scans examined
    order = np.empty(n, np.int64)  # jobs in the order they started
    n_started = 0
    nxt = 0
    status = DONE
    bad_job = -1
    while nxt < n or hn > 0 or qn > 0:
        t = submit[nxt] if nxt < n else (h_time[0] if hn > 0 else c_time[crow])
        if hn > 0 and h_time[0] < t:
            t = h_time[0]
        if crow < n_c and c_time[crow] < t:
            t = c_time[crow]
        if nxt >= n:  # the engine's check of an idle machine waiting on timers only
            idle_since, too_long = idle_wait(idle_since, t, hn == 0)
            if too_long:
                status = FALLBACK
                break
        # 1. completions at t: the engine frees the nodes
        n_fin = 0
        while hn > 0 and h_time[0] == t:
            job = ev_job[h_id[0]]
            hn = heap_pop(h_time, h_id, h_pos, hn)
            p = alloc_pos[job]
            lo = give_back(node_free, flat_nodes, flat_counts, p, alloc_len[job], lo)
            if power:
                used = release_power(used, job_w[job], node_w, cur_w, node_free, slots,
                                     flat_nodes, p, alloc_len[job])
            running -= 1
            end[job] = t
            fin[n_fin] = job
            n_fin += 1
        # cap rows at t (after the ends, as the engine's event order has them)
        while crow < n_c and c_time[crow] == t:
            cap_w = c_value[crow]
            crow += 1
        # 2. submissions at t join the queue in rank order
        while nxt < n and submit[nxt] == t:
            if not skip[nxt]:
                r = rank[nxt]
                qn = q_insert(q_job, q_rank, qn, nxt, r)
                if indexed:
                    idx_put(t_u, t_e, t_p, size, r, units[nxt], est[nxt],
                            job_w[nxt] + units[nxt] * unit_w if power else 0.0)
            nxt += 1
        # 3. the policy's decision: the machine forgets finished jobs ...
        for f in range(n_fin):
            job = fin[f]
            free += units[job]
            if easy:
                en = ends_remove(e_time, e_job, en, end_of[job], job)
        # ... then starts the startable prefix (and, for EASY, backfills)
        n_gone = 0
        if qn > 0 and free > 0:
            if score != STATIC:  # a dynamic ordering: the queue sorted afresh
                order_queue(score, t, q_job, q_rank, qn, submit, term_a, term_b, work)
            left = cap_w - used
            used0 = used
            taken = 0.0
            i = 0
            stop = 0
            while True:
                if i >= qn:
                    break
                # kind: 0 = does not start, 1 = starts in order, 2 = backfilled ending by
                # the shadow time, 3 = backfilled on extra slots
                if stop == 0:
                    j = q_job[i]
                    u = units[j]
                    kind = 1 if u <= free else 0
                else:
                    if i >= stop:
                        break
                    if power and least_w - 1e-3 > left + EPS:
                        break  # the power left cannot take any job any more
                    scanned += 1
                    j = q_job[i]
                    u = units[j]
                    kind = backfill_kind(t, est[j], u, free, shadow, extra)
                if kind > 0 and power and job_w[j] + u * unit_w - 1e-3 > left + EPS:
                    kind = 0  # its power cannot fit wherever it lands
                if kind > 0:
                    # first-fit over the nodes' free slots, tentatively (power decides)
                    flat_nodes = room(flat_nodes, n_flat + n_nodes)
                    flat_counts = room(flat_counts, n_flat + n_nodes)
                    n_try, left_u = first_fit(node_free, lo, u, flat_nodes, flat_counts,
                                              n_flat)
                    if left_u > 0:
                        status = BROKEN
                        bad_job = j
                        break
                    if power:  # what the start adds, node by node (the dispatcher's sum)
                        job_p = job_w[j]
                        for a in range(n_try):
                            nd = flat_nodes[n_flat + a]
                            k = slots[nd] - node_free[nd]
                            job_p += node_w[nd, k + flat_counts[n_flat + a]] - node_w[nd, k]
                        if not job_p <= left + EPS:
                            kind = 0
                        elif kind == 3 and in_power:  # within the extra power, consumed
                            if job_p > (spare if spare < left else left) + EPS:
                                kind = 0
                            else:
                                spare -= job_p if job_p > 0.0 else 0.0
                if kind == 0:
                    if stop > 0:
                        i += 1
                        if indexed and i < qn:
                            i = idx_jump(t_u, t_e, t_p, size, q_rank, qn, q_rank[i], free,
                                         left, extra, shadow - t)
                        continue
                    if not easy or free <= 0:
                        break
                    # EASY: reserve for the head, then backfill behind it
                    if in_power:  # easy-power: in power too, afresh
                        head = j
                        spare = 0.0
                        shadow, extra = easy_shadow(e_time, e_job, en, units, free, units[j],
                                                    t)
                        if shadow < 0:
                            shadow = NEVER
                            extra = free
                        else:
                            shadow, extra, spare = power_shadow(
                                n_points, shadow, extra, free, j, units, e_time, e_job, en,
                                job_at, flat_nodes, flat_counts, node_free, slots, node_w,
                                cur_w, job_w, used0 + taken, cap_w, c_time, c_value, crow,
                                scratch_w)
                    elif i > 0 or n_fin > 0 or j != head or shadow <= t:
                        head = j
                        shadow, extra = easy_shadow(e_time, e_job, en, units, free, units[j],
                                                    t)
                        if shadow < 0:
                            if not power:
                                status = BROKEN
                                bad_job = j
                                break
                            # its slots are free but never its power: nothing to protect
                            shadow = NEVER
                            extra = free
                    if shadow < NEVER and (plan_head != j or plan_time != shadow):
                        plan_head = j
                        plan_time = shadow
                        planned[j] = shadow
                    stop = qn if depth < 0 else min(qn, i + depth)
                    i += 1
                    if indexed and i < qn:
                        i = idx_jump(t_u, t_e, t_p, size, q_rank, qn, q_rank[i], free,
                                     left, extra, shadow - t)
                    continue
                if kind == 3:
                    extra -= u
                if kind > 1:
                    backfilled += 1
                # start job j on its placement
                p = n_flat
                lo = take(node_free, flat_nodes, flat_counts, p, n_try, lo)
                n_flat += n_try
                if power:  # the dispatcher's workspace, then the engine's running sum
                    left -= job_p
                    taken += job_p
                    if in_power:
                        job_at[j, 0] = n_points
                        job_at[j, 1] = p
                        job_at[j, 2] = n_try
                    used += job_w[j] + reread_nodes(node_w, cur_w, node_free, slots,
                                                    flat_nodes, p, n_try)
                alloc_pos[j] = p
                alloc_len[j] = n_flat - p
                free -= u
                start[j] = t
                order[n_started] = j
                n_started += 1
                running += 1
                q_gone[i] = True
                n_gone += 1
                if indexed:
                    idx_put(t_u, t_e, t_p, size, q_rank[i], ABSENT, ABSENT, np.inf)
                # the engine schedules the end
                ev_job[seq] = j
                hn = heap_push(h_time, h_id, h_pos, hn, t + dur[j], seq)
                seq += 1
                if easy:  # expected end, kept sorted by (end, job)
                    end_of[j] = t + est[j]
                    en = ends_insert(e_time, e_job, en, end_of[j], j)
                i += 1
                if stop > 0 and free <= 0:
                    break
                if stop > 0 and indexed and i < qn:
                    i = idx_jump(t_u, t_e, t_p, size, q_rank, qn, q_rank[i], free, left,
                                 extra, shadow - t)
            if status != DONE:
                break
            if n_gone:
                qn = q_compact(q_job, q_rank, q_gone, qn)
        # 4. one sample per decision point
        points[n_points, 0] = t
        points[n_points, 1] = qn
        points[n_points, 2] = running
        points[n_points, 3] = total - free
        if power:
            watts[n_points] = used
            caps[n_points] = cap_w
        n_points += 1
        if hn == 0 and nxt >= n and qn > 0 and crow >= n_c:
            status = STUCK
            bad_job = q_job[0]
            break
    # placements in job order: job j owns nodes[offsets[j]:offsets[j + 1]]
    offsets, nodes, counts = gather(alloc_pos, alloc_len, n, flat_nodes, flat_counts)
    return (status, start, end, planned, offsets, nodes, counts, points, n_points, backfilled,
            bad_job, watts, scanned, caps, order[:n_started].copy())
