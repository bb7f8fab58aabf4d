"""The slot loop of a machine whose idle nodes are switched off: one function, compiled.

Mirrors :meth:`Simulator.run <dispatchlab.engine.simulator.Simulator.run>` driving
:class:`~dispatchlab.dispatchers.rule_based.power_off.IdlePowerOff` around a
:class:`~dispatchlab.dispatchers.rule_based.policy.Policy` (a static or dynamic ordering,
strict, EASY or ``easy-power`` selection, first-fit, a
:class:`~dispatchlab.dispatchers.machine.SlotMachine`), with or without a power cap (fixed,
or varying with a scenario's ``power_cap`` rows) and a scenario of nodes leaving and coming
back. Each node is on, off, booting, shutting down or down (only an ``on`` node hosts jobs);
the wrapped policy decides on the nodes that are on (:mod:`.start_scan`, as the scenario
loop), then the wrapper, in the engine's order of application:

- **power on** when jobs still wait: the first of them in the policy's order (the head of
  the queue, kept in rank order or sorted by the dynamic score now, once this round's starts
  left it) must fit, node by node, on what is free on the nodes
  on and not given a job in this round plus every booting node; nodes that are off are
  switched on, cheapest boot first (lowest index on ties), until it does. A node with no
  boot delay is on at once and a timer calls the dispatcher 1 s later; the others boot.
- **power off** when nothing waits: every node on and idle (free, not given a job now) for
  ``max(timeout, 1)`` s is switched off, by index (off at once without a shutdown delay);
  a timer wakes the dispatcher when the next idle node reaches the timeout.

At one time the engine applies segment ends, then node transitions (boot or shutdown done,
in the order they were asked), then scenario rows (:func:`.node_rows.apply_node_rows`; cap
rows), then timers, then submissions and re-queued jobs; then the dispatcher decides once. A
node leaving the machine (scenario) aborts the jobs on it and goes ``down`` from whatever
state it is in: a boot or shutdown under way is dropped (its end still makes a decision
point, as the engine's stale node event does); a node coming back is on and idle. A node
the wrapper switched, a transition, a node row or a timer makes EASY reserve afresh (the
engine's ``events.nodes`` / ``woken``), as a segment end does. Under a power cap the
policy's starts are costed as in the scenario loop, every node's power follows its state
(the engine's running sum), and a switch is made only when its power fits, as the wrapper
checks it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dispatchlab.dispatchers.rule_based.compiled.dynamic_order import (
    STATIC,
    order_queue,
    order_work,
)
from dispatchlab.dispatchers.rule_based.compiled.loop_parts import (
    ends_remove,
    ev_room,
    gather,
    give_back,
    idle_wait,
    least_power,
    log_node,
    next_joiner,
    q_insert,
    queue_arrays,
    release_power,
    room,
    sample_point,
)
from dispatchlab.dispatchers.rule_based.compiled.queue_index import EPS, idx_new, idx_put
from dispatchlab.dispatchers.rule_based.compiled.start_scan import EXTRA, start_scan
from dispatchlab.engine.compiled.slot_availability_ops import heap_pop, heap_push

# (status codes as the engine core's: ``FALLBACK``, the general loop must run to raise its
# own error, a stuck queue or an idle machine waiting too long)
from dispatchlab.engine.core.codes import DONE, FALLBACK, NEVER
from dispatchlab.engine.core.node_rows import apply_node_rows
from dispatchlab.platform.node_states import BOOTING, OFF, ON, SHUTTING_DOWN

#: Segment outcomes, as :mod:`dispatchlab.engine.recorder`.
COMPLETED, KILLED = 0, 1


def poweroff_loop(submit: Any, runtime: Any, walltime: Any, kill: bool, units: Any,
                  est: Any, rank: Any, skip: Any, slots: Any, easy: bool, depth: int,
                  easy_power: bool, cap_res: Any, req: Any, boot: Any, down: Any,
                  boot_order: Any, timeout: int, s_time: Any, s_kind: Any, s_value: Any,
                  s_off: Any, s_nodes: Any, requeue: bool, checkpoint: Any, power: bool,
                  cap_w: float, used_w: float, node_w: Any, down_w: Any, job_w: Any,
                  unit_w: float, state_w: Any, c_time: Any, c_value: Any, score: int,
                  term_a: Any, term_b: Any) -> Any:
    """Simulate; see the module docstring.

    ``runtime``/``walltime``: per job (``kill``: end a run at its wall-time); ``slots[n]``:
    node ``n``'s unit slots, ``cap_res[n, r]`` its capacity per resource, ``req`` the
    per-unit request; ``easy_power``: EASY's reservation is ``easy-power``'s under a cap
    (:mod:`.power_shadow`); ``boot[n]`` / ``down[n]``: its boot and shutdown delays (s);
    ``boot_order``: the nodes by (boot delay, index); ``timeout``: the wrapper's idle time
    before a switch-off (s). Scenario row ``k`` at ``s_time[k]`` of kind ``s_kind[k]`` with
    ``s_value[k]`` (``alive_nodes``) or target nodes ``s_nodes[s_off[k]:s_off[k + 1]]``,
    jobs on a leaving node re-queued (``requeue``; from their last ``checkpoint``) or
    failed, as in the engine core (:mod:`dispatchlab.engine.core.loop`). ``power``: a cap
    of ``cap_w`` W holds, ``c_value[k]`` from ``c_time[k]`` on (waited for when it falls),
    the power tabulated as in :mod:`.slot_loop` (``node_w``, ``job_w``, ``unit_w``,
    ``used_w``; ``down_w[n]``: node
    ``n`` down) and ``state_w[n, s]`` what node ``n`` draws in state ``s`` when not on: a
    node is switched on only if its booting power fits on top of what the round's starts
    add (each start costed as the engine's ``start_delta``), off only if its shutting-down
    power fits, the first nodes of each list that fit; the engine's own check of each
    transition (its ``after`` state for a zero delay) failing sends the run to the general
    loop, to raise. ``score``, ``term_a``, ``term_b``: a dynamic ordering, as in
    :mod:`.slot_loop`.

    Only the nodes a decision point touches (their jobs ended, started or were aborted,
    their transition ended, a scenario row moved them, they came on at once) are looked at:
    the idle nodes wait in a heap by the time they reach the timeout (entries of nodes no
    longer idle since then are dropped when met).

    Returns the scenario loop's tuple ``(status, seg_job, seg_t0, seg_t1, seg_out,
    seg_lost, seg_off, seg_nodes, seg_counts, n_seg, planned, points, alive_pts, n_points,
    node_log, n_log, failed, backfilled, bad_job, watts, caps)`` (without a cap ``watts``
    and ``caps`` are empty) followed by ``(power_offs, power_ons)``, the nodes the wrapper
    switched off and on.
    """
    n = submit.shape[0]
    n_nodes = slots.shape[0]
    n_res = req.shape[0]
    n_rows = s_time.shape[0]
    n_c = c_time.shape[0]
    node_free = slots.copy()
    state = np.zeros(n_nodes, np.int64)  # every node on, idle from the start
    seen = np.zeros(n_nodes, np.int64)  # each node's state when this loop last looked
    idle_since = np.zeros(n_nodes, np.int64)
    was_idle = np.ones(n_nodes, np.bool_)
    wait = timeout if timeout > 1 else 1  # never at the instant a job left the node
    no_pos = np.zeros(0, np.int64)  # (the heaps track no positions)
    # idle nodes by (idle since + wait, node)
    i_key = np.empty(2 * n_nodes + 16, np.int64)
    i_id = np.empty(2 * n_nodes + 16, np.int64)
    i_n = 0
    for nd in range(n_nodes):
        i_n = heap_push(i_key, i_id, no_pos, i_n, wait, nd)
    due = np.empty(n_nodes, np.int64)
    mark = np.full(n_nodes, -1, np.int64)  # the decision that last touched it
    touched = np.empty(n_nodes, np.int64)
    taken_at = np.full(n_nodes, -1, np.int64)  # the decision that last gave it a job
    at_once = np.empty(n_nodes, np.int64)  # switched on at once at the last decision
    n_at_once = 0
    alive_res = np.zeros(n_res, np.int64)
    alive_slots = 0
    for nd in range(n_nodes):
        alive_slots += slots[nd]
        for r in range(n_res):
            alive_res[r] += cap_res[nd, r]
    n_off = 0  # nodes off (not those shutting down)
    booting_slots = 0
    lo = 0  # every node below lo has no free slot
    # per job: current segment, its work and end (as the scenario loop)
    planned = np.full(n, -1, np.int64)
    cur = np.full(n, -1, np.int64)  # its open segment
    seg_of = np.full(n, -1, np.int64)  # its last segment
    fresh = np.ones(n, np.bool_)
    left = runtime.astype(np.float64)  # reference seconds of work left
    work_from = np.zeros(n, np.int64)
    end_seq = np.full(n, -1, np.int64)  # its live end event
    end_killed = np.zeros(n, np.bool_)
    run_pos = np.full(n, -1, np.int64)  # its place among the running jobs (node rows only)
    failed = np.zeros(n, np.bool_)
    # segments in start order (grown on demand)
    seg_job = np.empty(n + 16, np.int64)
    seg_t0 = np.empty(n + 16, np.int64)
    seg_t1 = np.empty(n + 16, np.int64)
    seg_out = np.empty(n + 16, np.int64)
    seg_lost = np.empty(n + 16, np.int64)
    seg_pos = np.empty(n + 16, np.int64)
    seg_len = np.empty(n + 16, np.int64)
    n_seg = 0
    flat_nodes = np.empty(n + n_nodes, np.int32)
    flat_counts = np.empty(n + n_nodes, np.int32)
    n_flat = 0
    points = np.empty((2 * n + n_rows + n_c + 16, 4), np.int64)
    alive_pts = np.empty((2 * n + n_rows + n_c + 16, n_res), np.int64)
    n_points = 0
    node_log = np.empty((2 * n_nodes + 16, 3), np.int64)
    n_log = 0
    # end events by (time, number), stale ones (aborted runs) dropped as the engine does
    h_time = np.empty(n + 16, np.int64)
    h_id = np.empty(n + 16, np.int64)
    ev_job = np.empty(n + 16, np.int64)
    hn = 0
    n_ev = 0
    # node transitions: ids number * n_nodes + node, so ties go in the order they were
    # asked; a node leaving drops its transition (x_live), whose time is still a decision
    # point (the engine's stale node event)
    x_time = np.empty(n_nodes + 1, np.int64)
    x_id = np.empty(n_nodes + 1, np.int64)
    x_live = np.full(n_nodes, -1, np.int64)
    xn = 0
    n_x = 0
    # the dispatcher's timers (every one a decision point, several may fall together)
    w_time = np.empty(16, np.int64)
    w_id = np.empty(16, np.int64)
    wn = 0
    n_w = 0
    switched = 0  # nodes the wrapper switched at the last decision (seen at the next)
    power_offs = 0
    power_ons = 0
    q_job, q_rank, q_gone = queue_arrays(n)
    qn = 0
    indexed = easy and depth < 0 and score == STATIC  # (a dynamic order: no fixed ranks)
    size, t_u, t_e, t_p = idx_new(n, indexed, False)
    work = order_work(n, score)
    e_time = np.empty(n, np.int64)  # EASY: running jobs by (expected end, job)
    e_job = np.empty(n, np.int64)
    en = 0
    end_of = np.zeros(n, np.int64)
    fin = np.empty(n, np.int64)  # finished or aborted at this point
    requeued = np.empty(n, np.int64)
    run_list = np.empty(n if n_rows > 0 else 0, np.int64)  # running jobs in start order
    moving = np.empty(n_nodes, np.int64)  # the nodes a scenario row moves
    res = np.full(5, -1, np.int64)  # EASY's head, shadow, extra, last plan (start_scan)
    res[EXTRA] = 0
    started = np.empty(n, np.int64)
    st_pos = np.empty(n, np.int64)
    st_len = np.empty(n, np.int64)
    # power under a cap: what each node draws now, the engine's running sum
    cur_w = np.zeros(n_nodes, np.float64)
    if power:
        for nd in range(n_nodes):
            cur_w[nd] = node_w[nd, 0]
    used = used_w
    least_w = least_power(job_w, unit_w, power)  # a lower bound of what any job adds
    watts = np.empty(2 * n + n_rows + n_c + 16 if power else 0, np.float64)
    caps = np.empty(2 * n + n_rows + n_c + 16 if power else 0, np.float64)
    # easy-power under a cap: each running job's start and placement, work arrays
    on = easy_power and power
    job_at = np.full((max(n, n_nodes) if on else 0, 4), -1, np.int64)
    scratch_w = np.empty(n_nodes if on else 0, np.float64)
    before = np.zeros(n_nodes, np.int64)  # free slots before the round's starts
    chosen = np.empty(n_nodes, np.int64)
    crow = 0  # the next cap row
    srow = 0  # the next node row
    backfilled = 0
    busy = 0
    rn = 0
    queued = 0
    nxt = 0
    idle_mark = -1
    status = DONE
    bad_job = -1
    while nxt < n or queued > 0 or rn > 0:
        while hn > 0 and end_seq[ev_job[h_id[0]]] != h_id[0]:
            hn = heap_pop(h_time, h_id, no_pos, hn)  # (the engine drops stale ends first)
        t = NEVER
        if hn > 0:
            t = h_time[0]
        if xn > 0 and x_time[0] < t:
            t = x_time[0]
        if wn > 0 and w_time[0] < t:
            t = w_time[0]
        if srow < n_rows and s_time[srow] < t:
            t = s_time[srow]
        if crow < n_c and c_time[crow] < t:
            t = c_time[crow]
        if nxt < n:
            if submit[nxt] < t:
                t = submit[nxt]
        else:
            if t == NEVER:
                status = FALLBACK  # queued jobs, nothing pending: the engine's error
                bad_job = q_job[0] if qn > 0 else -1
                break
            idle_mark, too_long = idle_wait(idle_mark, t, rn == 0)
            if too_long:
                status = FALLBACK
                break
        n_touch = 0
        for a in range(n_at_once):
            n_touch = touch(mark, touched, n_touch, at_once[a], n_points)
        n_at_once = 0
        # 1. segment ends at t, in the order they were scheduled (stale entries ignored)
        n_fin = 0
        n_req = 0
        while hn > 0 and h_time[0] == t:
            e = h_id[0]
            job = ev_job[e]
            hn = heap_pop(h_time, h_id, no_pos, hn)
            if end_seq[job] != e:
                continue
            s = cur[job]
            lo = give_back(node_free, flat_nodes, flat_counts, seg_pos[s], seg_len[s], lo)
            if power:
                used = release_power(used, job_w[job], node_w, cur_w, node_free, slots,
                                     flat_nodes, seg_pos[s], seg_len[s])
            for a in range(seg_pos[s], seg_pos[s] + seg_len[s]):
                n_touch = touch(mark, touched, n_touch, flat_nodes[a], n_points)
            busy -= units[job]
            end_seq[job] = -1
            seg_t1[s] = t
            seg_out[s] = KILLED if end_killed[job] else COMPLETED
            seg_lost[s] = 0
            cur[job] = -1
            if n_rows > 0:  # (the running list serves the node rows' aborts only)
                pos = run_pos[job]
                for m in range(pos, rn - 1):
                    run_list[m] = run_list[m + 1]
                    run_pos[run_list[m]] = m
                run_pos[job] = -1
            rn -= 1
            fin[n_fin] = job
            n_fin += 1
        # 2. node transitions at t: booted nodes are on (idle), the others off
        changed = switched > 0
        while xn > 0 and x_time[0] == t:
            xid = x_id[0]
            nd = xid % n_nodes
            xn = heap_pop(x_time, x_id, no_pos, xn)
            if x_live[nd] != xid:
                continue  # the node left the machine meanwhile
            x_live[nd] = -1
            if state[nd] == BOOTING:
                state[nd] = ON
                booting_slots -= slots[nd]
                node_free[nd] = slots[nd]
                alive_slots += slots[nd]
                for r in range(n_res):
                    alive_res[r] += cap_res[nd, r]
                if nd < lo:
                    lo = nd
                n_touch = touch(mark, touched, n_touch, nd, n_points)
            else:
                state[nd] = OFF
                n_off += 1
            seen[nd] = state[nd]
            if power:  # the engine re-reads the node in its new state
                w = node_w[nd, 0] if state[nd] == ON else state_w[nd, OFF]
                used += w - cur_w[nd]
                cur_w[nd] = w
            node_log, n_log = log_node(node_log, n_log, t, nd, state[nd])
            changed = True
        # 3. scenario rows at t: nodes leaving and coming back (:mod:`.node_rows`), caps
        if srow < n_rows and s_time[srow] == t:
            logged = n_log
            fin0 = n_fin
            srow, counts, node_log, n_log, used = apply_node_rows(
                t, srow, (s_time, s_kind, s_value, s_off, s_nodes),
                (state, node_free, slots, alive_res, cap_res, moving),
                (run_list, run_pos, cur, end_seq, work_from, left, fresh, failed, checkpoint,
                 units), (seg_pos, seg_len, seg_t1, seg_out, seg_lost, flat_nodes, flat_counts),
                power, (node_w, cur_w, job_w), down_w, requeue,
                (rn, lo, busy, n_fin, n_req, queued, alive_slots), node_log, n_log, fin,
                requeued, used)
            rn, lo, busy, n_fin, n_req, queued, alive_slots = counts
            for f in range(fin0, n_fin):  # the other nodes of aborted jobs
                s = seg_of[fin[f]]
                for a in range(seg_pos[s], seg_pos[s] + seg_len[s]):
                    n_touch = touch(mark, touched, n_touch, flat_nodes[a], n_points)
            for a in range(logged, n_log):  # what the moved nodes were doing
                nd = node_log[a, 1]
                was = seen[nd]
                if was == OFF:
                    n_off -= 1
                elif was == BOOTING:
                    booting_slots -= slots[nd]
                    x_live[nd] = -1  # (its boot will not complete)
                elif was == SHUTTING_DOWN:
                    x_live[nd] = -1
                seen[nd] = node_log[a, 2]
                n_touch = touch(mark, touched, n_touch, nd, n_points)
            changed = changed or n_log > logged
        while crow < n_c and c_time[crow] == t:  # cap rows (waited for when it falls)
            cap_w = c_value[crow]
            crow += 1
        # 4. timers
        woken = False
        while wn > 0 and w_time[0] == t:
            wn = heap_pop(w_time, w_id, no_pos, wn)
            woken = True
        # 5. submissions at t, then re-queued jobs, join the queue in rank order
        k_sub = 0
        while True:
            jn, nxt, k_sub, submitted = next_joiner(t, submit, skip, nxt, requeued, k_sub,
                                                    n_req)
            if jn < 0:
                break
            if submitted:
                queued += 1
            r = rank[jn]
            qn = q_insert(q_job, q_rank, qn, jn, r)
            if indexed:
                idx_put(t_u, t_e, t_p, size, r, units[jn], est[jn], 0.0)
        # 6. the wrapped policy's starts (its machine forgets the jobs that stopped)
        if easy:
            for f in range(n_fin):
                job = fin[f]
                en = ends_remove(e_time, e_job, en, end_of[job], job)
        free = alive_slots - busy
        used0 = used  # the engine's sum when the dispatcher is called
        n_new = 0
        ordered = False
        if qn > 0 and free > 0:
            if score != STATIC:  # a dynamic ordering: the queue sorted afresh
                order_queue(score, t, q_job, q_rank, qn, submit, term_a, term_b, work)
                ordered = True
            (status, bad_job, qn, n_new, lo, n_flat, flat_nodes, flat_counts, free, used,
             en, n_back, _) = start_scan(
                t, n_fin > 0 or changed or woken, (q_job, q_rank, q_gone), qn, units, est,
                planned, node_free, lo, slots, flat_nodes, flat_counts, n_flat, free, easy,
                depth, True, size, (t_u, t_e, t_p), (e_time, e_job, end_of), en, res, power,
                cap_w - used, used, least_w, unit_w, (node_w, cur_w, job_w),
                (started, st_pos, st_len),
                (easy_power, n_points, cap_w, crow, c_time, c_value, job_at, scratch_w))
            backfilled += n_back
            if status != DONE:
                break
            for k in range(n_new):  # the engine opens a segment and schedules its end
                j = started[k]
                if n_seg >= seg_job.shape[0]:
                    seg_job = room(seg_job, n_seg + 1)
                    seg_t0 = room(seg_t0, n_seg + 1)
                    seg_t1 = room(seg_t1, n_seg + 1)
                    seg_out = room(seg_out, n_seg + 1)
                    seg_lost = room(seg_lost, n_seg + 1)
                    seg_pos = room(seg_pos, n_seg + 1)
                    seg_len = room(seg_len, n_seg + 1)
                seg_job[n_seg] = j
                seg_t0[n_seg] = t
                seg_t1[n_seg] = -1
                seg_out[n_seg] = -1
                seg_lost[n_seg] = 0
                seg_pos[n_seg] = st_pos[k]
                seg_len[n_seg] = st_len[k]
                for a in range(st_pos[k], st_pos[k] + st_len[k]):
                    taken_at[flat_nodes[a]] = n_points
                    n_touch = touch(mark, touched, n_touch, flat_nodes[a], n_points)
                cur[j] = n_seg
                seg_of[j] = n_seg
                n_seg += 1
                busy += units[j]
                if n_rows > 0:
                    run_list[rn] = j
                    run_pos[j] = rn
                rn += 1
                queued -= 1
                # the run's end: exact for a first run, from the work left otherwise
                work_from[j] = t
                natural = t + runtime[j] if fresh[j] else t + np.int64(np.ceil(left[j]))
                kill_at = t + walltime[j] if kill else NEVER
                end_killed[j] = kill_at < natural
                et = int(kill_at if kill_at < natural else natural)
                h_time, h_id, ev_job = ev_room(h_time, h_id, ev_job, n_ev)
                ev_job[n_ev] = j
                hn = heap_push(h_time, h_id, no_pos, hn, et, n_ev)
                end_seq[j] = n_ev
                n_ev += 1
        # what the round's starts add, as the wrapper costs them (the engine's start_delta,
        # start after start, from the free slots before each)
        adds = 0.0
        if power and n_new > 0:
            adds = starts_power(started, st_pos, st_len, n_new, flat_nodes, flat_counts,
                                node_free, slots, node_w, job_w, before)
        # 7. the wrapper: the nodes touched now are idle (on, free, not given a job now)
        # or not; those newly idle are so since now
        for a in range(n_touch):
            nd = touched[a]
            idle = state[nd] == ON and node_free[nd] == slots[nd]
            if idle and not was_idle[nd]:
                idle_since[nd] = t
                i_key = room(i_key, i_n + 1)
                i_id = room(i_id, i_n + 1)
                i_n = heap_push(i_key, i_id, no_pos, i_n, t + wait, nd)
            was_idle[nd] = idle
        switched = 0
        if queued == 0:  # nothing waits: switch off the nodes idle long enough
            n_due = 0
            soonest = NEVER
            while i_n > 0:
                nd = i_id[0]
                key = i_key[0]
                if was_idle[nd] and idle_since[nd] + wait == key:
                    if key > t:
                        soonest = key  # the next idle node's timeout
                        break
                    due[n_due] = nd
                    n_due += 1
                    was_idle[nd] = False  # (switched off below; a copy of it is stale)
                i_n = heap_pop(i_key, i_id, no_pos, i_n)
            for a in range(1, n_due):  # by index, as the engine applies them
                nd = due[a]
                b = a
                while b > 0 and due[b - 1] > nd:
                    due[b] = due[b - 1]
                    b -= 1
                due[b] = nd
            if power:  # the first of them whose shutting-down power fits
                n_fit = fitting(due, n_due, SHUTTING_DOWN, state_w, cur_w, cap_w - used0 - adds)
                for a in range(n_fit, n_due):  # still idle: due again at the next call
                    nd = due[a]
                    was_idle[nd] = True
                    i_key = room(i_key, i_n + 1)
                    i_id = room(i_id, i_n + 1)
                    i_n = heap_push(i_key, i_id, no_pos, i_n, idle_since[nd] + wait, nd)
                n_due = n_fit
            for a in range(n_due):
                nd = due[a]
                if power:  # the engine checks the state the node enters now, then re-reads it
                    w = state_w[nd, OFF if down[nd] == 0 else SHUTTING_DOWN]
                    if w - cur_w[nd] > EPS and not used + (w - cur_w[nd]) <= cap_w + EPS:
                        status = FALLBACK
                        break
                    used += w - cur_w[nd]
                    cur_w[nd] = w
                node_free[nd] = 0
                alive_slots -= slots[nd]
                for r in range(n_res):
                    alive_res[r] -= cap_res[nd, r]
                if down[nd] == 0:
                    state[nd] = OFF
                    n_off += 1
                else:
                    state[nd] = SHUTTING_DOWN
                    x_time = room(x_time, xn + 1)
                    x_id = room(x_id, xn + 1)
                    x_live[nd] = n_x * n_nodes + nd
                    xn = heap_push(x_time, x_id, no_pos, xn, t + down[nd], x_live[nd])
                    n_x += 1
                seen[nd] = state[nd]
                node_log, n_log = log_node(node_log, n_log, t, nd, state[nd])
            if status != DONE:
                break
            switched = n_due
            power_offs += n_due
            if soonest < NEVER:
                w_time = room(w_time, wn + 1)
                w_id = room(w_id, wn + 1)
                wn = heap_push(w_time, w_id, no_pos, wn, soonest, n_w)
                n_w += 1
        elif n_off > 0:  # power on until the policy's first waiting job could be hosted
            if score != STATIC and not ordered:  # (its order now, as ``waiting`` gives it)
                order_queue(score, t, q_job, q_rank, qn, submit, term_a, term_b, work)
            need = units[q_job[0]]
            # what is free on the nodes on and not given a job now, and the booting nodes
            have = alive_slots - busy + booting_slots
            for a in range(n_touch):
                nd = touched[a]
                if taken_at[nd] == n_points:
                    have -= node_free[nd]
            n_chosen = 0
            for k in range(n_nodes):
                if have >= need:
                    break
                nd = boot_order[k]
                if state[nd] != OFF or slots[nd] <= 0:
                    continue
                have += slots[nd]
                chosen[n_chosen] = nd
                n_chosen += 1
            if power:  # the first of them whose booting power fits
                n_chosen = fitting(chosen, n_chosen, BOOTING, state_w, cur_w,
                                   cap_w - used0 - adds)
            for a in range(n_chosen):
                nd = chosen[a]
                if power:  # the engine checks the state the node enters now, then re-reads it
                    w = node_w[nd, 0] if boot[nd] == 0 else state_w[nd, BOOTING]
                    if w - cur_w[nd] > EPS and not used + (w - cur_w[nd]) <= cap_w + EPS:
                        status = FALLBACK
                        break
                    used += w - cur_w[nd]
                    cur_w[nd] = w
                n_off -= 1
                switched += 1
                if boot[nd] == 0:
                    state[nd] = ON
                    at_once[n_at_once] = nd
                    n_at_once += 1
                    node_free[nd] = slots[nd]
                    alive_slots += slots[nd]
                    for r in range(n_res):
                        alive_res[r] += cap_res[nd, r]
                    if nd < lo:
                        lo = nd
                else:
                    state[nd] = BOOTING
                    booting_slots += slots[nd]
                    x_time = room(x_time, xn + 1)
                    x_id = room(x_id, xn + 1)
                    x_live[nd] = n_x * n_nodes + nd
                    xn = heap_push(x_time, x_id, no_pos, xn, t + boot[nd], x_live[nd])
                    n_x += 1
                seen[nd] = state[nd]
                node_log, n_log = log_node(node_log, n_log, t, nd, state[nd])
            if status != DONE:
                break
            power_ons += switched
            if n_at_once > 0:  # on at once: the dispatcher is called again a second later
                w_time = room(w_time, wn + 1)
                w_id = room(w_id, wn + 1)
                wn = heap_push(w_time, w_id, no_pos, wn, t + 1, n_w)
                n_w += 1
        # 8. one sample per decision point
        points, alive_pts, watts, caps = sample_point(points, alive_pts, watts, caps, n_points, t,
                                                      queued, rn, busy, alive_res, power, used,
                                                      cap_w)
        n_points += 1
    seg_off, seg_nodes, seg_counts = gather(seg_pos, seg_len, n_seg, flat_nodes, flat_counts)
    return (status, seg_job[:n_seg].copy(), seg_t0[:n_seg].copy(), seg_t1[:n_seg].copy(),
            seg_out[:n_seg].copy(), seg_lost[:n_seg].copy(), seg_off, seg_nodes, seg_counts,
            n_seg, planned, points[:n_points].copy(), alive_pts[:n_points].copy(), n_points,
            node_log[:n_log].copy(), n_log, failed, backfilled, bad_job,
            watts[:n_points].copy(), caps[:n_points].copy(), power_offs, power_ons)


def touch(mark: Any, touched: Any, n_touch: int, nd: int, decision: int) -> int:
    """Note node ``nd`` as touched at ``decision`` (once); returns the count of touched."""
    if mark[nd] == decision:
        return n_touch
    mark[nd] = decision
    touched[n_touch] = nd
    return n_touch + 1


def starts_power(started: Any, st_pos: Any, st_len: Any, n_new: int, flat_nodes: Any,
                 flat_counts: Any, node_free: Any, slots: Any, node_w: Any, job_w: Any,
                 before: Any) -> float:
    """What the round's ``n_new`` starts add, as the wrapper costs them (the engine's
    ``start_delta``, start after start, from the free slots before each); ``before`` is a
    work array of one entry per node."""
    for k in range(n_new):
        for a in range(st_pos[k], st_pos[k] + st_len[k]):
            before[flat_nodes[a]] = node_free[flat_nodes[a]]
    for k in range(n_new):
        for a in range(st_pos[k], st_pos[k] + st_len[k]):
            before[flat_nodes[a]] += flat_counts[a]
    adds = 0.0
    for k in range(n_new):
        p = job_w[started[k]]
        for a in range(st_pos[k], st_pos[k] + st_len[k]):
            nd = flat_nodes[a]
            kk = slots[nd] - before[nd]
            p += node_w[nd, kk + flat_counts[a]] - node_w[nd, kk]
            before[nd] -= flat_counts[a]
        adds += p
    return adds


def fitting(nodes: Any, count: int, to_state: int, state_w: Any, cur_w: Any,
            left: float) -> int:
    """How many of ``nodes[:count]`` may enter ``to_state`` in turn within ``left`` W (the
    wrapper's check: a node whose rise does not fit stops the list)."""
    for a in range(count):
        nd = nodes[a]
        p = state_w[nd, to_state] - cur_w[nd]
        if p > EPS and p > left + EPS:
            return a
        left -= p
    return count
