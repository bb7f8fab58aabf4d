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


def next_time(core: Any) -> int:
    """The next time anything happens (stale end events dropped first); sets ``status``
    to ``FALLBACK`` when the general loop must report the run (jobs queued and nothing
    ahead, or an idle machine waiting on timers beyond the engine's limit)."""
    h_time, h_id, end_seq, ev_job = core.h_time, core.h_id, core.end_seq, core.ev_job
    hn = core.hn
    while hn > 0 and end_seq[ev_job[h_id[0]]] != h_id[0]:
        hn = heap_pop(h_time, h_id, core.h_pos, hn)
    core.hn = hn
    t = NEVER
    if hn > 0:
        t = h_time[0]
    srow, crow, nxt = core.srow, core.crow, core.nxt
    if srow < core.s_time.shape[0] and core.s_time[srow] < t:
        t = core.s_time[srow]
    if crow < core.c_time.shape[0] and core.c_time[crow] < t:
        t = core.c_time[crow]
    if nxt < core.submit.shape[0]:
        if core.submit[nxt] < t:
            t = core.submit[nxt]
    else:
        if t == NEVER:
            core.status = FALLBACK  # queued jobs, nothing pending: the engine's error
            return t
        idle_since, too_long = idle_wait(core.idle_since, t, core.rn == 0)
        core.idle_since = idle_since
        if too_long:
            core.status = FALLBACK
    return t


def end_segments(core: Any, t: int) -> None:
    """Phase 1: the live segment ends at ``t``; the jobs go to ``fin``."""
    h_time, h_id, ev_job, end_seq = core.h_time, core.h_id, core.ev_job, core.end_seq
    cur, run_pos, run_list, fin = core.cur, core.run_pos, core.run_list, core.fin
    seg_pos, seg_len = core.seg_pos, core.seg_len
    node_free, flat_nodes, flat_counts = core.node_free, core.flat_nodes, core.flat_counts
    hn, lo, rn, busy, n_fin, used = core.hn, core.lo, core.rn, core.busy, 0, core.used
    while hn > 0 and h_time[0] == t:
        job = ev_job[h_id[0]]
        live = end_seq[job] == h_id[0]
        hn = heap_pop(h_time, h_id, core.h_pos, hn)
        if not live:
            continue
        s = cur[job]
        lo = give_back(node_free, flat_nodes, flat_counts, seg_pos[s], seg_len[s], lo)
        if core.power:
            used = release_power(used, core.job_w[job], core.node_w, core.cur_w, node_free,
                                 core.slots, flat_nodes, seg_pos[s], seg_len[s])
        busy -= core.units[job]
        end_seq[job] = -1
        core.seg_t1[s] = t
        core.seg_out[s] = KILLED if core.end_killed[job] else COMPLETED
        core.seg_lost[s] = 0
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


def scenario_rows(core: Any, t: int) -> bool:
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
    crow, c_time = core.crow, core.c_time
    while crow < c_time.shape[0] and c_time[crow] == t:  # (waited for when it falls)
        core.cap_w = core.c_value[crow]
        crow += 1
    core.crow = crow
    return changed


def open_segments(core: Any, t: int) -> None:
    """Phase 5a: each start of the decision opens a segment and schedules its end."""
    started, st_pos, st_len = core.started, core.st_pos, core.st_len
    n_seg, rn, n_ev, hn = core.n_seg, core.rn, core.n_ev, core.hn
    for k in range(core.n_new):
        j = started[k]
        if n_seg >= core.seg_job.shape[0]:
            core.seg_job = room(core.seg_job, n_seg + 1)
            core.seg_t0 = room(core.seg_t0, n_seg + 1)
            core.seg_t1 = room(core.seg_t1, n_seg + 1)
            core.seg_out = room(core.seg_out, n_seg + 1)
            core.seg_lost = room(core.seg_lost, n_seg + 1)
            core.seg_pos = room(core.seg_pos, n_seg + 1)
            core.seg_len = room(core.seg_len, n_seg + 1)
        core.seg_job[n_seg] = j
        core.seg_t0[n_seg] = t
        core.seg_t1[n_seg] = -1
        core.seg_out[n_seg] = -1
        core.seg_lost[n_seg] = 0
        core.seg_pos[n_seg] = st_pos[k]
        core.seg_len[n_seg] = st_len[k]
        core.cur[j] = n_seg
        n_seg += 1
        core.busy += core.units[j]
        core.run_list[rn] = j
        core.run_pos[j] = rn
        rn += 1
        core.queued -= 1
        core.work_from[j] = t
        et = run_end(t, j, core.runtime, core.walltime, core.kill, core.fresh, core.left,
                     core.end_killed)
        if n_ev >= core.ev_job.shape[0]:
            core.h_time, core.h_id, core.ev_job = ev_room(core.h_time, core.h_id,
                                                          core.ev_job, n_ev)
        core.ev_job[n_ev] = j
        hn = heap_push(core.h_time, core.h_id, core.h_pos, hn, et, n_ev)
        core.end_seq[j] = n_ev
        n_ev += 1
    core.n_seg, core.rn, core.n_ev, core.hn = n_seg, rn, n_ev, hn


def sample(core: Any, t: int) -> None:
    """Phase 5b: one sample of the decision point at ``t``."""
    n_points = core.n_points
    points, alive_pts, watts, caps = sample_point(
        core.points, core.alive_pts, core.watts, core.caps, n_points, t, core.queued, core.rn,
        core.busy, core.alive_res, core.power, core.used, core.cap_w)
    if points.shape[0] != core.points.shape[0]:
        core.points, core.alive_pts = points, alive_pts
    if watts.shape[0] != core.watts.shape[0]:
        core.watts, core.caps = watts, caps
    core.n_points = n_points + 1


def arrivals(core: Any, t: int, ks: Any, arrive: Any) -> None:
    """Phase 3: the jobs submitted at ``t``, then the re-queued ones, to ``arrive``."""
    k_sub = 0
    while True:
        jn, nxt, k_sub, submitted = next_joiner(t, core.submit, core.skip, core.nxt,
                                                core.requeued, k_sub, core.n_req)
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
    while core.nxt < n or core.queued > 0 or core.rn > 0:
        t = next_time(core)
        if core.status != DONE:
            break
        end_segments(core, t)
        changed = scenario_rows(core, t)
        arrivals(core, t, ks, arrive)
        fin = core.fin
        for f in range(core.n_fin):
            leave(ks, core, fin[f])
        core.n_new = 0
        decide(ks, core, t, core.n_fin > 0 or changed)
        if core.status != DONE:
            break
        open_segments(core, t)
        sample(core, t)


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
