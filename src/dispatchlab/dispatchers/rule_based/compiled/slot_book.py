"""The strict/EASY decision kernel on unit slots, as the engine core
(:mod:`dispatchlab.engine.core.loop`) calls it: the rule-based policy's book (a record of
its own) and the three functions the core calls.

- ``slot_arrive``: a job joins the queue, kept in rank order (and, for EASY without a depth
  limit, in the queue index its backfill scans jump through);
- ``slot_leave``: a job stopped running, EASY forgets its expected end;
- ``slot_decide``: one decision, :func:`.start_scan.start_scan` on the core's nodes (the
  startable prefix, then EASY's reservation and backfill; ``easy-power``'s under a cap),
  its starts handed to the core.

:func:`scenario_slots` runs a simulation of the policy (static or dynamic ordering,
first-fit) on the core: a fixed machine or one whose nodes leave and come back, with or
without a power cap.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba.core import types
from numba.experimental import structref

from dispatchlab.dispatchers.rule_based.compiled.dynamic_order import (
    STATIC,
    order_queue,
    order_work,
)
from dispatchlab.dispatchers.rule_based.compiled.loop_parts import (
    ends_remove,
    least_power,
    q_insert,
    queue_arrays,
)
from dispatchlab.dispatchers.rule_based.compiled.queue_index import idx_new, idx_put
from dispatchlab.dispatchers.rule_based.compiled.start_scan import EXTRA, start_scan
from dispatchlab.engine.core.loop import outcome, run_core
from dispatchlab.engine.core.record import new_core


@structref.register
class SlotBookType(types.StructRef):
    """Numba's type of :class:`SlotBook`."""

    def preprocess_fields(self, fields: Any) -> Any:
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class SlotBook(structref.StructRefProxy):
    """The policy's book: its options, queue, queue index, EASY's running list and
    reservation, ``easy-power``'s work arrays, its count of backfilled starts."""


structref.define_proxy(SlotBook, SlotBookType, [
    "est", "rank", "easy", "depth", "easy_power", "least_w", "unit_w", "score", "term_a",
    "term_b", "work", "q_job", "q_rank", "q_gone", "qn", "indexed", "size", "t_u", "t_e",
    "t_p", "e_time", "e_job", "end_of", "en", "res", "job_at", "scratch_w", "backfilled"])


def new_slot_book(core: Any, policy: Any) -> Any:
    """An empty book for ``policy`` ``(est, rank, easy, depth, easy_power, unit_w, score,
    term_a, term_b)`` on the core's jobs and machine."""
    est, rank, easy, depth, easy_power, unit_w, score, term_a, term_b = policy
    n, n_nodes, power = core.submit.shape[0], core.slots.shape[0], core.power
    q_job, q_rank, q_gone = queue_arrays(n)
    indexed = easy and depth < 0 and score == STATIC  # (a dynamic order: no fixed ranks)
    size, t_u, t_e, t_p = idx_new(n, indexed, power)
    res = np.full(5, -1, np.int64)  # EASY's head, shadow, extra, last plan (start_scan)
    res[EXTRA] = 0
    on = easy_power and power  # easy-power under a cap: each start's decision, placement
    return SlotBook(
        est, rank, easy, depth, easy_power, least_power(core.job_w, unit_w, power), unit_w,
        score, term_a, term_b, order_work(n, score), q_job, q_rank, q_gone, 0, indexed,
        size, t_u, t_e, t_p, np.empty(n, np.int64), np.empty(n, np.int64),
        np.zeros(n, np.int64), 0, res, np.full((max(n, n_nodes) if on else 0, 4), -1, np.int64),
        np.empty(n_nodes if on else 0, np.float64), 0)


def slot_arrive(ks: Any, core: Any, job: int) -> None:
    """``job`` joins the queue in rank order."""
    r = ks.rank[job]
    ks.qn = q_insert(ks.q_job, ks.q_rank, ks.qn, job, r)
    if ks.indexed:
        u = core.units[job]
        idx_put(ks.t_u, ks.t_e, ks.t_p, ks.size, r, u, ks.est[job],
                core.job_w[job] + u * ks.unit_w if core.power else 0.0)


def slot_leave(ks: Any, core: Any, job: int) -> None:
    """``job`` stopped running: EASY drops its expected end."""
    if ks.easy:
        ks.en = ends_remove(ks.e_time, ks.e_job, ks.en, ks.end_of[job], job)


def slot_decide(ks: Any, core: Any, t: int, renew: bool) -> None:
    """One decision at ``t`` (``renew``: jobs stopped or nodes changed since the last):
    the starts go to the core's ``started`` / ``st_pos`` / ``st_len``, their nodes taken."""
    free = core.alive_slots - core.busy
    qn = ks.qn
    if qn <= 0 or free <= 0:
        return
    if ks.score != STATIC:  # a dynamic ordering: the queue sorted afresh
        order_queue(ks.score, t, ks.q_job, ks.q_rank, qn, core.submit, ks.term_a, ks.term_b,
                    ks.work)
    used, cap_w = core.used, core.cap_w
    (status, bad_job, qn, n_new, lo, n_flat, flat_nodes, flat_counts, free, used, en,
     n_back, _) = start_scan(
        t, renew, (ks.q_job, ks.q_rank, ks.q_gone), qn, core.units, ks.est, core.planned,
        core.node_free, core.lo, core.slots, core.flat_nodes, core.flat_counts, core.n_flat,
        free, ks.easy, ks.depth, True, ks.size, (ks.t_u, ks.t_e, ks.t_p),
        (ks.e_time, ks.e_job, ks.end_of), ks.en, ks.res, core.power, cap_w - used, used,
        ks.least_w, ks.unit_w, (core.node_w, core.cur_w, core.job_w),
        (core.started, core.st_pos, core.st_len),
        (ks.easy_power, core.n_points, cap_w, core.crow, core.c_time, core.c_value,
         ks.job_at, ks.scratch_w))
    ks.backfilled += n_back
    ks.qn, ks.en = qn, en
    core.status, core.bad_job, core.n_new, core.lo, core.n_flat = status, bad_job, n_new, lo, n_flat
    core.used = used
    if flat_nodes.shape[0] != core.flat_nodes.shape[0]:
        core.flat_nodes, core.flat_counts = flat_nodes, flat_counts


def scenario_slots(jobs: Any, machine: Any, rows: Any, power: Any, policy: Any) -> Any:
    """Simulate the policy on the engine core: ``jobs``, ``machine``, ``rows`` and
    ``power`` as :func:`dispatchlab.engine.core.record.new_core` takes them, ``policy`` as
    :func:`new_slot_book`. Returns :func:`dispatchlab.engine.core.loop.outcome`'s tuple,
    the backfilled starts counted."""
    core = new_core(jobs, machine, rows, power)
    ks = new_slot_book(core, policy)
    run_core(core, ks, slot_arrive, slot_leave, slot_decide)
    return outcome(core, ks.backfilled)
