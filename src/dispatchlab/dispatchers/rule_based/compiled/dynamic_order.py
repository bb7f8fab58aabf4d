"""Dynamic queue orderings (``wfp3``, ``uni``, ``slowdown``) in the compiled strict and EASY
loops: at every decision the queue is sorted afresh by the score the general loop's
:class:`~dispatchlab.dispatchers.rule_based.orderings.JobQueue` computes, ties by job index
(``np.lexsort((jobs, score))``).

Each score is the same floating-point formula, in the same operation order, as
:mod:`~dispatchlab.dispatchers.rule_based.orderings` (``w`` the wait so far as a double), of
IEEE operations only (each rounded alike by numpy and Numba), so the doubles are the general
loop's to the last bit:

- ``wfp3``: ``x = w / r``, ``-(x·x·x)·n`` (the ordering cubes by two products: numpy's
  ``pow`` differs from Numba's in ~5 % of values);
- ``uni``: ``-w / divisor[j]``, the divisor ``log2(max(n, 2))·r`` computed per job by numpy
  before the run (:func:`~dispatchlab.dispatchers.rule_based.orderings.uni_divisor`): its
  ``log2`` is numpy's own, whose last bit may differ from the C library's (SIMD builds);
- ``slowdown``: ``-(w + d) / d``, ``d`` the duration estimate.

Plain functions on arrays, compiled into the loops (:mod:`.kernel` ``loop_helpers``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: Score codes of :attr:`CompiledPlan.score <dispatchlab.engine.compiled.plan.CompiledPlan>`
#: (``STATIC``: a static ordering, the ranks hold).
STATIC, WFP3, UNI, SLOWDOWN = 0, 1, 2, 3
#: The dynamic orderings the compiled loops take, by name.
SCORES = {"wfp3": WFP3, "uni": UNI, "slowdown": SLOWDOWN}
#: Insertion-sorted runs of the merge sort.
_RUN = 16


def score_of(score: int, t: int, submit: int, a: float, b: float) -> float:
    """Job's score at time ``t`` (submitted at ``submit``; per-job terms ``a``, ``b``:
    ``wfp3`` r and n, ``uni`` its divisor, ``slowdown`` its estimate)."""
    w = float(t - submit)
    if score == WFP3:
        x = w / a
        return -(x * x * x) * b
    if score == UNI:
        return -w / a
    return -(w + a) / a


def score_before(ka: float, ja: int, kb: float, jb: int) -> bool:
    """``(ka, ja)`` sorts before ``(kb, jb)``: by score, ties by job index."""
    return ka < kb or (ka == kb and ja < jb)


def sort_by_score(keys: Any, jobs: Any, n: int, tmp_k: Any, tmp_j: Any) -> None:
    """Sort ``keys[:n]`` and ``jobs[:n]`` together by (key, job): runs of :data:`_RUN`
    by insertion, then merged bottom-up (a merge of two runs already in order is a copy)."""
    for lo in range(0, n, _RUN):
        hi = min(lo + _RUN, n)
        for i in range(lo + 1, hi):
            k, j = keys[i], jobs[i]
            m = i - 1
            while m >= lo and score_before(k, j, keys[m], jobs[m]):
                keys[m + 1] = keys[m]
                jobs[m + 1] = jobs[m]
                m -= 1
            keys[m + 1] = k
            jobs[m + 1] = j
    width = _RUN
    in_tmp = False  # the sorted runs are in tmp_* (else in keys/jobs)
    while width < n:
        src_k, src_j = (tmp_k, tmp_j) if in_tmp else (keys, jobs)
        dst_k, dst_j = (keys, jobs) if in_tmp else (tmp_k, tmp_j)
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            a, b, o = lo, mid, lo
            if mid < hi and score_before(src_k[mid], src_j[mid], src_k[mid - 1], src_j[mid - 1]):
                while a < mid and b < hi:
                    if score_before(src_k[b], src_j[b], src_k[a], src_j[a]):
                        dst_k[o] = src_k[b]
                        dst_j[o] = src_j[b]
                        b += 1
                    else:
                        dst_k[o] = src_k[a]
                        dst_j[o] = src_j[a]
                        a += 1
                    o += 1
            while a < mid:
                dst_k[o] = src_k[a]
                dst_j[o] = src_j[a]
                a += 1
                o += 1
            while b < hi:
                dst_k[o] = src_k[b]
                dst_j[o] = src_j[b]
                b += 1
                o += 1
        in_tmp = not in_tmp
        width *= 2
    if in_tmp:
        for i in range(n):
            keys[i] = tmp_k[i]
            jobs[i] = tmp_j[i]


def order_queue(score: int, t: int, q_job: Any, q_rank: Any, qn: int, submit: Any,
                term_a: Any, term_b: Any, work: Any) -> None:
    """Sort the queue ``q_job[:qn]`` by the dynamic ``score`` at time ``t`` as the general
    loop does (``work``: three scratch arrays of the queue's length at least; the scores
    are left in ``work[0][:qn]``, in queue order); the ranks become the job indices (a
    dynamic run keeps no order between decisions)."""
    keys, tmp_k, tmp_j = work
    for k in range(qn):
        j = q_job[k]
        keys[k] = score_of(score, t, submit[j], term_a[j], term_b[j])
    sort_by_score(keys, q_job, qn, tmp_k, tmp_j)
    for k in range(qn):
        q_rank[k] = q_job[k]


def order_work(n: int, score: int) -> Any:
    """Scratch arrays for :func:`order_queue` for ``n`` jobs (empty for a static order)."""
    m = n if score != STATIC else 0
    return np.empty(m, np.float64), np.empty(m, np.float64), np.empty(m, np.int64)
