"""One decision of the rule-based policy on unit slots: the startable prefix of the queue,
then (EASY) the head's reservation and the backfill behind it — the strict/EASY kernel's
decision on the engine core (:mod:`.slot_book`), also copied into the ``+poweroff`` loop.

Under a power cap a job also needs its power to fit: its first-fit placement is costed node
by node from the tabulated node power (what the dispatcher's workspace computes) against
what the cap left at the start of the decision (``left``), and the machine's power ``used``
follows each start as the engine's running sum does (the job's own power plus its nodes'
change), so a job that fits in slots but not in power is EASY's head exactly as in the
general loop.

The scan takes the starts (nodes, queue, EASY's running list, the queue index); the caller
records them (segments, end events) from ``started`` / ``st_pos`` / ``st_len``, in order.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dispatchlab.dispatchers.rule_based.compiled.loop_parts import (
    backfill_kind,
    easy_shadow,
    ends_insert,
    first_fit,
    q_compact,
    reread_nodes,
    room,
    take,
)
from dispatchlab.dispatchers.rule_based.compiled.power_shadow import power_shadow
from dispatchlab.dispatchers.rule_based.compiled.queue_index import ABSENT, EPS, idx_jump, idx_put

#: Status codes (as the loops': 0 done, 2 the slot accounting broke).
DONE, BROKEN = 0, 2
#: A shadow time meaning "no reservation can be made now" (the machine's ``NEVER``).
NEVER = 1 << 62
#: Positions in ``res``, EASY's reservation kept between decisions.
HEAD, SHADOW, EXTRA, PLAN_HEAD, PLAN_TIME = 0, 1, 2, 3, 4


def start_scan(t: int, renew: bool, queue: Any, qn: int, units: Any, est: Any,
               planned: Any, node_free: Any, lo: int, slots: Any, flat_nodes: Any,
               flat_counts: Any, n_flat: int, free: int, easy: bool, depth: int,
               no_room_ok: bool, size: int, index: Any, ends: Any, en: int, res: Any,
               power: bool, left: float, used: float, least_w: float, unit_w: float,
               tables: Any, out: Any, easy_power: Any) -> Any:
    """Start what the policy starts at time ``t``; see the module docstring. (At most 30
    parameters, the arrays grouped in tuples: Numba copies the function into the loops.)

    ``renew``: jobs ended or nodes changed since the last decision (EASY re-reserves);
    ``queue``: ``(q_job, q_rank, q_gone)``; ``no_room_ok``: a head whose units the running
    jobs' ends never free gets no reservation (else the slot accounting broke);
    ``size``, ``index`` ``(t_u, t_e, t_p)``: the queue index (``t_u`` empty: not indexed);
    ``ends``: EASY's running jobs ``(e_time, e_job, end_of)``; ``res``: EASY's head, shadow
    time, extra units, and the last plan recorded (job, time), kept between calls;
    ``tables``: ``(node_w, cur_w, job_w)`` under a cap; ``out``: ``(started, st_pos,
    st_len)``; ``easy_power``: ``(on, decision, cap, crow, c_time, c_value, job_at,
    scratch_w)`` — when ``on`` and under a cap, EASY's reservation is ``easy-power``'s
    (:mod:`.power_shadow`: the cap now ``cap``, its announced changes ``c_*[crow:]``; the
    scan writes each start's decision number and placement into ``job_at``).

    Returns ``(status, bad_job, qn, n_started, lo, n_flat, flat_nodes, flat_counts, free,
    used, en, backfilled, scanned)``: job ``started[k]`` took ``flat_*[st_pos[k]:st_pos[k]
    + st_len[k]]`` for ``k < n_started``; ``scanned`` counts the queue entries the backfill
    examined.
    """
    q_job, q_rank, q_gone = queue
    t_u, t_e, t_p = index
    e_time, e_job, end_of = ends
    node_w, cur_w, job_w = tables
    started, st_pos, st_len = out
    ep_on, decision, cap_w, crow, c_time, c_value, job_at, scratch_w = easy_power
    in_power = ep_on and power
    spare = 0.0  # easy-power's extra power
    used0 = used  # the machine's power when the decision began
    taken = 0.0  # what the decision's starts add
    indexed = t_u.shape[0] > 0
    head = res[HEAD]
    shadow = res[SHADOW]
    extra = res[EXTRA]
    n_nodes = node_free.shape[0]
    n_started = 0
    backfilled = 0
    scanned = 0
    status = DONE
    bad_job = -1
    job_p = 0.0  # what the job being tried adds
    n_try = 0  # its tentative placement: flat entries [n_flat, n_flat + n_try)
    i = 0
    stop = 0
    while i < qn:
        # kind: 0 = does not start, 1 = starts in order, 2 = backfilled ending by the
        # shadow time, 3 = backfilled on extra slots
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
            # first fit over the nodes' free slots, tentatively (power decides)
            flat_nodes = room(flat_nodes, n_flat + n_nodes)
            flat_counts = room(flat_counts, n_flat + n_nodes)
            n_try, left_u = first_fit(node_free, lo, u, flat_nodes, flat_counts, n_flat)
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
                    i = idx_jump(t_u, t_e, t_p, size, q_rank, qn, q_rank[i], free, left,
                                 extra, shadow - t)
                continue
            if not easy or free <= 0:
                break
            # EASY: reserve for the head (again when anything changed), then backfill
            if in_power:  # easy-power: in power too, afresh
                head = j
                spare = 0.0
                shadow, extra = easy_shadow(e_time, e_job, en, units, free, units[j], t)
                if shadow < 0:
                    shadow = NEVER
                    extra = free
                else:
                    shadow, extra, spare = power_shadow(
                        decision, shadow, extra, free, j, units, e_time, e_job, en, job_at,
                        flat_nodes, flat_counts, node_free, slots, node_w, cur_w, job_w,
                        used0 + taken, cap_w, c_time, c_value, crow, scratch_w)
            elif i > 0 or renew or j != head or shadow <= t:
                head = j
                shadow, extra = easy_shadow(e_time, e_job, en, units, free, units[j], t)
                if shadow < 0:
                    if not no_room_ok:
                        status = BROKEN
                        bad_job = j
                        break
                    shadow = NEVER  # nothing to protect: its units or power never come
                    extra = free
            if shadow < NEVER and (res[PLAN_HEAD] != j or res[PLAN_TIME] != shadow):
                res[PLAN_HEAD] = j
                res[PLAN_TIME] = shadow
                planned[j] = shadow
            stop = qn if depth < 0 else min(qn, i + depth)
            i += 1
            if indexed and i < qn:
                i = idx_jump(t_u, t_e, t_p, size, q_rank, qn, q_rank[i], free, left, extra,
                             shadow - t)
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
            used += job_w[j] + reread_nodes(node_w, cur_w, node_free, slots, flat_nodes, p,
                                            n_try)
        started[n_started] = j
        if in_power:
            job_at[j, 0] = decision
            job_at[j, 1] = p
            job_at[j, 2] = n_try
        st_pos[n_started] = p
        st_len[n_started] = n_try
        n_started += 1
        free -= u
        q_gone[i] = True
        if indexed:
            idx_put(t_u, t_e, t_p, size, q_rank[i], ABSENT, ABSENT, np.inf)
        if easy:  # expected end, kept sorted by (end, job)
            end_of[j] = t + est[j]
            en = ends_insert(e_time, e_job, en, end_of[j], j)
        i += 1
        if stop > 0 and free <= 0:
            break
        if stop > 0 and indexed and i < qn:
            i = idx_jump(t_u, t_e, t_p, size, q_rank, qn, q_rank[i], free, left, extra,
                         shadow - t)
    res[HEAD] = head
    res[SHADOW] = shadow
    res[EXTRA] = extra
    if n_started and status == DONE:
        qn = q_compact(q_job, q_rank, q_gone, qn)
    return (status, bad_job, qn, n_started, lo, n_flat, flat_nodes, flat_counts, free, used,
            en, backfilled, scanned)
