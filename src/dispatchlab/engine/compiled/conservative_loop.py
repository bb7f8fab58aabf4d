"""The whole event loop of a conservative-backfilling run on interchangeable unit slots.

Mirrors, step for step, :meth:`Simulator.run <dispatchlab.engine.simulator.Simulator.run>`
driving a :class:`~dispatchlab.dispatchers.rule_based.policy.Policy` with a static ordering,
:class:`~dispatchlab.dispatchers.rule_based.selection.conservative.Conservative` selection without a
depth limit, first-fit allocation and a
:class:`~dispatchlab.dispatchers.machine.SlotMachine`: same decision points (wake-ups
included), same reservations and moves, same starts on the same nodes. The profile and the
book of reservations are those of the general loop — the same functions of
:mod:`~dispatchlab.engine.compiled.slot_profile_ops` — so only the loop around them is
written twice. Compiled by :mod:`dispatchlab.engine.compiled.kernel`.

A run the loop cannot mirror (a reservation left in the past, which the general loop would
answer with a rebuild) stops with status ``FALLBACK``: the runner then runs the general
engine. Running jobs never outlive their expected end here (the estimate is the requested
time or the real duration, never shorter than the run), so no rebuild is ever due to them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dispatchlab.engine.compiled.slot_profile_ops import (
    NEVER,
    NONE,
    book_pop_due,
    grown,
    prof_add,
    prof_advance,
    prof_compress,
    prof_reserve,
)

#: Status codes returned by :func:`conservative_loop` (``DONE``, ``STUCK`` and ``BROKEN`` as
#: :mod:`~dispatchlab.engine.compiled.slot_loop`'s).
DONE, STUCK, BROKEN, FALLBACK = 0, 1, 2, 3


def conservative_loop(submit: Any, dur: Any, units: Any, est: Any, rank: Any, skip: Any,
                      slots: Any) -> Any:
    """Simulate; see the module docstring.

    Returns ``(status, start, end, planned, offsets, nodes, counts, points, n_points,
    compressions, moves, bad_job)``: job ``j`` ran on ``nodes[offsets[j]:offsets[j + 1]]``
    with ``counts`` units each; ``points`` rows are ``(time, queued, running, busy slots)``
    per decision point.
    """
    n = submit.shape[0]
    n_nodes = slots.shape[0]
    total = 0
    for nd in range(n_nodes):
        total += slots[nd]
    node_free = slots.copy()
    lo = 0  # every node below lo has no free slot
    start = np.full(n, -1, np.int64)
    end = np.full(n, -1, np.int64)
    planned = np.full(n, -1, np.int64)
    alloc_pos = np.zeros(n, np.int64)
    alloc_len = np.zeros(n, np.int64)
    cap = n + n_nodes
    flat_nodes = np.empty(cap, np.int32)
    flat_counts = np.empty(cap, np.int32)
    n_flat = 0
    points = np.empty((2 * n + 1, 4), np.int64)
    n_points = 0
    q_job = np.empty(n, np.int64)
    q_rank = np.empty(n, np.int64)
    qn = 0
    # the engine's events: ends (job ≥ 0) and wake-ups (job −1) by time
    h_time = np.empty(2 * n + 1, np.int64)
    h_job = np.empty(2 * n + 1, np.int64)
    hn = 0
    # the profile, the book of reservations, each running job's reserved end
    times = np.zeros(64, np.int64)
    pfree = np.zeros(64, np.int64)
    pn = 1
    pfree[0] = total
    r_start = np.full(n, NONE, np.int64)
    r_end = np.full(n, NONE, np.int64)
    b_heap = np.zeros(n, np.int64)
    b_pos = np.full(n, -1, np.int64)
    bn = 0
    run_end = np.zeros(n, np.int64)
    moved = np.empty(n, np.int64)
    due = np.empty(n, np.int64)
    fin = np.empty(n, np.int64)
    new = np.empty(n, np.int64)
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
            job = h_job[0]
            hn -= 1
            if hn > 0:  # sift the last entry down from the root
                lt, lj = h_time[hn], h_job[hn]
                k = 0
                while True:
                    c = 2 * k + 1
                    if c >= hn:
                        break
                    if c + 1 < hn and h_time[c + 1] < h_time[c]:
                        c += 1
                    if h_time[c] < lt:
                        h_time[k], h_job[k] = h_time[c], h_job[c]
                        k = c
                    else:
                        break
                h_time[k], h_job[k] = lt, lj
            if job < 0:
                continue
            p = alloc_pos[job]
            for a in range(alloc_len[job]):
                node_free[flat_nodes[p + a]] += flat_counts[p + a]
            if flat_nodes[p] < lo:
                lo = flat_nodes[p]
            running -= 1
            end[job] = t
            fin[n_fin] = job
            n_fin += 1
        # 2. submissions at t join the queue in rank order
        n_new = 0
        while nxt < n and submit[nxt] == t:
            if not skip[nxt]:
                r = rank[nxt]
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
                q_job[k] = nxt
                qn += 1
                new[n_new] = nxt
                n_new += 1
            nxt += 1
        # 3. the policy's decision: the machine forgets finished jobs, the profile drops
        # the past and gets back what ended early ...
        pn = prof_advance(times, pfree, pn, t)
        freed = False
        for f in range(n_fin):
            job = fin[f]
            free += units[job]
            e = run_end[job]
            if e > t:
                if pn + 2 > times.shape[0]:
                    times = grown(times, 2 * times.shape[0])
                    pfree = grown(pfree, 2 * pfree.shape[0])
                pn = prof_add(times, pfree, pn, t, e, units[job])
                freed = True
        if bn > 0 and r_start[b_heap[0]] < t:
            status = FALLBACK  # the general loop would rebuild every reservation
            bad_job = b_heap[0]
            break
        # ... compresses the reservations in priority order ...
        if freed:
            compressions += 1
            first = 0
            while first < qn:
                if pn + 4 > times.shape[0]:
                    times = grown(times, 2 * times.shape[0])
                    pfree = grown(pfree, 2 * pfree.shape[0])
                pn, n_moved, first = prof_compress(times, pfree, pn, q_job, first, qn,
                                                   r_start, r_end, units, t, b_heap, b_pos,
                                                   moved)
                for m in range(n_moved):
                    planned[moved[m]] = r_start[moved[m]]
                moves += n_moved
        # ... reserves the arrivals in priority order (the queue's order: sort by rank) ...
        if n_new > 1:
            for a in range(1, n_new):
                x = new[a]
                b = a - 1
                while b >= 0 and rank[new[b]] > rank[x]:
                    new[b + 1] = new[b]
                    b -= 1
                new[b + 1] = x
        for a in range(n_new):
            j = new[a]
            if pn + 2 > times.shape[0]:
                times = grown(times, 2 * times.shape[0])
                pfree = grown(pfree, 2 * pfree.shape[0])
            pn, bn, s = prof_reserve(times, pfree, pn, j, units[j], est[j], NEVER, r_start,
                                     r_end, b_heap, b_pos, bn)
            if s != NONE:
                planned[j] = s
        # ... and starts what is due now, by (reserved start, job), first-fit on the nodes
        bn, n_due = book_pop_due(r_start, b_heap, b_pos, bn, t, due)
        for a in range(n_due):
            j = due[a]
            u = units[j]
            if n_flat + n_nodes > cap:
                cap *= 2
                flat_nodes = grown(flat_nodes, cap)
                flat_counts = grown(flat_counts, cap)
            p = n_flat
            left = u
            nd = lo
            while left > 0 and nd < n_nodes:
                room = node_free[nd]
                if room > 0:
                    c = room if room < left else left
                    flat_nodes[n_flat] = nd
                    flat_counts[n_flat] = c
                    n_flat += 1
                    node_free[nd] = room - c
                    left -= c
                nd += 1
            if left > 0 or u > free:
                status = BROKEN
                bad_job = j
                break
            while lo < n_nodes and node_free[lo] == 0:
                lo += 1
            alloc_pos[j] = p
            alloc_len[j] = n_flat - p
            free -= u
            start[j] = t
            running += 1
            run_end[j] = r_end[j]
            # the engine schedules the end
            if hn == h_time.shape[0]:
                h_time = grown(h_time, 2 * hn)
                h_job = grown(h_job, 2 * hn)
            et = t + dur[j]
            k = hn
            hn += 1
            while k > 0:
                pk = (k - 1) >> 1
                if h_time[pk] > et:
                    h_time[k], h_job[k] = h_time[pk], h_job[pk]
                    k = pk
                else:
                    break
            h_time[k], h_job[k] = et, j
        if status != DONE:
            break
        if n_due:  # started jobs leave the queue
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
            if hn == h_time.shape[0]:
                h_time = grown(h_time, 2 * hn)
                h_job = grown(h_job, 2 * hn)
            k = hn
            hn += 1
            while k > 0:
                pk = (k - 1) >> 1
                if h_time[pk] > wake:
                    h_time[k], h_job[k] = h_time[pk], h_job[pk]
                    k = pk
                else:
                    break
            h_time[k], h_job[k] = wake, -1
        # 4. one sample per decision point
        if n_points == points.shape[0]:
            bigger = np.empty((2 * n_points, 4), np.int64)
            bigger[:n_points] = points
            points = bigger
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
    offsets = np.zeros(n + 1, np.int64)
    for j in range(n):
        offsets[j + 1] = offsets[j] + alloc_len[j]
    nodes = np.empty(offsets[n], np.int32)
    counts = np.empty(offsets[n], np.int32)
    for j in range(n):
        p, o = alloc_pos[j], offsets[j]
        for a in range(alloc_len[j]):
            nodes[o + a] = flat_nodes[p + a]
            counts[o + a] = flat_counts[p + a]
    return (status, start, end, planned, offsets, nodes, counts, points, n_points,
            compressions, moves, bad_job)
