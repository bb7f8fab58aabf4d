"""The pieces every compiled loop is made of: the queue by rank, the end events, EASY's
running list and reservation, first-fit placement on unit slots, growing arrays.

Plain Python functions on arrays, written once and compiled into :mod:`.slot_loop`,
:mod:`.scenario_loop` and :mod:`.conservative_loop` (Numba compiles a call to them into the
caller: :func:`~dispatchlab.dispatchers.rule_based.compiled.kernel.loop_helpers`). The loops keep
their end
events in the book of reservations' heap (:func:`~.slot_availability_ops.heap_push`,
``heap_pop``): entries numbered in the order they were pushed, keyed by their time, ties by
number — the engine's (time, sequence) order.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dispatchlab.engine.compiled.slot_availability_ops import bisect_left, grown, shift_in

#: The engine's limit for an idle machine with queued jobs and only timers ahead (s).
IDLE_LIMIT = 400 * 86400

# ---- arrays that grow ----


def room(a: Any, need: int) -> Any:
    """``a``, or a copy twice as long (at least ``need``) when it holds fewer than ``need``."""
    if a.shape[0] >= need:
        return a
    return grown(a, max(2 * a.shape[0], need))


def room_rows(a: Any, need: int) -> Any:
    """:func:`room` for the rows of a 2-D array."""
    if a.shape[0] >= need:
        return a
    out = np.empty((max(2 * a.shape[0], need), a.shape[1]), a.dtype)
    out[: a.shape[0]] = a
    return out


def log_node(node_log: Any, n_log: int, t: int, nd: int, state: int) -> Any:
    """Node ``nd`` entered ``state`` at ``t``: a row of the node log (grown on demand);
    returns ``(node_log, n_log)``."""
    node_log = room_rows(node_log, n_log + 1)
    node_log[n_log, 0] = t
    node_log[n_log, 1] = nd
    node_log[n_log, 2] = state
    return node_log, n_log + 1


def sample_point(points: Any, alive_pts: Any, watts: Any, caps: Any, n_points: int, t: int,
                 queued: int, running: int, busy: int, alive_res: Any, power: bool,
                 used: float, cap_w: float) -> tuple[Any, Any, Any, Any]:
    """Row ``n_points`` of a changing machine's samples: the time, queue length, running
    jobs, busy slots and usable capacity per resource, and under a cap the power drawn and
    the cap; every array grown as needed (returned, possibly new)."""
    if n_points >= points.shape[0]:
        points = room_rows(points, n_points + 1)
        alive_pts = room_rows(alive_pts, n_points + 1)
    points[n_points, 0] = t
    points[n_points, 1] = queued
    points[n_points, 2] = running
    points[n_points, 3] = busy
    for r in range(alive_res.shape[0]):
        alive_pts[n_points, r] = alive_res[r]
    if power:
        if n_points >= watts.shape[0]:
            watts = room(watts, n_points + 1)
            caps = room(caps, n_points + 1)
        watts[n_points] = used
        caps[n_points] = cap_w
    return points, alive_pts, watts, caps


def idle_wait(idle_since: int, t: int, idle: bool) -> tuple[int, bool]:
    """The engine's check of an idle machine with only timers ahead: when it became idle
    (-1: it is not) and whether it has waited beyond :data:`IDLE_LIMIT`."""
    if not idle:
        return -1, False
    if idle_since < 0:
        return t, False
    return idle_since, t - idle_since > IDLE_LIMIT


# ---- end events: entry e (numbered in push order) of job ev_job[e], in the heap of
# slot_availability_ops (heap_push, heap_pop) keyed by time (h_time) with the entry numbers as
# ids (h_id); h_pos is empty (no entry moves once pushed: no positions tracked) ----


def ev_room(h_time: Any, h_id: Any, ev_job: Any, n_ev: int) -> Any:
    """The event arrays, grown when entry ``n_ev`` does not fit."""
    if n_ev < ev_job.shape[0]:
        return h_time, h_id, ev_job
    return room(h_time, n_ev + 1), room(h_id, n_ev + 1), room(ev_job, n_ev + 1)


# ---- the queue, sorted by rank ----


def queue_arrays(n: int) -> Any:
    """An empty queue for ``n`` jobs: ``(q_job, q_rank, q_gone)``."""
    return np.empty(n, np.int64), np.empty(n, np.int64), np.zeros(n, np.bool_)


def next_joiner(t: int, submit: Any, skip: Any, nxt: int, requeued: Any, k_sub: int,
                n_req: int) -> tuple[int, int, int, bool]:
    """The next job to join the queue at ``t``, as the engine admits them: the jobs submitted
    at ``t`` in index order (not those in ``skip``: rejected), then the ``n_req`` re-queued
    ones in order. Returns ``(job, nxt, k_sub, submitted)``: ``job`` -1 when none is left,
    ``submitted`` whether it is a new submission (a re-queued job is counted queued when it
    is aborted)."""
    n = submit.shape[0]
    while nxt < n and submit[nxt] == t:
        nxt += 1
        if not skip[nxt - 1]:
            return nxt - 1, nxt, k_sub, True
    if k_sub < n_req:
        return requeued[k_sub], nxt, k_sub + 1, False
    return -1, nxt, k_sub, False


def q_insert(q_job: Any, q_rank: Any, qn: int, job: int, r: int) -> int:
    """Queue ``job`` of rank ``r`` in rank order; returns the new length."""
    k = qn if qn == 0 or r > q_rank[qn - 1] else bisect_left(q_rank, qn, r)
    return shift_in(q_rank, q_job, qn, k, r, job)


def q_compact(q_job: Any, q_rank: Any, q_gone: Any, qn: int) -> int:
    """Drop the positions marked in ``q_gone`` (and clear the marks); returns the length."""
    w = 0
    for k in range(qn):
        if q_gone[k]:
            q_gone[k] = False
        else:
            q_job[w] = q_job[k]
            q_rank[w] = q_rank[k]
            w += 1
    return w


# ---- EASY: running jobs sorted by (expected end, job), the head's reservation ----


def ends_find(e_time: Any, e_job: Any, en: int, e: int, job: int) -> int:
    """The first position not before ``(e, job)``."""
    a, b = 0, en
    while a < b:
        m = (a + b) >> 1
        if e_time[m] < e or (e_time[m] == e and e_job[m] < job):
            a = m + 1
        else:
            b = m
    return a


def ends_insert(e_time: Any, e_job: Any, en: int, e: int, job: int) -> int:
    """Enter running ``job`` expected to end at ``e``; returns the new length."""
    return shift_in(e_time, e_job, en, ends_find(e_time, e_job, en, e, job), e, job)


def ends_remove(e_time: Any, e_job: Any, en: int, e: int, job: int) -> int:
    """Remove ``job`` (expected end ``e``); returns the new length."""
    for m in range(ends_find(e_time, e_job, en, e, job), en - 1):
        e_time[m] = e_time[m + 1]
        e_job[m] = e_job[m + 1]
    return en - 1


def easy_shadow(e_time: Any, e_job: Any, en: int, units: Any, free: int, need: int,
                t: int) -> tuple[int, int]:
    """EASY's reservation for a head needing ``need`` units: ``(shadow time, extra
    units)``, the time ``-1`` when the running jobs' ends never free enough."""
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
    return shadow, avail - need


def backfill_kind(t: int, est: int, u: int, free: int, shadow: int, extra: int) -> int:
    """How a job behind EASY's head may start: 2 ends by the shadow time, 3 on the extra
    units, 0 not now."""
    if t + est <= shadow:
        return 2 if u <= free else 0
    if u <= free and u <= extra:
        return 3
    return 0


# ---- first fit on unit slots; placements as runs of (node, count) in flat arrays ----


def first_fit(node_free: Any, lo: int, u: int, flat_nodes: Any, flat_counts: Any,
              at: int) -> tuple[int, int]:
    """Write the first-fit placement of ``u`` units (nodes from ``lo`` on, by index) at
    ``flat_*[at:]`` without taking it; returns ``(entries written, units left unplaced)``."""
    k = 0
    left = u
    nd = lo
    n_nodes = node_free.shape[0]
    while left > 0 and nd < n_nodes:
        r = node_free[nd]
        if r > 0:
            c = r if r < left else left
            flat_nodes[at + k] = nd
            flat_counts[at + k] = c
            k += 1
            left -= c
        nd += 1
    return k, left


def take(node_free: Any, flat_nodes: Any, flat_counts: Any, p: int, k: int, lo: int) -> int:
    """Take placement ``flat_*[p:p + k]``; returns the first node with a free slot from
    ``lo`` on."""
    for a in range(k):
        node_free[flat_nodes[p + a]] -= flat_counts[p + a]
    n_nodes = node_free.shape[0]
    first = lo
    while first < n_nodes and node_free[first] == 0:
        first += 1
    return first


def give_back(node_free: Any, flat_nodes: Any, flat_counts: Any, p: int, k: int,
              lo: int) -> int:
    """Give placement ``flat_*[p:p + k]`` back; returns the lowest node that may have a
    free slot (its nodes are in increasing order)."""
    for a in range(k):
        node_free[flat_nodes[p + a]] += flat_counts[p + a]
    return flat_nodes[p] if k > 0 and flat_nodes[p] < lo else lo


def reread_nodes(node_w: Any, cur_w: Any, node_free: Any, slots: Any, flat_nodes: Any,
                 p: int, k: int) -> float:
    """The nodes ``flat_nodes[p:p + k]`` (usage changed) re-read from the power table
    ``node_w[node, slots in use]`` into ``cur_w``; the change of their sum, summed in the
    engine's order (:meth:`MachinePower.refresh`)."""
    delta = 0.0
    for a in range(k):
        nd = flat_nodes[p + a]
        w = node_w[nd, slots[nd] - node_free[nd]]
        delta += w - cur_w[nd]
        cur_w[nd] = w
    return delta


def release_power(used: float, own_w: float, node_w: Any, cur_w: Any, node_free: Any,
                  slots: Any, flat_nodes: Any, p: int, k: int) -> float:
    """The engine's running sum after a job drawing ``own_w`` gave back its nodes
    ``flat_nodes[p:p + k]``: its own power off, then its nodes re-read (one sum)."""
    used -= own_w
    return used + reread_nodes(node_w, cur_w, node_free, slots, flat_nodes, p, k)


def least_power(job_w: Any, unit_w: float, power: bool) -> float:
    """A lower bound of what any job adds under a cap: one unit's least step plus the
    least own power of any job (0 without a cap)."""
    if not power:
        return 0.0
    low = np.inf
    for j in range(job_w.shape[0]):
        if job_w[j] < low:
            low = job_w[j]
    return unit_w + (low if job_w.shape[0] > 0 else 0.0)


# ---- a fixed machine's placements: per job its run in the flat arrays ----


def fixed_machine(n: int, slots: Any) -> Any:
    """The fixed-machine loops' starting state for ``n`` jobs on nodes of ``slots`` unit
    slots: ``(total slots, free slots per node, start, end, planned, alloc_pos, alloc_len,
    flat_nodes, flat_counts)`` (times -1: not yet)."""
    n_nodes = slots.shape[0]
    total = 0
    for nd in range(n_nodes):
        total += slots[nd]
    return (total, slots.copy(), np.full(n, -1, np.int64), np.full(n, -1, np.int64),
            np.full(n, -1, np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64),
            np.empty(n + n_nodes, np.int32), np.empty(n + n_nodes, np.int32))


def gather(pos: Any, length: Any, count: int, flat_nodes: Any, flat_counts: Any) -> Any:
    """Placements ``flat_*[pos[i]:pos[i] + length[i]]`` for ``i < count``, in that order:
    ``(offsets, nodes, counts)``, placement ``i`` at ``nodes[offsets[i]:offsets[i + 1]]``."""
    offsets = np.zeros(count + 1, np.int64)
    for i in range(count):
        offsets[i + 1] = offsets[i] + length[i]
    nodes = np.empty(offsets[count], np.int32)
    counts = np.empty(offsets[count], np.int32)
    for i in range(count):
        p, o = pos[i], offsets[i]
        for a in range(length[i]):
            nodes[o + a] = flat_nodes[p + a]
            counts[o + a] = flat_counts[p + a]
    return offsets, nodes, counts
