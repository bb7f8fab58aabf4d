"""The slot loop of a fixed machine whose idle nodes are switched off: one function, compiled.

Mirrors :meth:`Simulator.run <dispatchlab.engine.simulator.Simulator.run>` driving
:class:`~dispatchlab.dispatchers.rule_based.power_off.IdlePowerOff` around a
:class:`~dispatchlab.dispatchers.rule_based.policy.Policy` (static ordering, strict or EASY
selection, first-fit, a :class:`~dispatchlab.dispatchers.machine.SlotMachine`), no
scenario, with or without a fixed power cap. Each node is on, off, booting or shutting
down (only an ``on`` node hosts jobs); the wrapped policy decides on the nodes that are
on (:mod:`.start_scan`, as the scenario loop), then the wrapper, in the engine's order
of application:

- **power on** when jobs still wait: the first of them in the policy's order (the head of
  the queue, which is kept in rank order, once this round's starts left it) must fit,
  node by node, on what is free on the nodes
  on and not given a job in this round plus every booting node; nodes that are off are
  switched on, cheapest boot first (lowest index on ties), until it does. A node with no
  boot delay is on at once and a timer calls the dispatcher 1 s later; the others boot.
- **power off** when nothing waits: every node on and idle (free, not given a job now) for
  ``max(timeout, 1)`` s is switched off, by index (off at once without a shutdown delay);
  a timer wakes the dispatcher when the next idle node reaches the timeout.

At one time the engine applies segment ends, then node transitions (boot or shutdown done,
in the order they were asked), then timers, then submissions; then the dispatcher decides
once. A node the wrapper switched, or a transition, or a timer, makes EASY reserve afresh
(the engine's ``events.nodes`` / ``woken``), as a segment end does. Under a fixed power cap
the policy's starts are costed as in the scenario loop, every node's power follows its
state (the engine's running sum), and a switch is made only when its power fits, as the
wrapper checks it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dispatchlab.dispatchers.rule_based.compiled.loop_parts import (
    ends_remove,
    gather,
    give_back,
    idle_wait,
    least_power,
    q_insert,
    queue_arrays,
    release_power,
    room,
    room_rows,
    sample_point,
)
from dispatchlab.dispatchers.rule_based.compiled.queue_index import EPS, idx_new, idx_put

# (status codes as the scenario loop's: ``FALLBACK``, the general loop must run to raise its
# own error, a stuck queue or an idle machine waiting too long)
from dispatchlab.dispatchers.rule_based.compiled.scenario_loop import DONE, FALLBACK, NEVER
from dispatchlab.dispatchers.rule_based.compiled.start_scan import EXTRA, start_scan
from dispatchlab.engine.compiled.slot_availability_ops import heap_pop, heap_push
from dispatchlab.platform.node_states import BOOTING, OFF, ON, SHUTTING_DOWN

#: Segment outcomes, as :mod:`dispatchlab.engine.recorder`.
COMPLETED, KILLED = 0, 1


def poweroff_loop(submit: Any, runtime: Any, walltime: Any, kill: bool, units: Any,
                  est: Any, rank: Any, skip: Any, slots: Any, easy: bool, depth: int,
                  cap_res: Any, req: Any, boot: Any, down: Any, boot_order: Any,
                  timeout: int, power: bool, cap_w: float, used_w: float, node_w: Any,
                  job_w: Any, unit_w: float, state_w: Any) -> Any:
    """Simulate; see the module docstring.

    ``runtime``/``walltime``: per job (``kill``: end a run at its wall-time); ``slots[n]``:
    node ``n``'s unit slots, ``cap_res[n, r]`` its capacity per resource, ``req`` the
    per-unit request; ``boot[n]`` / ``down[n]``: its boot and shutdown delays (s);
    ``boot_order``: the nodes by (boot delay, index); ``timeout``: the wrapper's idle time
    before a switch-off (s). ``power``: a fixed cap of ``cap_w`` W holds, the power
    tabulated as in :mod:`.slot_loop` (``node_w``, ``job_w``, ``unit_w``, ``used_w``) and
    ``state_w[n, s]`` what node ``n`` draws in state ``s`` when not on: a node is switched
    on only if its booting power fits on top of what the round's starts add (each start
    costed as the engine's ``start_delta``), off only if its shutting-down power fits, the
    first nodes of each list that fit; the engine's own check of each transition (its
    ``after`` state for a zero delay) failing sends the run to the general loop, to raise.

    Only the nodes a decision point touches (their jobs ended or started, their transition
    ended, they came on at once) are looked at: the idle nodes wait in a heap by the time
    they reach the timeout (entries of nodes no longer idle since then are dropped when
    met).

    Returns the scenario loop's tuple ``(status, seg_job, seg_t0, seg_t1, seg_out,
    seg_lost, seg_off, seg_nodes, seg_counts, n_seg, planned, points, alive_pts, n_points,
    node_log, n_log, failed, backfilled, bad_job, watts, caps)`` (no job fails; without a
    cap ``watts`` and ``caps`` are empty) followed by ``(power_offs, power_ons)``, the nodes
    the wrapper switched off and on.
    """
    n = submit.shape[0]
    n_nodes = slots.shape[0]
    n_res = req.shape[0]
    node_free = slots.copy()
    state = np.zeros(n_nodes, np.int64)  # every node on, idle from the start
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
    planned = np.full(n, -1, np.int64)
    started_yet = np.zeros(n, np.bool_)
    # segments: one per job (no run is ever stopped), in start order; segment s ends at the
    # end event numbered s (the engine's sequence order among ends)
    seg_job = np.empty(n, np.int64)
    seg_t0 = np.empty(n, np.int64)
    seg_t1 = np.empty(n, np.int64)
    seg_out = np.empty(n, np.int64)
    seg_pos = np.empty(n, np.int64)
    seg_len = np.empty(n, np.int64)
    n_seg = 0
    flat_nodes = np.empty(n + n_nodes, np.int32)
    flat_counts = np.empty(n + n_nodes, np.int32)
    n_flat = 0
    points = np.empty((2 * n + 16, 4), np.int64)
    alive_pts = np.empty((2 * n + 16, n_res), np.int64)
    n_points = 0
    node_log = np.empty((2 * n_nodes + 16, 3), np.int64)
    n_log = 0
    # end events: keyed by time, ids the segment numbers
    h_time = np.empty(n + 1, np.int64)
    h_id = np.empty(n + 1, np.int64)
    hn = 0
    # node transitions: at most one per node in flight; ids number * n_nodes + node, so
    # ties go in the order they were asked
    x_time = np.empty(n_nodes + 1, np.int64)
    x_id = np.empty(n_nodes + 1, np.int64)
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
    indexed = easy and depth < 0
    size, t_u, t_e, t_p = idx_new(n, indexed, False)
    e_time = np.empty(n, np.int64)  # EASY: running jobs by (expected end, job)
    e_job = np.empty(n, np.int64)
    en = 0
    end_of = np.zeros(n, np.int64)
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
    watts = np.empty(2 * n + 16 if power else 0, np.float64)
    caps = np.empty(2 * n + 16 if power else 0, np.float64)
    before = np.zeros(n_nodes, np.int64)  # free slots before the round's starts
    chosen = np.empty(n_nodes, np.int64)
    no_rows = np.zeros(0, np.int64)
    no_caps = np.zeros(0, np.float64)
    job_at = np.zeros((0, 4), np.int64)
    scratch_w = np.zeros(0, np.float64)
    backfilled = 0
    busy = 0
    rn = 0
    queued = 0
    first_wait = 0  # no job below it is queued (jobs queue by index, leave by starting)
    nxt = 0
    idle_mark = -1
    status = DONE
    bad_job = -1
    while nxt < n or queued > 0 or rn > 0:
        t = NEVER
        if hn > 0:
            t = h_time[0]
        if xn > 0 and x_time[0] < t:
            t = x_time[0]
        if wn > 0 and w_time[0] < t:
            t = w_time[0]
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
        # 1. segment ends at t, in the order they were scheduled
        n_fin = 0
        while hn > 0 and h_time[0] == t:
            s = h_id[0]
            hn = heap_pop(h_time, h_id, no_pos, hn)
            job = seg_job[s]
            lo = give_back(node_free, flat_nodes, flat_counts, seg_pos[s], seg_len[s], lo)
            if power:
                used = release_power(used, job_w[job], node_w, cur_w, node_free, slots,
                                     flat_nodes, seg_pos[s], seg_len[s])
            for a in range(seg_pos[s], seg_pos[s] + seg_len[s]):
                n_touch = touch(mark, touched, n_touch, flat_nodes[a], n_points)
            busy -= units[job]
            seg_t1[s] = t
            rn -= 1
            n_fin += 1
            if easy:
                en = ends_remove(e_time, e_job, en, end_of[job], job)
        # 2. node transitions at t: booted nodes are on (idle), the others off
        changed = switched > 0
        while xn > 0 and x_time[0] == t:
            nd = x_id[0] % n_nodes
            xn = heap_pop(x_time, x_id, no_pos, xn)
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
            if power:  # the engine re-reads the node in its new state
                w = node_w[nd, 0] if state[nd] == ON else state_w[nd, OFF]
                used += w - cur_w[nd]
                cur_w[nd] = w
            node_log, n_log = log_node(node_log, n_log, t, nd, state[nd])
            changed = True
        # 3. timers
        woken = False
        while wn > 0 and w_time[0] == t:
            wn = heap_pop(w_time, w_id, no_pos, wn)
            woken = True
        # 4. submissions at t join the queue in rank order
        while nxt < n and submit[nxt] == t:
            jn = nxt
            nxt += 1
            if skip[jn]:
                continue
            queued += 1
            r = rank[jn]
            qn = q_insert(q_job, q_rank, qn, jn, r)
            if indexed:
                idx_put(t_u, t_e, t_p, size, r, units[jn], est[jn], 0.0)
        # 5. the wrapped policy's starts
        free = alive_slots - busy
        used0 = used  # the engine's sum when the dispatcher is called
        n_new = 0
        if qn > 0 and free > 0:
            (status, bad_job, qn, n_new, lo, n_flat, flat_nodes, flat_counts, free, used,
             en, n_back, _) = start_scan(
                t, n_fin > 0 or changed or woken, (q_job, q_rank, q_gone), qn, units, est,
                planned, node_free, lo, slots, flat_nodes, flat_counts, n_flat, free, easy,
                depth, True, size, (t_u, t_e, t_p), (e_time, e_job, end_of), en, res, power,
                cap_w - used, used, least_w, unit_w, (node_w, cur_w, job_w),
                (started, st_pos, st_len),
                (False, n_points, cap_w, 0, no_rows, no_caps, job_at, scratch_w))
            backfilled += n_back
            if status != DONE:
                break
            for k in range(n_new):  # the engine opens a segment and schedules its end
                j = started[k]
                seg_job[n_seg] = j
                seg_t0[n_seg] = t
                seg_pos[n_seg] = st_pos[k]
                seg_len[n_seg] = st_len[k]
                for a in range(st_pos[k], st_pos[k] + st_len[k]):
                    taken_at[flat_nodes[a]] = n_points
                    n_touch = touch(mark, touched, n_touch, flat_nodes[a], n_points)
                natural = t + runtime[j]
                kill_at = t + walltime[j] if kill else NEVER
                seg_out[n_seg] = KILLED if kill_at < natural else COMPLETED
                hn = heap_push(h_time, h_id, no_pos, hn,
                               kill_at if kill_at < natural else natural, n_seg)
                n_seg += 1
                started_yet[j] = True
                busy += units[j]
                rn += 1
                queued -= 1
        # what the round's starts add, as the wrapper costs them (the engine's start_delta,
        # start after start, from the free slots before each)
        adds = 0.0
        if power and n_new > 0:
            for k in range(n_new):
                for a in range(st_pos[k], st_pos[k] + st_len[k]):
                    before[flat_nodes[a]] = node_free[flat_nodes[a]]
            for k in range(n_new):
                for a in range(st_pos[k], st_pos[k] + st_len[k]):
                    before[flat_nodes[a]] += flat_counts[a]
            for k in range(n_new):
                p = job_w[started[k]]
                for a in range(st_pos[k], st_pos[k] + st_len[k]):
                    nd = flat_nodes[a]
                    kk = slots[nd] - before[nd]
                    p += node_w[nd, kk + flat_counts[a]] - node_w[nd, kk]
                    before[nd] -= flat_counts[a]
                adds += p
        # 6. the wrapper: the nodes touched now are idle (on, free, not given a job now)
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
        while first_wait < nxt and (skip[first_wait] or started_yet[first_wait]):
            first_wait += 1
        switched = 0
        if first_wait >= nxt:  # nothing waits: switch off the nodes idle long enough
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
                    xn = heap_push(x_time, x_id, no_pos, xn, t + down[nd], n_x * n_nodes + nd)
                    n_x += 1
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
                    xn = heap_push(x_time, x_id, no_pos, xn, t + boot[nd], n_x * n_nodes + nd)
                    n_x += 1
                node_log, n_log = log_node(node_log, n_log, t, nd, state[nd])
            if status != DONE:
                break
            power_ons += switched
            if n_at_once > 0:  # on at once: the dispatcher is called again a second later
                w_time = room(w_time, wn + 1)
                w_id = room(w_id, wn + 1)
                wn = heap_push(w_time, w_id, no_pos, wn, t + 1, n_w)
                n_w += 1
        # 7. one sample per decision point
        points, alive_pts, watts, caps = sample_point(points, alive_pts, watts, caps, n_points, t,
                                                      queued, rn, busy, alive_res, power, used,
                                                      cap_w)
        n_points += 1
    seg_off, seg_nodes, seg_counts = gather(seg_pos, seg_len, n_seg, flat_nodes, flat_counts)
    return (status, seg_job[:n_seg].copy(), seg_t0[:n_seg].copy(), seg_t1[:n_seg].copy(),
            seg_out[:n_seg].copy(), np.zeros(n_seg, np.int64), seg_off, seg_nodes,
            seg_counts, n_seg, planned, points[:n_points].copy(),
            alive_pts[:n_points].copy(), n_points, node_log[:n_log].copy(), n_log,
            np.zeros(n, np.bool_), backfilled, bad_job, watts[:n_points].copy(),
            caps[:n_points].copy(), power_offs, power_ons)


def touch(mark: Any, touched: Any, n_touch: int, nd: int, decision: int) -> int:
    """Note node ``nd`` as touched at ``decision`` (once); returns the count of touched."""
    if mark[nd] == decision:
        return n_touch
    mark[nd] = decision
    touched[n_touch] = nd
    return n_touch + 1


def log_node(node_log: Any, n_log: int, t: int, nd: int, state: int) -> Any:
    """Node ``nd`` entered ``state`` at ``t``: a row of the node log (grown on demand);
    returns ``(node_log, n_log)``."""
    node_log = room_rows(node_log, n_log + 1)
    node_log[n_log, 0] = t
    node_log[n_log, 1] = nd
    node_log[n_log, 2] = state
    return node_log, n_log + 1


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
