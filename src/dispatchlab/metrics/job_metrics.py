"""Per-job metrics (SPEC §2) from the segment log: wait, slowdown, bounded slowdown,
tardiness vs. queue ewt, restarts and lost work.

:func:`job_arrays` computes every metric as numpy arrays (what summaries need, cheap);
:func:`job_table` adds the strings (node lists, local timestamps) and builds the DataFrame
only when someone reads the per-job table.

Over a job's segments: ``start`` is its first start, ``end`` its final end, ``wait =
start − submit``; ``run`` is the time it spent running (all segments); ``useful`` the part
of it whose work was kept (run minus lost work), the denominator of slowdowns, so a job
that lost work to an abort is slowed down, not sped up, by it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from dispatchlab.arrays import BoolArray, FloatArray, IntArray, one_of
from dispatchlab.engine.placements import end_nodes, flat_placements, placement_sizes
from dispatchlab.engine.recorder import (
    ABORTED,
    KILLED,
    OUTCOMES,
    PREEMPTED,
    Recorder,
)

if TYPE_CHECKING:
    import pandas as pd


#: Default bound of bounded slowdown, seconds.
TAU = 10


@dataclass
class JobArrays:
    """Per-job metrics as arrays (index = engine job index)."""

    ran: BoolArray
    start: IntArray
    end: IntArray
    last_start: IntArray
    wait: IntArray
    run: IntArray
    useful: IntArray
    slowdown: FloatArray
    bounded_slowdown: FloatArray
    ewt: IntArray
    weighted_queue_time: FloatArray
    tardiness: FloatArray
    weighted_tardiness: FloatArray
    late: BoolArray
    killed: BoolArray
    outcome: npt.NDArray[np.int8]
    restarts: IntArray
    lost_work: IntArray  # core-seconds of work thrown away by aborts and preemptions
    units_used: IntArray  # units of the last segment


def job_arrays(rec: Recorder, tau: int = TAU) -> JobArrays:
    """Every per-job metric, vectorised."""
    wl = rec.workload
    n = wl.n_jobs
    seg = rec.segments
    outcome = rec.job_outcomes()
    ran = rec.final_seg >= 0
    start, end = rec.start_time, rec.end_time
    run = np.zeros(n, np.int64)
    lost_t = np.zeros(n, np.int64)
    restarts = np.zeros(n, np.int64)
    lost_work = np.zeros(n, np.int64)
    last_start = np.full(n, -1, np.int64)
    units_used = np.zeros(n, np.int64)
    if len(seg):
        if _multi(rec):
            np.add.at(run, seg.job, seg.t1 - seg.t0)
        else:
            run[seg.job] = seg.t1 - seg.t0
        ok = rec.last_seg >= 0
        last_start[ok] = seg.t0[rec.last_seg[ok]]
        seg_units = np.add.reduceat(seg.counts.astype(np.int64), seg.offsets[:-1])
        units_used[ok] = seg_units[rec.last_seg[ok]]
        stopped = one_of(seg.outcome, (ABORTED, PREEMPTED))
        if stopped.any():
            cores = _cores_per_unit(rec)
            k = np.flatnonzero(stopped)
            np.add.at(restarts, seg.job[k], 1)
            np.add.at(lost_t, seg.job[k], seg.lost[k])
            np.add.at(lost_work, seg.job[k], seg.lost[k] * seg_units[k] * cores[seg.job[k]])
            failed = ran & (outcome == ABORTED)
            restarts[failed] -= 1  # the last abort of a job that failed was no restart
    wait = np.where(start >= 0, start - wl.submit, -1)
    useful = np.where(ran, run - lost_t, 0)
    ewt = wl.ewt()
    resp = np.where(ran, end - wl.submit, 0).astype(np.float64)
    useful_f = useful.astype(np.float64)
    wait_f = wait.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        slowdown = np.where(ran, resp / np.maximum(useful_f, 1.0), np.nan)
        bsld = np.where(ran, np.maximum(1.0, resp / np.maximum(useful_f, float(tau))), np.nan)
        wqt = np.where(ewt > 0, wait_f / ewt, np.nan)
        tard = np.maximum(0, wait - ewt).astype(np.float64)
        wtard = np.where(ewt > 0, tard / ewt, np.nan)
    return JobArrays(
        ran=ran, start=start, end=end, last_start=last_start, wait=np.where(ran, wait, -1),
        run=run, useful=useful, slowdown=slowdown, bounded_slowdown=bsld, ewt=ewt,
        weighted_queue_time=wqt, tardiness=tard, weighted_tardiness=wtard,
        late=ran & (wait > ewt), killed=ran & (outcome == KILLED), outcome=outcome,
        restarts=restarts, lost_work=lost_work, units_used=units_used)


def _multi(rec: Recorder) -> bool:
    """True when some job ran more than one segment."""
    return len(rec.segments) > int((rec.last_seg >= 0).sum())


def _cores_per_unit(rec: Recorder) -> IntArray:
    res = rec.platform.resources
    return rec.req[:, res.index("cores")] if "cores" in res else np.ones(len(rec.req), np.int64)


def job_table(rec: Recorder, arrays: JobArrays | None = None, tau: int = TAU) -> pd.DataFrame:
    """One row per job with times, placement and the SPEC §2 metrics."""
    import pandas as pd

    a = arrays if arrays is not None else job_arrays(rec, tau)
    wl = rec.workload
    nodes_used = placement_sizes(rec)
    queue_names = np.array([q.name for q in wl.queues], dtype=object)
    df = pd.DataFrame(
        {
            "job_id": wl.job_id,
            "submit": wl.submit,
            "start": a.start,
            "end": a.end,
            "wait": a.wait,
            "run": a.run,
            "requested": wl.walltime,
            "actual_runtime": wl.runtime,
            "units": wl.units,
            "nodes_used": nodes_used,
            "node_list": node_lists(rec, nodes_used, rec.platform.node_names),
            "killed": a.killed,
            "slowdown": a.slowdown,
            "bounded_slowdown": a.bounded_slowdown,
            "queue": queue_names[wl.queue],
            "user": np.array(wl.users or ("-",), dtype=object)[wl.user],
            "ewt": a.ewt,
            "weighted_queue_time": a.weighted_queue_time,
            "tardiness": a.tardiness,
            "weighted_tardiness": a.weighted_tardiness,
            "late": a.late,
            "logged_wait": wl.logged_wait,
            "rejected": a.outcome < 0,
        }
    )
    for r, name in enumerate(wl.resources):
        df.insert(list(df.columns).index("nodes_used"), f"req_{name}", wl.req[:, r])
    if _multi(rec) or (a.outcome >= ABORTED).any():
        labels = np.array([*OUTCOMES, "rejected"], dtype=object)
        df["outcome"] = labels[np.where(a.outcome >= 0, a.outcome, len(OUTCOMES))]
        df["last_start"] = a.last_start
        df["restarts"] = a.restarts
        df["lost_work"] = a.lost_work
        df["units_used"] = a.units_used
    if rec.rejected:
        reasons = np.full(wl.n_jobs, "", dtype=object)
        for j, why in rec.rejected.items():
            reasons[j] = why
        df["reject_reason"] = reasons
    if wl.origin_unix is not None:
        for col in ("submit", "start", "end"):
            df.insert(list(df.columns).index(col) + 1, f"{col}_at",
                      local_timestamps(df[col].to_numpy(), wl.origin_unix, wl.timezone))
    if (rec.planned >= 0).any():
        df["planned_start"] = rec.planned
    for col in ("array", "hetjob"):  # job-array / heterogeneous-job ids, when used
        if (getattr(wl, col) >= 0).any():
            df[col] = getattr(wl, col)
    return df


def local_timestamps(seconds: np.ndarray, origin_unix: int, tz: str | None) -> pd.Series:
    """ISO 8601 local date-times of relative ``seconds`` (empty where the value is < 0)."""
    import pandas as pd

    secs = np.asarray(seconds, dtype=np.int64)
    utc = pd.DatetimeIndex(pd.to_datetime(secs + origin_unix, unit="s", utc=True))
    local = utc
    if tz:
        try:
            local = utc.tz_convert(tz)
        except (KeyError, ValueError):  # unknown zone name: keep UTC, still absolute
            local = utc
    naive = local.tz_localize(None).to_numpy().astype("datetime64[s]")
    offset = (naive - utc.tz_localize(None).to_numpy().astype("datetime64[s]")).astype(np.int64)
    body = np.datetime_as_string(naive, unit="s").astype(object)
    suffix = np.empty(len(secs), dtype=object)
    for off in np.unique(offset).tolist():
        sign = "+" if off >= 0 else "-"
        hh, mm = divmod(abs(int(off)) // 60, 60)
        suffix[offset == off] = f"{sign}{hh:02d}:{mm:02d}"
    text = body + suffix
    text[secs < 0] = ""
    return pd.Series(text, dtype=object)


def node_lists(rec: Recorder, sizes: np.ndarray, names: tuple[str, ...]) -> np.ndarray:
    """Per job ``"n3 n4*2"`` (unit count when > 1), ``"n0..n99 (40 nodes)"`` beyond 16
    nodes, ``""`` when it never ran (``sizes``: nodes per job). String work is done on whole
    arrays at once; only the placements of jobs on at most 16 nodes are gathered."""
    out = np.full(len(sizes), "", dtype=object)
    name = np.array(names, dtype=object)
    short = (sizes > 0) & (sizes <= 16)
    if short.any():
        _, nk, ck = flat_placements(rec, short)
        top = int(ck.max())
        k = sizes[short]
        ends = np.cumsum(k) - 1
        if len(names) * (top + 1) <= len(nk):  # look every "name*count" token up at once
            text = [[(n if c == 1 else f"{n}*{c}") for c in range(top + 1)] for n in names]
            token = np.array([[w + " " for w in row] for row in text], dtype=object)[nk, ck]
            token[ends] = np.array(text, dtype=object)[nk[ends], ck[ends]]
        else:
            times = np.array([""] + ["" if c == 1 else f"*{c}" for c in range(1, top + 1)],
                             dtype=object)
            token = name[nk] + times[ck] + " "
            token[ends] = name[nk[ends]] + times[ck[ends]]
        out[short] = np.add.reduceat(token, ends - k + 1)
    long = np.flatnonzero(sizes > 16)
    if len(long):
        first, last = end_nodes(rec, long)
        out[long] = (name[first] + ".." + name[last] + " ("
                     + sizes[long].astype(str).astype(object) + " nodes)")
    return out
