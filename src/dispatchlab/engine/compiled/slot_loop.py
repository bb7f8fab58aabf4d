"""The whole event loop of a rule-based run on interchangeable unit slots, in one function.

Mirrors, step for step, :meth:`Simulator.run <dispatchlab.engine.simulator.Simulator.run>`
driving a :class:`~dispatchlab.dispatchers.rule_based.policy.Policy` with a static ordering, strict
or
EASY selection, first-fit allocation and a
:class:`~dispatchlab.dispatchers.machine.SlotMachine`: same decision points, same starts,
same nodes, same EASY reservations. Compiled by :mod:`dispatchlab.engine.compiled.kernel`.

Each decision is :func:`~.start_scan.start_scan` (shared with :mod:`.scenario_loop`).
Under a power cap (node model or job power column, :mod:`.slot_power`) a job also needs its
power to fit; the loop keeps the machine's power as the engine's running sum (each start
adds the job's own power plus its nodes' change, each end removes them).

State is plain arrays (:mod:`.loop_parts`): the queue sorted by rank, a heap of end
events by (end, sequence) like the engine's, the running jobs sorted by (expected end, job)
for EASY, free unit slots per node. With one resource vector per unit, a node's free slots are
``min_r free[node, r] // req[r]``, so first-fit on slots takes exactly the nodes and counts
first-fit takes on the resource matrix.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dispatchlab.engine.compiled.loop_parts import (
    ends_remove,
    fixed_machine,
    gather,
    give_back,
    idle_wait,
    least_power,
    q_insert,
    queue_arrays,
    release_power,
)
from dispatchlab.engine.compiled.queue_index import idx_new, idx_put
from dispatchlab.engine.compiled.slot_availability_ops import heap_pop, heap_push
from dispatchlab.engine.compiled.start_scan import EXTRA, start_scan

#: Status codes returned by :func:`slot_loop` (``FALLBACK``: an idle machine waited on cap
#: rows beyond the engine's limit; the general loop runs, to report it).
DONE, STUCK, BROKEN, FALLBACK = 0, 1, 2, 3


def slot_loop(submit: Any, dur: Any, units: Any, est: Any, rank: Any, skip: Any,
              slots: Any, easy: bool, depth: int, power: bool, cap_w: float, used_w: float,
              node_w: Any, job_w: Any, unit_w: float, c_time: Any, c_value: Any) -> Any:
    """Simulate; see the module docstring. ``depth < 0``: no backfill depth limit.

    ``power``: a power cap of ``cap_w`` W holds, which becomes ``c_value[k]`` at
    ``c_time[k]`` (a scenario's ``power_cap`` rows: decision points of their own, applied
    after the segment ends of their time, as the engine applies them). ``node_w[n, k]`` is
    what node ``n`` draws with ``k`` of its slots in use, ``job_w[j]`` job ``j``'s own
    power (job-power mode; 0 with the node model), ``used_w`` the machine's power with
    every node idle, ``unit_w`` a lower bound of what one unit adds to a node (to skip
    hopeless jobs).

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
    least_w = least_power(job_w, unit_w, power)  # a lower bound of what any job adds
    q_job, q_rank, q_gone = queue_arrays(n)
    qn = 0
    # EASY without a depth limit: the queue indexed by rank (minima of units, estimate and
    # least power per subtree), so a backfill scan jumps from one job that may start to the
    # next instead of examining every queued job (near-linear on long, blocked queues)
    indexed = easy and depth < 0
    size, t_u, t_e, t_p = idx_new(n, indexed, power)
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
    res = np.full(5, -1, np.int64)  # EASY's head, shadow, extra, last plan (start_scan)
    res[EXTRA] = 0
    started = np.empty(n, np.int64)  # one decision's starts and their placements
    st_pos = np.empty(n, np.int64)
    st_len = np.empty(n, np.int64)
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
        if qn > 0 and free > 0:
            (status, bad_job, qn, n_new, lo, n_flat, flat_nodes, flat_counts, free, used, en,
             n_back, n_scan) = start_scan(
                t, n_fin > 0, q_job, q_rank, q_gone, qn, units, est, planned, node_free, lo,
                slots, flat_nodes, flat_counts, n_flat, free, easy, depth, power, size, t_u,
                t_e, t_p, e_time, e_job, en, end_of, res, power, cap_w - used, used,
                least_w, unit_w, node_w, cur_w, job_w, started, st_pos, st_len)
            backfilled += n_back
            scanned += n_scan
            if status != DONE:
                break
            for k in range(n_new):  # the engine records each start and schedules its end
                j = started[k]
                alloc_pos[j] = st_pos[k]
                alloc_len[j] = st_len[k]
                start[j] = t
                order[n_started] = j
                n_started += 1
                running += 1
                ev_job[seq] = j
                hn = heap_push(h_time, h_id, h_pos, hn, t + dur[j], seq)
                seq += 1
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
