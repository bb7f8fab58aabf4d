"""The core's state: one record (a Numba structref) holding everything a run shares.

One object, passed by reference: the workload's columns, the machine's nodes (state, free
unit slots, usable capacity), the scenario's node rows and power-cap rows, the power tables
and the engine's running power sum, each job's run (open segment, work left, live end
event, place among the running jobs), the end-event heap, the segment log with the flat
placement arrays, the node log and the per-decision samples, and the hand-over arrays of a
decision (jobs that stopped, re-queued jobs, starts). Counters are scalar fields.

A decision kernel reads it and writes its starts to ``started`` / ``st_pos`` / ``st_len``
(``n_new``), taking their nodes in ``node_free`` / ``flat_*`` (``lo``, ``n_flat``) and,
under a cap, following them in ``used`` / ``cur_w``: :mod:`.loop` records them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba.core import types
from numba.experimental import structref

from dispatchlab.engine.core.codes import DONE


@structref.register
class CoreType(types.StructRef):
    """Numba's type of :class:`Core` (field types as given, literals widened)."""

    def preprocess_fields(self, fields: Any) -> Any:
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class Core(structref.StructRefProxy):
    """The core's state record (built in compiled code by :func:`new_core`)."""


#: The record's fields, in constructor order.
FIELDS = (
    # the workload and the run's modes
    "submit", "runtime", "walltime", "units", "checkpoint", "skip", "kill", "requeue",
    "power",
    # the machine
    "slots", "cap_res", "state", "node_free", "alive_res", "moving", "lo", "alive_slots",
    "busy",
    # scenario rows (node rows; power-cap rows)
    "s_time", "s_kind", "s_value", "s_off", "s_nodes", "srow", "c_time", "c_value", "crow",
    # power: node table, current draw per node, job power, down power; the running sum
    "node_w", "cur_w", "job_w", "down_w", "used", "cap_w",
    # each job's run
    "cur", "fresh", "left", "work_from", "end_seq", "end_killed", "run_pos", "run_list",
    "rn", "failed", "planned", "queued", "nxt",
    # end events: a heap by (time, number), event e ending job ev_job[e]
    "h_time", "h_id", "h_pos", "ev_job", "hn", "n_ev",
    # segments in the order they started, their placements in the flat arrays
    "seg_job", "seg_t0", "seg_t1", "seg_out", "seg_lost", "seg_pos", "seg_len", "n_seg",
    "flat_nodes", "flat_counts", "n_flat",
    # the record: samples per decision point, the node log
    "points", "alive_pts", "watts", "caps", "n_points", "node_log", "n_log",
    # one decision's hand-over: stopped jobs, re-queued jobs, starts
    "fin", "n_fin", "requeued", "n_req", "started", "st_pos", "st_len", "n_new",
    # the run's outcome, the idle-machine check
    "status", "bad_job", "idle_since",
)

structref.define_proxy(Core, CoreType, list(FIELDS))



def _machine_sums(slots: Any, cap_res: Any, n_res: int) -> tuple[Any, int]:
    """Usable capacity per resource (the first ``n_res``) and unit slots of the machine."""
    n_nodes = cap_res.shape[0]
    alive_res = np.zeros(n_res, np.int64)
    alive_slots = 0
    for nd in range(n_nodes):
        alive_slots += slots[nd]
        for r in range(n_res):
            alive_res[r] += cap_res[nd, r]
    return alive_res, alive_slots


def new_core(jobs: Any, machine: Any, rows: Any, power: Any) -> Any:
    """The state at time 0 of a run of ``jobs`` ``(submit, runtime, walltime, units,
    checkpoint, skip, kill, requeue)`` on ``machine`` ``(slots, cap_res, req)`` (unit
    slots and capacity per node, the request of one unit) under node rows
    ``rows`` ``(s_time, s_kind, s_value, s_off, s_nodes)`` and ``power`` ``(on, cap_w,
    used_w, node_w, down_w, job_w, c_time, c_value)``: every node up and free, the queue
    empty, nothing logged."""
    submit, runtime, walltime, units, checkpoint, skip, kill, requeue = jobs
    slots, cap_res, req = machine
    on, cap_w, used_w, node_w, down_w, job_w, c_time, c_value = power
    n, n_nodes = submit.shape[0], slots.shape[0]
    alive_res, alive_slots = _machine_sums(slots, cap_res, req.shape[0])
    cur_w = np.zeros(n_nodes, np.float64)
    if on:
        for nd in range(n_nodes):
            cur_w[nd] = node_w[nd, 0]
    n_pts = 2 * n + rows[0].shape[0] + 16
    n_w = n_pts + c_time.shape[0] if on else 0
    i8 = np.int64
    return Core(
        submit, runtime, walltime, units, checkpoint, skip, kill, requeue, on,
        slots, cap_res, np.zeros(n_nodes, i8), slots.copy(), alive_res,
        np.empty(n_nodes, i8), 0, alive_slots, 0,
        rows[0], rows[1], rows[2], rows[3], rows[4], 0, c_time, c_value, 0,
        node_w, cur_w, job_w, down_w, used_w, cap_w,
        np.full(n, -1, i8), np.ones(n, np.bool_), runtime.astype(np.float64),
        np.zeros(n, i8), np.full(n, -1, i8), np.zeros(n, np.bool_), np.full(n, -1, i8),
        np.empty(n, i8), 0, np.zeros(n, np.bool_), np.full(n, -1, i8), 0, 0,
        np.empty(n + 16, i8), np.empty(n + 16, i8), np.zeros(0, i8), np.empty(n + 16, i8), 0,
        0,
        np.empty(n + 16, i8), np.empty(n + 16, i8), np.empty(n + 16, i8),
        np.empty(n + 16, i8), np.empty(n + 16, i8), np.empty(n + 16, i8),
        np.empty(n + 16, i8), 0,
        np.empty(n + n_nodes, np.int32), np.empty(n + n_nodes, np.int32), 0,
        np.empty((n_pts, 4), i8), np.empty((n_pts, alive_res.shape[0]), i8),
        np.empty(n_w, np.float64), np.empty(n_w, np.float64), 0,
        np.empty((n_nodes + 16, 3), i8), 0,
        np.empty(n, i8), 0, np.empty(n, i8), 0, np.empty(n, i8), np.empty(n, i8),
        np.empty(n, i8), 0,
        DONE, -1, -1)
