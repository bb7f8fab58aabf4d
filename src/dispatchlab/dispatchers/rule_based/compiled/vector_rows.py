"""Nodes leaving and coming back on the node × resource matrix of the loop of jobs asking
different per-unit resource vectors (:mod:`.vector_loop`), as the engine applies a
scenario's node rows.

The choice of nodes, the victims' order, their aborted segments and the re-queue or
failure are the unit-slot loops' own (:mod:`.node_rows`: ``row_moves``, ``next_victim``,
``leave_running``, ``bank_abort``); what differs is the machine: a victim gives its
placement back to the free matrix and its pooled totals, a leaving node takes its row out
of them (all of it is free once its jobs are gone) and a node coming back brings it in,
and the engine's power meter re-reads each node from its usage (:func:`.vector_parts.reread`)
or its state (``down_w``: what a node draws down).
"""

from __future__ import annotations

from typing import Any

from dispatchlab.dispatchers.rule_based.compiled.loop_parts import log_node
from dispatchlab.dispatchers.rule_based.compiled.vector_parts import (
    _busy,
    give_v,
    node_part,
    reread,
)
from dispatchlab.engine.core.node_rows import (
    DOWN,
    ON,
    bank_abort,
    leave_running,
    next_victim,
    row_moves,
)


def apply_vector_rows(t: int, srow: int, rows: Any, machine: Any, runs: Any, segs: Any,
                      placed: Any, power: bool, meter: Any, requeue: bool, counts: Any,
                      node_log: Any, n_log: int, fin: Any, requeued: Any, used: float) -> Any:
    """Apply the scenario rows at ``t`` from row ``srow`` on, in file order, as the engine
    does (see :func:`.node_rows.apply_node_rows`, whose parts this calls).

    ``rows``: ``(s_time, s_kind, s_value, s_off, s_nodes)``; ``machine``: ``(state, free,
    free totals, capacity, usable totals, req, moving)``; ``runs`` and ``segs`` as
    :mod:`.node_rows` reads them; ``placed``: each job's current placement ``(alloc_pos,
    alloc_len)`` in the flat arrays; ``meter``: ``(mode, tab, cols, count_idle, cur_w,
    job_w, down_w)`` (:mod:`.vector_parts`); ``counts``: ``(running, n_fin, n_req,
    queued)``. Stopped jobs go to ``fin``, re-queued ones to ``requeued``.

    Returns ``(srow, (running, n_fin, n_req, queued), node_log, n_log, used)``.
    """
    s_time = rows[0]
    state, free, ft, cap, alive_res, req, moving = machine
    run_list, cur, units = runs[0], runs[2], runs[9]
    flat_nodes, flat_counts = segs[5], segs[6]
    alloc_pos, alloc_len = placed
    mode, tab, cols, count_idle, cur_w, job_w, down_w = meter
    rn, n_fin, n_req, queued = counts
    n_rows = s_time.shape[0]
    n_res = ft.shape[0]
    while srow < n_rows and s_time[srow] == t:
        n_mv, leaving = row_moves(srow, rows, state, moving)
        for step in range(n_mv):
            nd = moving[step]
            if leaving:
                if state[nd] == DOWN:
                    continue
                if _busy(cap, free, nd):  # jobs run on it: abort them, in start order
                    m = next_victim(nd, 0, runs, segs, rn)
                    while m < rn:
                        job = run_list[m]
                        s = cur[job]
                        p, k = alloc_pos[job], alloc_len[job]
                        give_v(free, ft, req[job], units[job], flat_nodes, flat_counts, p, k)
                        if power:  # its own power off, then its nodes re-read
                            used -= job_w[job]
                            used += reread(mode, tab, cols, count_idle, cap, free, cur_w,
                                           flat_nodes, p, k)
                        rn = leave_running(t, job, runs, segs, rn)
                        n_fin, n_req, queued = bank_abort(t, job, s, runs, segs, requeue, fin,
                                                          requeued, (n_fin, n_req, queued))
                        m = next_victim(nd, m, runs, segs, rn)
                for r in range(n_res):
                    ft[r] -= free[nd, r]
                    alive_res[r] -= cap[nd, r]
                    free[nd, r] = 0
                state[nd] = DOWN
                w = down_w[nd]
            else:
                if state[nd] != DOWN:
                    continue
                for r in range(n_res):
                    free[nd, r] = cap[nd, r]
                    ft[r] += cap[nd, r]
                    alive_res[r] += cap[nd, r]
                state[nd] = ON
                w = node_part(mode, tab, cols, count_idle, cap, free, nd)
            if power:  # the engine re-reads the node in its new state
                used += w - cur_w[nd]
                cur_w[nd] = w
            node_log, n_log = log_node(node_log, n_log, t, nd, state[nd])
        srow += 1
    return srow, (rn, n_fin, n_req, queued), node_log, n_log, used
