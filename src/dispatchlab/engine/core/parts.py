"""The engine core's own pieces on arrays: arrays that grow, the node log and the
per-decision samples, the idle-machine check, the end events' arrays, who joins the queue
at a time, slots and power given back, placements gathered in order.

Plain functions compiled into the core (:mod:`.loop`) and into the wings' loops that have
not moved onto it yet (they reach them through
:mod:`dispatchlab.dispatchers.rule_based.compiled.loop_parts`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dispatchlab.engine.compiled.slot_availability_ops import grown

#: The engine's limit for an idle machine with queued jobs and only timers ahead (s).
IDLE_LIMIT = 400 * 86400


def room(a: Any, need: int) -> Any:
    """``a``, or a copy twice as long (at least ``need``) when it holds fewer than ``need``."""
    if a.shape[0] >= need:
        return a
    return grown(a, max(2 * a.shape[0], need))


def room_rows(a: Any, need: int) -> Any:
    """:func:`room` for the rows of a 2-D array."""
    if a.shape[0] >= need:
        return a
    out = np.empty((max(2 * a.shape[0], need), a.shape[1]), a.dtype)
    out[: a.shape[0]] = a
    return out


def log_node(node_log: Any, n_log: int, t: int, nd: int, state: int) -> Any:
    """Node ``nd`` entered ``state`` at ``t``: a row of the node log (grown on demand);
    returns ``(node_log, n_log)``."""
    node_log = room_rows(node_log, n_log + 1)
    node_log[n_log, 0] = t
    node_log[n_log, 1] = nd
    node_log[n_log, 2] = state
    return node_log, n_log + 1


def sample_point(points: Any, alive_pts: Any, watts: Any, caps: Any, n_points: int, t: int,
                 queued: int, running: int, busy: int, alive_res: Any, power: bool,
                 used: float, cap_w: float) -> tuple[Any, Any, Any, Any]:
    """Row ``n_points`` of a changing machine's samples: the time, queue length, running
    jobs, busy slots and usable capacity per resource, and under a cap the power drawn and
    the cap; every array grown as needed (returned, possibly new)."""
    if n_points >= points.shape[0]:
        points = room_rows(points, n_points + 1)
        alive_pts = room_rows(alive_pts, n_points + 1)
    points[n_points, 0] = t
    points[n_points, 1] = queued
    points[n_points, 2] = running
    points[n_points, 3] = busy
    for r in range(alive_res.shape[0]):
        alive_pts[n_points, r] = alive_res[r]
    if power:
        if n_points >= watts.shape[0]:
            watts = room(watts, n_points + 1)
            caps = room(caps, n_points + 1)
        watts[n_points] = used
        caps[n_points] = cap_w
    return points, alive_pts, watts, caps


def idle_wait(idle_since: int, t: int, idle: bool) -> tuple[int, bool]:
    """The engine's check of an idle machine with only timers ahead: when it became idle
    (-1: it is not) and whether it has waited beyond :data:`IDLE_LIMIT`."""
    if not idle:
        return -1, False
    if idle_since < 0:
        return t, False
    return idle_since, t - idle_since > IDLE_LIMIT


def ev_room(h_time: Any, h_id: Any, ev_job: Any, n_ev: int) -> Any:
    """The event arrays, grown when entry ``n_ev`` does not fit."""
    if n_ev < ev_job.shape[0]:
        return h_time, h_id, ev_job
    return room(h_time, n_ev + 1), room(h_id, n_ev + 1), room(ev_job, n_ev + 1)


def next_joiner(t: int, submit: Any, skip: Any, nxt: int, requeued: Any, k_sub: int,
                n_req: int) -> tuple[int, int, int, bool]:
    """The next job to join the queue at ``t``, as the engine admits them: the jobs submitted
    at ``t`` in index order (not those in ``skip``: rejected), then the ``n_req`` re-queued
    ones in order. Returns ``(job, nxt, k_sub, submitted)``: ``job`` -1 when none is left,
    ``submitted`` whether it is a new submission (a re-queued job is counted queued when it
    is aborted)."""
    n = submit.shape[0]
    while nxt < n and submit[nxt] == t:
        nxt += 1
        if not skip[nxt - 1]:
            return nxt - 1, nxt, k_sub, True
    if k_sub < n_req:
        return requeued[k_sub], nxt, k_sub + 1, False
    return -1, nxt, k_sub, False


def give_back(node_free: Any, flat_nodes: Any, flat_counts: Any, p: int, k: int,
              lo: int) -> int:
    """Give placement ``flat_*[p:p + k]`` back; returns the lowest node that may have a
    free slot (its nodes are in increasing order)."""
    for a in range(k):
        node_free[flat_nodes[p + a]] += flat_counts[p + a]
    return flat_nodes[p] if k > 0 and flat_nodes[p] < lo else lo


def reread_nodes(node_w: Any, cur_w: Any, node_free: Any, slots: Any, flat_nodes: Any,
                 p: int, k: int) -> float:
    """The nodes ``flat_nodes[p:p + k]`` (usage changed) re-read from the power table
    ``node_w[node, slots in use]`` into ``cur_w``; the change of their sum, summed in the
    engine's order (:meth:`MachinePower.refresh`)."""
    delta = 0.0
    for a in range(k):
        nd = flat_nodes[p + a]
        w = node_w[nd, slots[nd] - node_free[nd]]
        delta += w - cur_w[nd]
        cur_w[nd] = w
    return delta


def release_power(used: float, own_w: float, node_w: Any, cur_w: Any, node_free: Any,
                  slots: Any, flat_nodes: Any, p: int, k: int) -> float:
    """The engine's running sum after a job drawing ``own_w`` gave back its nodes
    ``flat_nodes[p:p + k]``: its own power off, then its nodes re-read (one sum)."""
    used -= own_w
    return used + reread_nodes(node_w, cur_w, node_free, slots, flat_nodes, p, k)


def gather(pos: Any, length: Any, count: int, flat_nodes: Any, flat_counts: Any) -> Any:
    """Placements ``flat_*[pos[i]:pos[i] + length[i]]`` for ``i < count``, in that order:
    ``(offsets, nodes, counts)``, placement ``i`` at ``nodes[offsets[i]:offsets[i + 1]]``."""
    offsets = np.zeros(count + 1, np.int64)
    for i in range(count):
        offsets[i + 1] = offsets[i] + length[i]
    nodes = np.empty(offsets[count], np.int32)
    counts = np.empty(offsets[count], np.int32)
    for i in range(count):
        p, o = pos[i], offsets[i]
        for a in range(length[i]):
            nodes[o + a] = flat_nodes[p + a]
            counts[o + a] = flat_counts[p + a]
    return offsets, nodes, counts
