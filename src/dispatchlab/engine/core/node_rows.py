"""Nodes leaving and coming back, as the engine applies a scenario's node rows: the core's
scenario phase (:mod:`.loop`), shared with the wings' loops of a machine whose nodes change
that have not moved onto the core yet (conservative backfilling, ``+poweroff``).

A loop keeps, per job, its open segment (``cur``), the live number of its end event
(``end_seq``), when its current run's work began (``work_from``), the work left (``left``)
and whether it has never run (``fresh``); the running jobs in start order (``run_list``,
each job's place in ``run_pos``: victims are aborted in that order); the segments' placements
in the flat arrays (``seg_pos``, ``seg_len``) and their ends, outcomes and lost work.

The parts that do not read the machine — which nodes a row moves (:func:`row_moves`), the
jobs on a leaving node in start order (:func:`next_victim`), a run leaving the running
list (:func:`leave_running`) and an aborted segment's accounting (:func:`bank_abort`) —
are also called by the loop of jobs asking different resource vectors
(:mod:`.vector_rows`), which gives resources back on its node × resource matrix instead.
"""

from __future__ import annotations

from typing import Any

from dispatchlab.engine.core.parts import (
    give_back,
    log_node,
    release_power,
)

#: Node states, as :mod:`dispatchlab.engine.state`.
ON, DOWN = 0, 4
#: Segment outcomes, as :mod:`dispatchlab.engine.recorder`.
COMPLETED, KILLED, ABORTED = 0, 1, 2
#: Scenario row kinds.
NODE_DOWN, NODE_UP, ALIVE_NODES = 0, 1, 2


def stop_run(t: int, job: int, runs: Any, segs: Any, node_free: Any, slots: Any, lo: int,
             power: bool, tables: Any, used: float, rn: int) -> tuple[int, float, int]:
    """Job ``job`` stops running at ``t`` (its segment's end and outcome are the caller's):
    its slots (and, under a cap, its power: ``tables`` ``(node_w, cur_w, job_w)``) given back,
    its end event dropped, it leaves the running list. Returns ``(lo, used, rn)``."""
    seg_pos, seg_len = segs[0], segs[1]
    flat_nodes = segs[5]
    node_w, cur_w, job_w = tables
    s = runs[2][job]
    lo = give_back(node_free, flat_nodes, segs[6], seg_pos[s], seg_len[s], lo)
    if power:
        used = release_power(used, job_w[job], node_w, cur_w, node_free, slots, flat_nodes,
                             seg_pos[s], seg_len[s])
    return lo, used, leave_running(t, job, runs, segs, rn)


def leave_running(t: int, job: int, runs: Any, segs: Any, rn: int) -> int:
    """Job ``job``, whose resources were given back, stops running at ``t``: its end event
    dropped, its segment's end set, it leaves the running list (whatever the machine: unit
    slots or the node × resource matrix). Returns the new number of running jobs."""
    run_list, run_pos, cur, end_seq = runs[0], runs[1], runs[2], runs[3]
    end_seq[job] = -1
    segs[2][cur[job]] = t
    cur[job] = -1
    pos = run_pos[job]
    for m in range(pos, rn - 1):
        run_list[m] = run_list[m + 1]
        run_pos[run_list[m]] = m
    run_pos[job] = -1
    return rn - 1


def row_moves(srow: int, rows: Any, state: Any, moving: Any) -> tuple[int, bool]:
    """The nodes scenario row ``srow`` moves, chosen before any moves (targets as listed;
    ``alive_nodes``: the highest-index present nodes leave, the lowest-index absent ones
    join, in increasing index order), written to ``moving``: ``(how many, leaving)``."""
    s_kind, s_value, s_off, s_nodes = rows[1], rows[2], rows[3], rows[4]
    n_nodes = state.shape[0]
    kind = s_kind[srow]
    n_mv = 0
    if kind == ALIVE_NODES:
        present = 0
        for x in range(n_nodes):
            if state[x] != DOWN:
                present += 1
        want = s_value[srow]
        leaving = want < present
        if leaving:
            seen = 0
            for x in range(n_nodes):
                if state[x] != DOWN:
                    if seen >= want:
                        moving[n_mv] = x
                        n_mv += 1
                    seen += 1
        elif want > present:
            for x in range(n_nodes):
                if state[x] == DOWN and n_mv < want - present:
                    moving[n_mv] = x
                    n_mv += 1
    else:
        leaving = kind == NODE_DOWN
        for a in range(s_off[srow], s_off[srow + 1]):
            moving[n_mv] = s_nodes[a]
            n_mv += 1
    return n_mv, leaving


def next_victim(nd: int, m: int, runs: Any, segs: Any, rn: int) -> int:
    """The first place from ``m`` on in the running list (start order) of a job whose
    segment uses node ``nd``; ``rn`` when none does."""
    run_list, cur = runs[0], runs[2]
    seg_pos, seg_len, flat_nodes = segs[0], segs[1], segs[5]
    while m < rn:
        s = cur[run_list[m]]
        p = seg_pos[s]
        for a in range(seg_len[s]):
            if flat_nodes[p + a] == nd:
                return m
        m += 1
    return rn


def bank_abort(t: int, job: int, s: int, runs: Any, segs: Any, requeue: bool, fin: Any,
               requeued: Any, tallies: Any) -> tuple[int, int, int]:
    """Job ``job``, stopped at ``t`` because a node of its segment ``s`` left: the segment
    is aborted, the work since its last checkpoint lost, and the job re-queued (``requeue``)
    or failed; the machine forgets it either way. ``tallies``: ``(n_fin, n_req, queued)``,
    returned updated."""
    work_from, left, fresh, failed, checkpoint = runs[4], runs[5], runs[6], runs[7], runs[8]
    seg_out, seg_lost = segs[3], segs[4]
    n_fin, n_req, queued = tallies
    worked = t - work_from[job]
    if worked < 0:
        worked = 0
    c = checkpoint[job]
    kept = (worked // c) * c if c > 0 else 0
    seg_out[s] = ABORTED
    seg_lost[s] = worked - kept
    rest = left[job] - kept / 1.0
    left[job] = rest if rest > 0.0 else 0.0
    fresh[job] = False
    fin[n_fin] = job  # the machine forgets it either way
    n_fin += 1
    if requeue:
        requeued[n_req] = job
        n_req += 1
        queued += 1
    else:
        failed[job] = True
    return n_fin, n_req, queued


def apply_node_rows(t: int, srow: int, rows: Any, nodes: Any, runs: Any, segs: Any,
                    power: bool, tables: Any, down_w: Any, requeue: bool, counts: Any,
                    node_log: Any, n_log: int, fin: Any, requeued: Any, used: float) -> Any:
    """Apply the scenario rows at ``t`` from row ``srow`` on, in file order, as the engine
    does: the nodes each row moves are chosen before any moves (targets as listed;
    ``alive_nodes``: the highest-index present nodes leave, the lowest-index absent ones
    join, in increasing index order); a leaving node aborts the jobs running on it, in the
    order they started (re-queued from zero or from their last checkpoint, or failed), draws
    its down power and is logged (a node off, booting or shutting down — the power-off
    loop's — hosts nothing and holds no usable capacity: it only goes down); a node coming
    back is free, idle and logged.

    ``rows``: ``(s_time, s_kind, s_value, s_off, s_nodes)``; ``nodes``: ``(state,
    node_free, slots, alive_res, cap_res, moving)``; ``runs``: ``(run_list, run_pos, cur,
    end_seq, work_from, left, fresh, failed, checkpoint, units)``; ``segs``: ``(seg_pos,
    seg_len, seg_t1, seg_out, seg_lost, flat_nodes, flat_counts)``; ``counts``: ``(rn, lo,
    busy, n_fin, n_req, queued, alive_slots)``. Stopped jobs go to ``fin``, re-queued ones
    to ``requeued``.

    Returns ``(srow, (rn, lo, busy, n_fin, n_req, queued, alive_slots), node_log, n_log,
    used)``.
    """
    s_time = rows[0]
    state, node_free, slots, alive_res, cap_res, moving = nodes
    run_list, cur, units = runs[0], runs[2], runs[9]
    node_w, cur_w = tables[0], tables[1]
    rn, lo, busy, n_fin, n_req, queued, alive_slots = counts
    n_rows = s_time.shape[0]
    n_res = alive_res.shape[0]
    while srow < n_rows and s_time[srow] == t:
        n_mv, leaving = row_moves(srow, rows, state, moving)
        for step in range(n_mv):
            nd = moving[step]
            if not leaving and state[nd] != DOWN:
                continue
            if leaving:
                if state[nd] == DOWN:
                    continue
                usable = state[nd] == ON  # (a node off, booting or shutting down is not)
                if usable and node_free[nd] != slots[nd]:  # jobs run on it: abort them
                    m = next_victim(nd, 0, runs, segs, rn)
                    while m < rn:
                        job = run_list[m]
                        s = cur[job]
                        lo, used, rn = stop_run(t, job, runs, segs, node_free, slots, lo,
                                                power, tables, used, rn)
                        busy -= units[job]
                        n_fin, n_req, queued = bank_abort(t, job, s, runs, segs, requeue, fin,
                                                          requeued, (n_fin, n_req, queued))
                        m = next_victim(nd, m, runs, segs, rn)
                if usable:
                    alive_slots -= slots[nd]
                    for r in range(n_res):
                        alive_res[r] -= cap_res[nd, r]
                node_free[nd] = 0
                state[nd] = DOWN
                if power:  # the engine re-reads the node in its new state
                    used += down_w[nd] - cur_w[nd]
                    cur_w[nd] = down_w[nd]
            else:
                alive_slots += slots[nd]
                for r in range(n_res):
                    alive_res[r] += cap_res[nd, r]
                node_free[nd] = slots[nd]
                if nd < lo:
                    lo = nd
                state[nd] = ON
                if power:
                    used += node_w[nd, 0] - cur_w[nd]
                    cur_w[nd] = node_w[nd, 0]
            node_log, n_log = log_node(node_log, n_log, t, nd, state[nd])
        srow += 1
    return srow, (rn, lo, busy, n_fin, n_req, queued, alive_slots), node_log, n_log, used
