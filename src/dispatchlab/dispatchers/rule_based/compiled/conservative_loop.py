"""The whole event loop of a conservative-backfilling run on interchangeable unit slots.

Mirrors, step for step, :meth:`Simulator.run <dispatchlab.engine.simulator.Simulator.run>`
driving a :class:`~dispatchlab.dispatchers.rule_based.policy.Policy` with a static ordering or
a dynamic one (``wfp3``, ``uni``, ``slowdown``: the queue sorted afresh by its score at a
decision that reads the order, :mod:`.dynamic_order`),
:class:`~dispatchlab.dispatchers.rule_based.selection.conservative.Conservative` selection with or
without a depth limit (:mod:`.conservative_order`), first-fit allocation and a
:class:`~dispatchlab.dispatchers.machine.SlotMachine`: same decision points (wake-ups
included), same reservations and moves, same starts on the same nodes. The availability and the
book of reservations are those of the general loop — the same functions of
:mod:`~dispatchlab.engine.compiled.slot_availability_ops` — so only the loop around them is
written twice. Compiled by :mod:`dispatchlab.dispatchers.rule_based.compiled.kernel`.

A run the loop cannot mirror (a reservation left in the past, which the general loop would
answer with a rebuild) stops with status ``FALLBACK``: the runner then runs the general
engine. A job that would outlive its expected end (no wall-time kill, a run time over the
requested time: the general loop holds it and rebuilds) stops it with status ``OUTLIVES``;
with the wall-time kill no job does (the estimate is the requested time or the real
duration, never shorter than the run).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dispatchlab.dispatchers.rule_based.compiled.conservative_order import (
    reserve_window,
)
from dispatchlab.dispatchers.rule_based.compiled.dynamic_order import (
    STATIC,
    order_queue,
    order_work,
)
from dispatchlab.dispatchers.rule_based.compiled.loop_parts import (
    ev_room,
    first_fit,
    fixed_machine,
    gather,
    give_back,
    q_insert,
    room,
    room_rows,
    take,
)
from dispatchlab.engine.compiled.slot_availability_ops import (
    NEVER,
    NONE,
    avail_add,
    avail_advance,
    avail_compress,
    avail_reserve,
    book_pop_due,
    heap_pop,
    heap_push,
)

#: Status codes returned by :func:`conservative_loop` (``DONE``, ``STUCK`` and ``BROKEN`` as
#: :mod:`~dispatchlab.dispatchers.rule_based.compiled.slot_loop`'s; ``OUTLIVES``: a job would
#: outlive its expected end).
DONE, STUCK, BROKEN, FALLBACK, OUTLIVES = 0, 1, 2, 3, 4


def conservative_loop(submit: Any, dur: Any, units: Any, est: Any, rank: Any, skip: Any,
                      slots: Any, depth: int, score: int, term_a: Any, term_b: Any) -> Any:
    """Simulate; see the module docstring. ``depth``: the depth limit (-1: none);
    ``score``, ``term_a``, ``term_b``: a dynamic ordering and its per-job terms
    (:mod:`.dynamic_order`; ``STATIC``: the ranks hold).

    Returns ``(status, start, end, planned, offsets, nodes, counts, points, n_points,
    compressions, moves, bad_job, order)``: job ``j`` ran on
    ``nodes[offsets[j]:offsets[j + 1]]`` with ``counts`` units each; ``points`` rows are
    ``(time, queued, running, busy slots)`` per decision point; ``order`` the jobs in the
    order they started (the engine's segment order).
    """
    n = submit.shape[0]
    n_nodes = slots.shape[0]
    (total, node_free, start, end, planned, alloc_pos, alloc_len, flat_nodes,
     flat_counts) = fixed_machine(n, slots)
    lo = 0  # every node below lo has no free slot
    n_flat = 0
    points = np.empty((2 * n + 1, 4), np.int64)
    n_points = 0
    q_job = np.empty(n, np.int64)
    q_rank = np.empty(n, np.int64)
    qn = 0
    # the engine's events: ends (job ≥ 0) and wake-ups (job −1) by time (ties: in the
    # order they were scheduled; the ends at one time free the same slots in any order)
    h_time = np.empty(2 * n + 1, np.int64)
    h_id = np.empty(2 * n + 1, np.int64)
    h_pos = np.zeros(0, np.int64)  # (no positions tracked)
    ev_job = np.empty(2 * n + 1, np.int64)
    hn = 0
    n_ev = 0
    # the availability, the book of reservations, each running job's reserved end
    times = np.zeros(64, np.int64)
    pfree = np.zeros(64, np.int64)
    pn = 1
    pfree[0] = total
    r_start = np.full(n, NONE, np.int64)
    r_end = np.full(n, NONE, np.int64)
    b_key = np.zeros(n, np.int64)  # the book: reserved jobs by (start, job)
    b_heap = np.zeros(n, np.int64)
    b_pos = np.full(n, -1, np.int64)
    bn = 0
    run_end = np.zeros(n, np.int64)
    moved = np.empty(n, np.int64)
    due = np.empty(n, np.int64)
    fin = np.empty(n, np.int64)
    new = np.empty(n, np.int64)
    order = np.empty(n, np.int64)  # the jobs in the order they started
    n_order = 0
    work = order_work(n, score)
    last_wake = -1
    free = total
    running = 0
    compressions = 0
    moves = 0
    nxt = 0
    status = DONE
    bad_job = -1
    while nxt < n or qn > 0 or running > 0:  # like the engine: stop when all left
        t = submit[nxt] if nxt < n else h_time[0]
        if hn > 0 and h_time[0] < t:
            t = h_time[0]
        # 1. completions (the engine frees the nodes) and wake-ups at t
        n_fin = 0
        while hn > 0 and h_time[0] == t:
            job = ev_job[h_id[0]]
            hn = heap_pop(h_time, h_id, h_pos, hn)
            if job < 0:
                continue
            lo = give_back(node_free, flat_nodes, flat_counts, alloc_pos[job], alloc_len[job],
                           lo)
            running -= 1
            end[job] = t
            fin[n_fin] = job
            n_fin += 1
        # 2. submissions at t join the queue in rank order
        n_new = 0
        while nxt < n and submit[nxt] == t:
            if not skip[nxt]:
                if score == STATIC:
                    qn = q_insert(q_job, q_rank, qn, nxt, rank[nxt])
                else:  # (sorted by the score when the order is read)
                    q_job[qn] = nxt
                    qn += 1
                new[n_new] = nxt
                n_new += 1
            nxt += 1
        # 3. the policy's decision: the machine forgets finished jobs, the availability drops
        # the past and gets back what ended early ...
        pn = avail_advance(times, pfree, pn, t)
        freed = False
        for f in range(n_fin):
            job = fin[f]
            free += units[job]
            e = run_end[job]
            if e > t:
                times = room(times, pn + 2)
                pfree = room(pfree, pn + 2)
                pn = avail_add(times, pfree, pn, t, e, units[job])
                freed = True
        if bn > 0 and r_start[b_heap[0]] < t:
            status = FALLBACK  # the general loop would rebuild every reservation
            bad_job = b_heap[0]
            break
        if score != STATIC and qn > 1 and (freed or depth >= 0):
            order_queue(score, t, q_job, q_rank, qn, submit, term_a, term_b, work)
        # ... compresses the reservations in priority order ...
        if freed:
            compressions += 1
            first = 0
            while first < qn:
                times = room(times, pn + 4)
                pfree = room(pfree, pn + 4)
                pn, n_moved, first = avail_compress(times, pfree, pn, q_job, first, qn,
                                                   r_start, r_end, units, t, b_key, b_heap,
                                                   b_pos, moved)
                for m in range(n_moved):
                    planned[moved[m]] = r_start[moved[m]]
                moves += n_moved
        # ... reserves the arrivals in priority order (the queue's order: sort by rank; a
        # dynamic order scores every job arriving now alike — no wait yet — so their index
        # order, their ranks, is the queue's) or, with a depth limit, the first ``depth``
        # queued jobs without a reservation ...
        window = min(depth, qn)
        if depth < 0:
            for a in range(1, n_new):
                x = new[a]
                b = a - 1
                while b >= 0 and rank[new[b]] > rank[x]:
                    new[b + 1] = new[b]
                    b -= 1
                new[b + 1] = x
            for a in range(n_new):
                j = new[a]
                times = room(times, pn + 2)
                pfree = room(pfree, pn + 2)
                pn, bn, s = avail_reserve(times, pfree, pn, j, units[j], est[j], NEVER,
                                         r_start, r_end, b_key, b_heap, b_pos, bn)
                if s != NONE:
                    planned[j] = s
        elif window > 0:
            times = room(times, pn + 2 * window + 2)
            pfree = room(pfree, pn + 2 * window + 2)
            pn, bn = reserve_window(depth, q_job, qn, start, units, est, (times, pfree), pn,
                                    (r_start, r_end, b_key, b_heap, b_pos), bn, planned)
        # ... and starts what is due now, by (reserved start, job), first-fit on the nodes
        # (with a depth limit, starts let more jobs into the window: reserved, and started
        # if due, until a round starts none)
        n_started = 0
        while True:
            bn, n_due = book_pop_due(r_start, b_key, b_heap, b_pos, bn, t, due)
            for a in range(n_due):
                j = due[a]
                u = units[j]
                flat_nodes = room(flat_nodes, n_flat + n_nodes)
                flat_counts = room(flat_counts, n_flat + n_nodes)
                p = n_flat
                k_ff, left = first_fit(node_free, lo, u, flat_nodes, flat_counts, p)
                if left > 0 or u > free:
                    status = BROKEN
                    bad_job = j
                    break
                lo = take(node_free, flat_nodes, flat_counts, p, k_ff, lo)
                n_flat += k_ff
                alloc_pos[j] = p
                alloc_len[j] = n_flat - p
                free -= u
                start[j] = t
                order[n_order] = j
                n_order += 1
                running += 1
                run_end[j] = r_end[j]
                if t + dur[j] > run_end[j]:  # it would outlive its expected end (no wall-time
                    status = OUTLIVES  # kill): the general loop holds it and rebuilds
                    bad_job = j
                    break
                # the engine schedules the end
                h_time, h_id, ev_job = ev_room(h_time, h_id, ev_job, n_ev)
                ev_job[n_ev] = j
                hn = heap_push(h_time, h_id, h_pos, hn, t + dur[j], n_ev)
                n_ev += 1
            if status != DONE:
                break
            n_started += n_due
            if depth < 0 or n_due == 0 or qn <= depth:
                break
            times = room(times, pn + 2 * window + 2)
            pfree = room(pfree, pn + 2 * window + 2)
            pn, bn = reserve_window(depth, q_job, qn, start, units, est, (times, pfree), pn,
                                    (r_start, r_end, b_key, b_heap, b_pos), bn, planned)
        if status != DONE:
            break
        if n_started:  # started jobs leave the queue
            w = 0
            for k in range(qn):
                if start[q_job[k]] < 0:
                    q_job[w] = q_job[k]
                    q_rank[w] = q_rank[k]
                    w += 1
            qn = w
        # the scheme asks to be woken at the earliest reservation
        wake = r_start[b_heap[0]] if bn > 0 else NEVER
        if wake != last_wake and t < wake < NEVER:
            last_wake = wake
            h_time, h_id, ev_job = ev_room(h_time, h_id, ev_job, n_ev)
            ev_job[n_ev] = -1
            hn = heap_push(h_time, h_id, h_pos, hn, wake, n_ev)
            n_ev += 1
        # 4. one sample per decision point
        points = room_rows(points, n_points + 1)
        points[n_points, 0] = t
        points[n_points, 1] = qn
        points[n_points, 2] = running
        points[n_points, 3] = total - free
        n_points += 1
        if hn == 0 and nxt >= n and qn > 0:
            status = STUCK
            bad_job = q_job[0]
            break
    # placements in job order: job j owns nodes[offsets[j]:offsets[j + 1]]
    offsets, nodes, counts = gather(alloc_pos, alloc_len, n, flat_nodes, flat_counts)
    return (status, start, end, planned, offsets, nodes, counts, points, n_points,
            compressions, moves, bad_job, order[:n_order].copy())
