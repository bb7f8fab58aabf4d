"""The whole event loop of a rule-based run on interchangeable unit slots, in one function.

Mirrors, step for step, :meth:`Simulator.run <dispatchlab.engine.simulator.Simulator.run>`
driving a :class:`~dispatchlab.dispatchers.policy.Policy` with a static ordering, strict or
EASY selection, first-fit allocation and a
:class:`~dispatchlab.dispatchers.machine.SlotMachine`: same decision points, same starts,
same nodes, same EASY reservations. Compiled by :mod:`dispatchlab.engine.compiled.kernel`.

State is plain arrays: the queue sorted by rank, a binary heap of (end, sequence, job)
like the engine's, the running jobs sorted by (expected end, job) for EASY, free unit
slots per node. With one resource vector per unit, a node's free slots are
``min_r free[node, r] // req[r]``, so first-fit on slots takes exactly the nodes and counts
first-fit takes on the resource matrix.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: Status codes returned by :func:`slot_loop`.
DONE, STUCK, BROKEN = 0, 1, 2


def slot_loop(submit: Any, dur: Any, units: Any, est: Any, rank: Any, skip: Any,
              slots: Any, easy: bool, depth: int) -> Any:
    """Simulate; see the module docstring. ``depth < 0``: no backfill depth limit.

    Returns ``(status, start, end, planned, offsets, nodes, counts, points, n_points,
    backfilled, bad_job)``: job ``j`` ran on ``nodes[offsets[j]:offsets[j + 1]]`` with
    ``counts`` units each; ``points`` rows are ``(time, queued, running, busy slots)`` per
    decision point.
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
    points = np.empty((2 * n + 1, 4), np.int64)  # each point consumes a submission or an end
    n_points = 0
    q_job = np.empty(n, np.int64)
    q_rank = np.empty(n, np.int64)
    q_gone = np.zeros(n, np.bool_)
    qn = 0
    h_time = np.empty(n, np.int64)
    h_seq = np.empty(n, np.int64)
    h_job = np.empty(n, np.int64)
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
    nxt = 0
    status = DONE
    bad_job = -1
    while nxt < n or hn > 0:
        t = submit[nxt] if nxt < n else h_time[0]
        if hn > 0 and h_time[0] < t:
            t = h_time[0]
        # 1. completions at t: the engine frees the nodes
        n_fin = 0
        while hn > 0 and h_time[0] == t:
            job = h_job[0]
            hn -= 1
            if hn > 0:  # sift the last entry down from the root
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
            nxt += 1
        # 3. the policy's decision: the machine forgets finished jobs ...
        for f in range(n_fin):
            job = fin[f]
            free += units[job]
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
        # ... then starts the startable prefix (and, for EASY, backfills)
        n_gone = 0
        if qn > 0 and free > 0:
            i = 0
            stop = 0
            while True:
                if i >= qn:
                    break
                if stop == 0:
                    j = q_job[i]
                    if units[j] > free:
                        if not easy or free <= 0:
                            break
                        # EASY: reserve for the head, then backfill behind it
                        if i > 0 or n_fin > 0 or j != head or shadow <= t:
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
                            if shadow < 0:
                                status = BROKEN
                                bad_job = j
                                break
                            extra = avail - need
                        if plan_head != j or plan_time != shadow:
                            plan_head = j
                            plan_time = shadow
                            planned[j] = shadow
                        stop = qn if depth < 0 else min(qn, i + depth)
                        i += 1
                        continue
                else:
                    if i >= stop:
                        break
                    j = q_job[i]
                    u = units[j]
                    if t + est[j] <= shadow:
                        if u > free:
                            i += 1
                            continue
                    elif u <= free and u <= extra:
                        extra -= u
                    else:
                        i += 1
                        continue
                    backfilled += 1
                # start job j: first-fit over the nodes' free slots
                u = units[j]
                if n_flat + n_nodes > cap:
                    cap *= 2
                    grown = np.empty(cap, np.int32)
                    grown[:n_flat] = flat_nodes[:n_flat]
                    flat_nodes = grown
                    grown = np.empty(cap, np.int32)
                    grown[:n_flat] = flat_counts[:n_flat]
                    flat_counts = grown
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
                if left > 0:
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
                q_gone[i] = True
                n_gone += 1
                # the engine schedules the end (heap push, sift up)
                et = t + dur[j]
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
        # 4. one sample per decision point
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
    return (status, start, end, planned, offsets, nodes, counts, points, n_points, backfilled,
            bad_job)
