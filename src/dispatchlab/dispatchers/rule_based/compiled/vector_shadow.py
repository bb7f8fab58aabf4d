"""``easy-power``'s reservation on the node × resource matrix, for the compiled loop of jobs
whose units ask different resource vectors (:mod:`.vector_loop`), as
:meth:`EasyPower._power_shadow
<dispatchlab.dispatchers.rule_based.selection.easy_power.EasyPower._power_shadow>` makes it
on a ``NodeMachine``.

The candidate times are the matrix-based shadow time, the later expected ends of the jobs
running when the decision began (not those it started) and the announced cap changes after
now, in increasing order. At each, the jobs expected to end by then give their placements
back (and their own power), the allocator places the head on what is free then, the machine's
power then is the power now less the change of the node part (:func:`.nodes_power`) and
the released own power, and the head fits if its increase then (:func:`.start_delta` on
that free matrix) keeps it under the cap announced for then. The power left over is the
*extra power*; a candidate before the matrix-based shadow also sets the extra matrix to
what stays free beside the head then.
"""

from __future__ import annotations

from typing import Any

from dispatchlab.dispatchers.rule_based.compiled.queue_index import EPS
from dispatchlab.dispatchers.rule_based.compiled.vector_parts import (
    NEVER,
    nodes_power,
    start_delta,
    vplace,
)


def vpower_shadow(t: int, decision: int, shadow: int, head: int, free: Any, req: Any,
                  units: Any, e_time: Any, e_job: Any, en: int, job_dec: Any,
                  alloc_pos: Any, alloc_len: Any, flat_nodes: Any, flat_counts: Any,
                  power_in: Any, job_w: Any, used_now: float, cap_now: float, c_time: Any,
                  c_value: Any, crow: int, work: Any, alloc: Any) -> tuple[int, float]:
    """The head's reservation in power too: ``(shadow time, extra power)``; see the module
    docstring. ``power_in``: ``(mode, tab, cols, count_idle, capacity, node states, down
    power)`` of the meter;
    ``job_dec[j]``: the decision that started job ``j``; ``work``: ``(scratch matrix, extra
    matrix, float work array, candidate times, placement nodes, placement counts)``;
    ``alloc``: the allocator (:func:`.vplace`).
    Returns ``(NEVER, 0.0)`` when the head's power fits at no candidate."""
    if shadow >= NEVER:
        return NEVER, 0.0
    mode, tab, cols, count_idle, cap, state, down_w = power_in
    scratch, extra, vals, cand, sc_n, sc_c = work
    n_nodes, n_res = free.shape
    for nd in range(n_nodes):
        for r in range(n_res):
            scratch[nd, r] = free[nd, r]
    nodes_now = nodes_power(mode, tab, cols, count_idle, cap, free, vals, state, down_w)
    # the candidate times, sorted, without repeats
    nc = 0
    cand[nc] = shadow
    nc += 1
    for k in range(en):
        if e_time[k] > shadow and job_dec[e_job[k]] != decision:
            cand[nc] = e_time[k]
            nc += 1
    for k in range(crow, c_time.shape[0]):
        if c_time[k] > t:
            cand[nc] = c_time[k]
            nc += 1
    cand[:nc].sort()
    gone = 0.0
    k = 0
    pcap = crow
    cap_w = cap_now
    last = -1
    hreq = req[head]
    need = units[head]
    for ci in range(nc):
        at = cand[ci]
        if at == last:
            continue
        last = at
        while pcap < c_time.shape[0] and c_time[pcap] <= at:
            if c_time[pcap] > t:
                cap_w = c_value[pcap]
            pcap += 1
        while k < en and e_time[k] <= at:
            j = e_job[k]
            k += 1
            if job_dec[j] == decision:
                continue  # started in this decision: not running yet
            p = alloc_pos[j]
            for a in range(alloc_len[j]):
                nd = flat_nodes[p + a]
                c = flat_counts[p + a]
                for r in range(n_res):
                    scratch[nd, r] += c * req[j, r]
            gone += job_w[j]
        n_put, left = vplace(alloc, scratch, hreq, need, sc_n, sc_c, 0)
        if left > 0:
            continue
        power = used_now - (nodes_now - nodes_power(mode, tab, cols, count_idle, cap, scratch,
                                                    vals, state, down_w)) - gone
        d = start_delta(mode, tab, cols, count_idle, cap, scratch, job_w[head], hreq, sc_n,
                        sc_c, 0, n_put, vals)
        if power + d <= cap_w + EPS:
            if at < shadow:  # what stays free beside the head then
                for nd in range(n_nodes):
                    for r in range(n_res):
                        extra[nd, r] = scratch[nd, r]
                for a in range(n_put):
                    for r in range(n_res):
                        extra[sc_n[a], r] -= sc_c[a] * hreq[r]
            return at, cap_w - power - d
    return NEVER, 0.0
