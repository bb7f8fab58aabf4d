"""The core's event loop and its phases, compiled, on the state record (:mod:`.record`).

At each time ``t`` (the earliest of the next live segment end, scenario row, power-cap row
and submission) the core applies, in the general engine's order:

1. **ends**: segment ends at ``t`` (stale end events dropped): slots and power given back,
   the segment closed (completed, or killed at its wall-time), the job off the running list;
2. **scenario rows**: node rows in file order (:mod:`.node_rows`: nodes leave, aborting
   their jobs, which are re-queued or fail, and come back), then power-cap rows;
3. **arrivals**: the jobs submitted at ``t`` (not rejected), then the re-queued ones, each
   handed to the kernel's ``arrive``; the jobs that stopped are handed to its ``leave``;
4. **one decision**: the kernel's ``decide(kernel_state, core, t, renew)`` (``renew``: jobs
   stopped or nodes changed since the last one) writes its starts into the record;
5. **record**: each start opens a segment and schedules its end (exact for a first run,
   from the work left after an abort, cut at the wall-time when the run kills); one sample
   of the decision point (queue, running, busy units, usable capacity, power and cap).

A kernel is three compiled functions, ``arrive(ks, core, job)``, ``leave(ks, core, job)``
and ``decide(ks, core, t, renew)``, and its own state ``ks`` (the family's book: a queue,
reservations); the core knows nothing else of it.
"""

from __future__ import annotations

from typing import Any

from dispatchlab.engine.compiled.slot_availability_ops import heap_pop, heap_push
from dispatchlab.engine.core.codes import DONE, FALLBACK, NEVER
from dispatchlab.engine.core.node_rows import COMPLETED, KILLED, apply_node_rows
from dispatchlab.engine.core.parts import (
    ev_room,
    gather,
    give_back,
    idle_wait,
    next_joiner,
    release_power,
    room,
    sample_point,
)
from dispatchlab.engine.core.segment_parts import run_end
from dispatchlab.engine.core.view import view


def next_time(core: Any, v: Any) -> int:
    """The next time anything happens (stale end events dropped first); sets ``status``
    to ``FALLBACK`` when the general loop must report the run (jobs queued and nothing
    ahead, or an idle machine waiting on timers beyond the engine's limit)."""
    h_time, h_id, end_seq, ev_job = v.h_time, v.h_id, v.end_seq, v.ev_job
    hn = core.hn
    while hn > 0 and end_seq[ev_job[h_id[0]]] != h_id[0]:
        hn = heap_pop(h_time, h_id, v.h_pos, hn)
    core.hn = hn
    t = NEVER
    if hn > 0:
        t = h_time[0]
    srow, crow, nxt = core.srow, core.crow, core.nxt
    if srow < v.s_time.shape[0] and v.s_time[srow] < t:
        t = v.s_time[srow]
    if crow < v.c_time.shape[0] and v.c_time[crow] < t:
        t = v.c_time[crow]
    if nxt < v.submit.shape[0]:
        if v.submit[nxt] < t:
            t = v.submit[nxt]
    else:
        if t == NEVER:
            core.status = FALLBACK  # queued jobs, nothing pending: the engine's error
            return t
        idle_since, too_long = idle_wait(core.idle_since, t, core.rn == 0)
        core.idle_since = idle_since
        if too_long:
            core.status = FALLBACK
    return t


def end_segments(core: Any, v: Any, t: int) -> None:
    """Phase 1: the live segment ends at ``t``; the jobs go to ``fin``."""
    h_time, h_id, ev_job, end_seq = v.h_time, v.h_id, v.ev_job, v.end_seq
    cur, run_pos, run_list, fin = v.cur, v.run_pos, v.run_list, v.fin
    seg_pos, seg_len = v.seg_pos, v.seg_len
    node_free, flat_nodes, flat_counts = v.node_free, v.flat_nodes, v.flat_counts
    hn, lo, rn, busy, n_fin, used = core.hn, core.lo, core.rn, core.busy, 0, core.used
    while hn > 0 and h_time[0] == t:
        job = ev_job[h_id[0]]
        live = end_seq[job] == h_id[0]
        hn = heap_pop(h_time, h_id, v.h_pos, hn)
        if not live:
            continue
        s = cur[job]
        lo = give_back(node_free, flat_nodes, flat_counts, seg_pos[s], seg_len[s], lo)
        if core.power:
            used = release_power(used, v.job_w[job], v.node_w, v.cur_w, node_free,
                                 v.slots, flat_nodes, seg_pos[s], seg_len[s])
        busy -= v.units[job]
        end_seq[job] = -1
        v.seg_t1[s] = t
        v.seg_out[s] = KILLED if v.end_killed[job] else COMPLETED
        v.seg_lost[s] = 0
        cur[job] = -1
        for m in range(run_pos[job], rn - 1):
            run_list[m] = run_list[m + 1]
            run_pos[run_list[m]] = m
        rn -= 1
        run_pos[job] = -1
        fin[n_fin] = job
        n_fin += 1
    core.hn, core.lo, core.rn, core.busy, core.n_fin, core.used = hn, lo, rn, busy, n_fin, used
    core.n_req = 0


def scenario_rows(core: Any, v: Any, t: int) -> bool:
    """Phase 2: the node rows at ``t`` (:func:`.node_rows.apply_node_rows`), then the
    power-cap rows; whether a node changed."""
    changed = False
    if core.srow < core.s_time.shape[0] and core.s_time[core.srow] == t:
        logged = core.n_log
        srow, counts, node_log, n_log, used = apply_node_rows(
            t, core.srow, (core.s_time, core.s_kind, core.s_value, core.s_off, core.s_nodes),
            (core.state, core.node_free, core.slots, core.alive_res, core.cap_res, core.moving),
            (core.run_list, core.run_pos, core.cur, core.end_seq, core.work_from, core.left,
             core.fresh, core.failed, core.checkpoint, core.units),
            (core.seg_pos, core.seg_len, core.seg_t1, core.seg_out, core.seg_lost,
             core.flat_nodes, core.flat_counts), core.power, (core.node_w, core.cur_w,
                                                              core.job_w),
            core.down_w, core.requeue, (core.rn, core.lo, core.busy, core.n_fin, core.n_req,
                                        core.queued, core.alive_slots),
            core.node_log, core.n_log, core.fin, core.requeued, core.used)
        (core.rn, core.lo, core.busy, core.n_fin, core.n_req, core.queued,
         core.alive_slots) = counts
        core.srow, core.node_log, core.n_log, core.used = srow, node_log, n_log, used
        changed = n_log > logged
    crow, c_time = core.crow, v.c_time
    while crow < c_time.shape[0] and c_time[crow] == t:  # (waited for when it falls)
        core.cap_w = v.c_value[crow]
        crow += 1
    core.crow = crow
    return changed


def open_segments(core: Any, v: Any, t: int) -> Any:
    """Phase 5a: each start of the decision opens a segment and schedules its end; returns
    the view (read again when an array grew)."""
    n_seg, rn, n_ev, hn = core.n_seg, core.rn, core.n_ev, core.hn
    for k in range(core.n_new):
        j = v.started[k]
        if n_seg >= v.seg_job.shape[0]:
            core.seg_job = room(v.seg_job, n_seg + 1)
            core.seg_t0 = room(v.seg_t0, n_seg + 1)
            core.seg_t1 = room(v.seg_t1, n_seg + 1)
            core.seg_out = room(v.seg_out, n_seg + 1)
            core.seg_lost = room(v.seg_lost, n_seg + 1)
            core.seg_pos = room(v.seg_pos, n_seg + 1)
            core.seg_len = room(v.seg_len, n_seg + 1)
            v = view(core)
        v.seg_job[n_seg] = j
        v.seg_t0[n_seg] = t
        v.seg_t1[n_seg] = -1
        v.seg_out[n_seg] = -1
        v.seg_lost[n_seg] = 0
        v.seg_pos[n_seg] = v.st_pos[k]
        v.seg_len[n_seg] = v.st_len[k]
        v.cur[j] = n_seg
        n_seg += 1
        core.busy += v.units[j]
        v.run_list[rn] = j
        v.run_pos[j] = rn
        rn += 1
        core.queued -= 1
        v.work_from[j] = t
        et = run_end(t, j, v.runtime, v.walltime, core.kill, v.fresh, v.left, v.end_killed)
        if n_ev >= v.ev_job.shape[0]:
            core.h_time, core.h_id, core.ev_job = ev_room(v.h_time, v.h_id, v.ev_job, n_ev)
            v = view(core)
        v.ev_job[n_ev] = j
        hn = heap_push(v.h_time, v.h_id, v.h_pos, hn, et, n_ev)
        v.end_seq[j] = n_ev
        n_ev += 1
    core.n_seg, core.rn, core.n_ev, core.hn = n_seg, rn, n_ev, hn
    return v


def sample(core: Any, v: Any, t: int) -> Any:
    """Phase 5b: one sample of the decision point at ``t``; returns the view (read again
    when an array grew)."""
    n_points = core.n_points
    points, alive_pts, watts, caps = sample_point(
        v.points, v.alive_pts, v.watts, v.caps, n_points, t, core.queued, core.rn,
        core.busy, v.alive_res, core.power, core.used, core.cap_w)
    core.n_points = n_points + 1
    if points.shape[0] != v.points.shape[0] or watts.shape[0] != v.watts.shape[0]:
        core.points, core.alive_pts, core.watts, core.caps = points, alive_pts, watts, caps
        return view(core)
    return v


def arrivals(core: Any, v: Any, t: int, ks: Any, arrive: Any) -> None:
    """Phase 3: the jobs submitted at ``t``, then the re-queued ones, to ``arrive``."""
    k_sub = 0
    while True:
        jn, nxt, k_sub, submitted = next_joiner(t, v.submit, v.skip, core.nxt,
                                                v.requeued, k_sub, core.n_req)
        core.nxt = nxt
        if jn < 0:
            break
        if submitted:
            core.queued += 1
        arrive(ks, core, jn)


def run_core(core: Any, ks: Any, arrive: Any, leave: Any, decide: Any) -> None:
    """Run the events to the end (or until ``status`` is not ``DONE``), the kernel
    ``(ks, arrive, leave, decide)`` deciding at every decision point."""
    n = core.submit.shape[0]
    v = view(core)
    while core.nxt < n or core.queued > 0 or core.rn > 0:
        t = next_time(core, v)
        if core.status != DONE:
            break
        end_segments(core, v, t)
        changed = scenario_rows(core, v, t)
        arrivals(core, v, t, ks, arrive)
        for f in range(core.n_fin):
            leave(ks, core, v.fin[f])
        core.n_new = 0
        decide(ks, core, t, core.n_fin > 0 or changed)
        if core.status != DONE:
            break
        if core.n_new > 0 and core.flat_nodes.shape[0] != v.flat_nodes.shape[0]:
            v = view(core)  # the kernel's placements grew the flat arrays
        v = open_segments(core, v, t)
        v = sample(core, v, t)


def outcome(core: Any, counted: int) -> Any:
    """The run as the runner records it: ``(status, seg_job, seg_t0, seg_t1, seg_out,
    seg_lost, seg_off, seg_nodes, seg_counts, n_seg, planned, points, alive_pts, n_points,
    node_log, n_log, failed, counted, bad_job, watts, caps)`` (placements in segment order;
    ``counted``: the kernel's own count, such as its backfilled starts)."""
    n_seg, n_points = core.n_seg, core.n_points
    seg_off, seg_nodes, seg_counts = gather(core.seg_pos, core.seg_len, n_seg,
                                            core.flat_nodes, core.flat_counts)
    return (core.status, core.seg_job[:n_seg].copy(), core.seg_t0[:n_seg].copy(),
            core.seg_t1[:n_seg].copy(), core.seg_out[:n_seg].copy(),
            core.seg_lost[:n_seg].copy(), seg_off, seg_nodes, seg_counts, n_seg, core.planned,
            core.points[:n_points].copy(), core.alive_pts[:n_points].copy(), n_points,
            core.node_log[:core.n_log].copy(), core.n_log, core.failed, counted, core.bad_job,
            core.watts[:n_points].copy(), core.caps[:n_points].copy())
