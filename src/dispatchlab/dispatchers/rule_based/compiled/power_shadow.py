"""``easy-power``'s reservation on unit slots: the head's shadow time in power as well as in
slots, as :class:`~dispatchlab.dispatchers.rule_based.selection.easy_power.EasyPower` makes
it, for the compiled strict/EASY loops (:mod:`.slot_loop`, :mod:`.start_scan`).

From the slot-based shadow time on, the candidate times are that shadow, the later expected
ends of the jobs that were running when the decision began (not those it started) and every
announced cap change after now; at each, in increasing order, the jobs expected to end by
then give their slots back (their own power too, job-power mode), the machine's power is
rebuilt from the tabulated node power — the node part summed over every node as numpy sums
it (:func:`pairwise_sum`), so the figures are the general loop's to the last bit — and the
head fits if its first-fit increase keeps it under the cap announced for then. The power
left over then is the *extra power*; a candidate before the slot-based shadow (a cap that
rises while only power held the head) also sets the extra slots to what stays free beside
the head then.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dispatchlab.dispatchers.rule_based.compiled.queue_index import EPS

#: A shadow time meaning "no reservation can be made now" (the machine's ``NEVER``).
NEVER = 1 << 62
#: numpy's pairwise summation: blocks of at most this many values are summed with eight
#: accumulators.
_BLOCK = 128


def block_sum(a: Any, lo: int, n: int) -> float:
    """numpy's sum of ``a[lo:lo + n]`` for ``n ≤ 128`` (eight accumulators, then the rest)."""
    if n < 8:
        res = 0.0
        for i in range(n):
            res += a[lo + i]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    i = 8
    top = n - n % 8
    while i < top:
        r0 += a[lo + i]
        r1 += a[lo + i + 1]
        r2 += a[lo + i + 2]
        r3 += a[lo + i + 3]
        r4 += a[lo + i + 4]
        r5 += a[lo + i + 5]
        r6 += a[lo + i + 6]
        r7 += a[lo + i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


def pairwise_sum(a: Any, n: int) -> float:
    """``float(a[:n].sum())`` exactly as numpy computes it (pairwise: halves cut at a
    multiple of 8 down to blocks of 128), without recursion."""
    if n <= _BLOCK:
        return block_sum(a, 0, n)
    lo_s = np.empty(64, np.int64)  # pending ranges and how far each got (0, 1, 2 halves)
    n_s = np.empty(64, np.int64)
    stage = np.empty(64, np.int64)
    vals = np.empty(64, np.float64)
    sp = 1
    lo_s[0], n_s[0], stage[0] = 0, n, 0
    nv = 0
    while sp > 0:
        lo, m = lo_s[sp - 1], n_s[sp - 1]
        if m <= _BLOCK:
            vals[nv] = block_sum(a, lo, m)
            nv += 1
            sp -= 1
            continue
        half = m // 2
        half -= half % 8
        if stage[sp - 1] == 0:
            stage[sp - 1] = 1
            lo_s[sp], n_s[sp], stage[sp] = lo, half, 0
            sp += 1
        elif stage[sp - 1] == 1:
            stage[sp - 1] = 2
            lo_s[sp], n_s[sp], stage[sp] = lo + half, m - half, 0
            sp += 1
        else:
            vals[nv - 2] = vals[nv - 2] + vals[nv - 1]
            nv -= 1
            sp -= 1
    return vals[0]


def power_shadow(decision: int, shadow: int, extra: int, free: int, head: int, units: Any,
                 e_time: Any, e_job: Any, en: int, job_at: Any, flat_nodes: Any,
                 flat_counts: Any, node_free: Any, slots: Any, node_w: Any, cur_w: Any,
                 job_w: Any, used_now: float, cap_now: float, c_time: Any, c_value: Any,
                 crow: int, scratch_w: Any) -> tuple[int, int, float]:
    """The head's reservation in power too: ``(shadow time, extra slots, extra power)``;
    see the module docstring.

    ``shadow``/``extra``: the slot-based reservation (``shadow < NEVER``); ``free``: the
    free slots now; ``e_time``/``e_job``: running jobs by (expected end, job); row ``j`` of
    ``job_at``: the decision that started job ``j`` (those started in this one,
    ``decision``, do not run yet; an earlier decision at the same time started jobs that
    do) and its placement ``flat_*[pos:pos + len]`` as ``(decision, pos, len)``, column 3
    a work column of one entry per node; ``node_free``/``cur_w``: each node's free slots
    and power now (after the decision's starts so far); ``used_now``: the machine's power
    with those starts; ``cap_now``: the cap in force, ``c_time[crow:]``/``c_value[crow:]``
    its announced changes after now; ``scratch_w``: a work array of one entry per node.
    Returns ``(NEVER, extra, 0.0)`` when the head's power fits at no candidate.
    """
    n_nodes = node_free.shape[0]
    need = units[head]
    n_c = c_time.shape[0]
    scratch = job_at[:, 3]  # free slots per node then
    for nd in range(n_nodes):
        scratch[nd] = node_free[nd]
        scratch_w[nd] = cur_w[nd]
    nodes_now = pairwise_sum(cur_w, n_nodes)
    nodes_then = nodes_now
    gone = 0.0
    released = 0
    cap = cap_now
    stale = False  # nodes_then lags behind the releases
    priced = False  # power and d hold for the releases so far
    power = 0.0  # the machine's power then
    d = 0.0  # what the head adds then
    last = -1  # the previous candidate
    pe = 0  # the next expected end that may be a candidate
    pr = 0  # the next expected end to release
    pc = crow  # the next cap change that may be a candidate
    pcap = crow  # the next cap change not yet in force at the candidate
    while True:
        cand = shadow if shadow > last else NEVER
        while pe < en and (e_time[pe] <= shadow or e_time[pe] <= last
                           or job_at[e_job[pe], 0] == decision):
            pe += 1
        if pe < en and e_time[pe] < cand:
            cand = e_time[pe]
        while pc < n_c and c_time[pc] <= last:
            pc += 1
        if pc < n_c and c_time[pc] < cand:
            cand = c_time[pc]
        if cand == NEVER:
            break
        last = cand
        while pcap < n_c and c_time[pcap] <= cand:
            cap = c_value[pcap]
            pcap += 1
        while pr < en and e_time[pr] <= cand:
            j = e_job[pr]
            pr += 1
            if job_at[j, 0] == decision:
                continue  # started in this decision: not running yet
            p = job_at[j, 1]
            for a in range(job_at[j, 2]):
                nd = flat_nodes[p + a]
                scratch[nd] += flat_counts[p + a]
                scratch_w[nd] = node_w[nd, slots[nd] - scratch[nd]]
            gone += job_w[j]
            released += units[j]
            stale = True
            priced = False
        if free + released < need:
            continue  # its slots are not free then
        if not priced:  # (a candidate that only changes the cap keeps them)
            if stale:
                nodes_then = pairwise_sum(scratch_w, n_nodes)
                stale = False
            power = used_now - (nodes_now - nodes_then) - gone
            d = job_w[head]  # its first-fit increase then, node by node
            left = need
            nd = 0
            while left > 0:
                r = scratch[nd]
                if r > 0:
                    c = r if r < left else left
                    k = slots[nd] - r
                    d += node_w[nd, k + c] - node_w[nd, k]
                    left -= c
                nd += 1
            priced = True
        if power + d <= cap + EPS:
            if cand < shadow:  # what stays free beside the head then
                extra = free + released - need
            return cand, extra, cap - power - d
    return NEVER, extra, 0.0
