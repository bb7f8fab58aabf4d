"""The pieces every compiled loop is made of: the queue by rank, the end events, EASY's
running list and reservation, first-fit placement on unit slots, growing arrays.

Plain Python functions on arrays, written once and compiled into :mod:`.slot_loop`,
:mod:`.slot_book` and :mod:`.conservative_loop` (Numba compiles a call to them into the
caller: :func:`~dispatchlab.dispatchers.rule_based.compiled.kernel.loop_helpers`). The loops keep
their end
events in the book of reservations' heap (:func:`~.slot_availability_ops.heap_push`,
``heap_pop``): entries numbered in the order they were pushed, keyed by their time, ties by
number — the engine's (time, sequence) order.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dispatchlab.engine.compiled.slot_availability_ops import bisect_left, shift_in
from dispatchlab.engine.core.parts import (  # noqa: F401 (the loops' parts, by name)
    IDLE_LIMIT,
    ev_room,
    gather,
    give_back,
    idle_wait,
    log_node,
    next_joiner,
    release_power,
    reread_nodes,
    room,
    room_rows,
    sample_point,
)

# ---- arrays that grow ----












# ---- end events: entry e (numbered in push order) of job ev_job[e], in the heap of
# slot_availability_ops (heap_push, heap_pop) keyed by time (h_time) with the entry numbers as
# ids (h_id); h_pos is empty (no entry moves once pushed: no positions tracked) ----




# ---- the queue, sorted by rank ----


def queue_arrays(n: int) -> Any:
    """An empty queue for ``n`` jobs: ``(q_job, q_rank, q_gone)``."""
    return np.empty(n, np.int64), np.empty(n, np.int64), np.zeros(n, np.bool_)




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

