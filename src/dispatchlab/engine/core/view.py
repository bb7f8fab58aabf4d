"""The core loop's view of its record: the arrays its phases touch at every event, read
from the record once (a structref field read costs a reference count each time) and read
again only when one of them was replaced by a larger copy."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

#: The arrays of the record (:mod:`.record`) the phases of :mod:`.loop` read.
View = namedtuple("View", (
    "submit", "skip", "units", "runtime", "walltime", "s_time", "c_time", "c_value", "h_time",
    "h_id", "h_pos", "ev_job", "end_seq", "cur", "run_pos", "run_list", "fin", "requeued",
    "seg_job", "seg_t0", "seg_t1", "seg_out", "seg_lost", "seg_pos", "seg_len", "node_free",
    "flat_nodes", "flat_counts", "end_killed", "job_w", "node_w", "cur_w", "slots", "started",
    "st_pos", "st_len", "work_from", "fresh", "left", "points", "alive_pts", "watts", "caps",
    "alive_res"))


def view(core: Any) -> Any:
    """The arrays of :data:`View`, read from ``core`` now."""
    return View(core.submit, core.skip, core.units, core.runtime, core.walltime, core.s_time,
                core.c_time, core.c_value, core.h_time, core.h_id, core.h_pos, core.ev_job,
                core.end_seq, core.cur, core.run_pos, core.run_list, core.fin, core.requeued,
                core.seg_job, core.seg_t0, core.seg_t1, core.seg_out, core.seg_lost,
                core.seg_pos, core.seg_len, core.node_free, core.flat_nodes,
                core.flat_counts, core.end_killed, core.job_w, core.node_w, core.cur_w,
                core.slots, core.started, core.st_pos, core.st_len, core.work_from,
                core.fresh, core.left, core.points, core.alive_pts, core.watts, core.caps,
                core.alive_res)
