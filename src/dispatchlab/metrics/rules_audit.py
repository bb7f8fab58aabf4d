"""Independent audit of operator rules in a finished run, from the record alone.

Re-checks, without the engine's :class:`~dispatchlab.engine.constraints.Constraints`:
queue limits of every started job, start times of windowed queues against the local
time of day (``datetime`` in the workload's zone), stopped intervals, queue node sets,
reservations (other jobs' wall-times never overlap an occurrence on a reserved node;
reservation jobs start and end inside one occurrence, on its nodes) and heterogeneous
jobs (components start at one instant).
"""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np

from dispatchlab.engine.local_time import Clock
from dispatchlab.engine.recorder import ABORTED, PREEMPTED, Recorder
from dispatchlab.errors import DispatchlabError
from dispatchlab.platform.queues import DailyWindow


class RulesAuditError(DispatchlabError):
    """The recorded schedule breaks an operator rule."""


def audit_rules(rec: Recorder) -> None:
    """Raise :class:`RulesAuditError` on the first started job that breaks a rule."""
    wl, plat = rec.workload, rec.platform
    if not plat.has_rules and not (wl.hetjob >= 0).any():
        return
    clock = Clock(wl.origin_unix, wl.timezone)
    qnames = [q.name for q in wl.queues]
    res_queue = {r.queue_name: r for r in plat.reservations}
    seg = rec.segments
    horizon = int(seg.t1.max()) + 1 if len(seg) else 1
    occ = {r.name: _occurrences(clock, r.start, r.duration, r.period, r.count, horizon)
           for r in plat.reservations}
    res_nodes = {r.name: set(plat.node_set(r.nodes).tolist()) for r in plat.reservations}
    for k in np.flatnonzero(_run_starts(rec)).tolist():  # every start of a run of a job
        j = int(seg.job[k])
        t, wall = int(seg.t0[k]), int(wl.walltime[j])
        qname = qnames[int(wl.queue[j])]
        nodes = set(seg.nodes[seg.offsets[k]:seg.offsets[k + 1]].tolist())
        jid = int(wl.job_id[j])

        def fail(why: str, jid: int = jid, t: int = t) -> RulesAuditError:
            return RulesAuditError(f"job {jid} started at {t}: {why}")

        cfg = plat.queues.get(qname)
        if cfg is not None:
            if cfg.max_units is not None and int(wl.units[j]) > cfg.max_units:
                raise fail(f"more units than queue '{qname}' allows")
            if cfg.max_walltime is not None and wall > cfg.max_walltime:
                raise fail(f"more wall-time than queue '{qname}' allows")
            if cfg.nodes and not nodes <= set(plat.node_set(cfg.nodes).tolist()):
                raise fail(f"ran outside the nodes of queue '{qname}'")
            if cfg.windows and not any(_in_window(clock.local(t), w) for w in cfg.windows):
                raise fail(f"queue '{qname}' window closed at {clock.local(t):%a %H:%M}")
            for k, (a, b) in enumerate(cfg.stopped):
                if clock.parse(a, f"stopped[{k}]") <= t < clock.parse(b, f"stopped[{k}]"):
                    raise fail(f"queue '{qname}' was stopped")
        own = res_queue.get(qname)
        for r in plat.reservations:
            if r is own:
                if not nodes <= res_nodes[r.name]:
                    raise fail(f"ran outside reservation '{r.name}'")
                if not any(s <= t and t + wall <= e for s, e in occ[r.name]):
                    raise fail(f"not inside an occurrence of reservation '{r.name}'")
            elif nodes & res_nodes[r.name] and any(s < t + wall and t < e
                                                   for s, e in occ[r.name]):
                raise fail(f"its wall-time overlaps reservation '{r.name}' on a reserved node")
    het = wl.hetjob
    if (het >= 0).any():
        for gid in np.unique(het[het >= 0]).tolist():
            members = np.flatnonzero(het == gid)
            times = set(rec.start_time[members].tolist())
            if len(times) > 1 and not times <= {-1}:
                raise RulesAuditError(f"heterogeneous job {gid}: components started at "
                                      f"different times {sorted(times)}")


def _run_starts(rec: Recorder) -> np.ndarray:
    """Segments that start a run: a job's first, and any after an abort or preemption
    (a reconfigured job keeps running)."""
    seg = rec.segments
    out = np.ones(len(seg), dtype=bool)
    if len(seg) > int((rec.last_seg >= 0).sum()):  # some job ran several segments
        last_out: dict[int, int] = {}
        for k, (j, o) in enumerate(zip(seg.job.tolist(), seg.outcome.tolist(), strict=True)):
            out[k] = last_out.get(j, ABORTED) in (ABORTED, PREEMPTED)
            last_out[j] = o
    return out


def _in_window(local: datetime, w: DailyWindow) -> bool:
    """Whether local time ``local`` falls in daily window ``w`` (opening day counts)."""
    sec = local.hour * 3600 + local.minute * 60 + local.second
    if not w.wraps:
        return local.weekday() in w.days and w.begin <= sec < w.end
    if sec >= w.begin:
        return local.weekday() in w.days
    yesterday = (local - timedelta(days=1)).weekday()
    return sec < w.end and yesterday in w.days


def _occurrences(clock: Clock, start: int | str, duration: int, period: int | None,
                 count: int | None, horizon: int) -> list[tuple[int, int]]:
    s0 = clock.parse(start, "reservation.start")
    out = []
    k = 0
    while s0 + k * (period or 0) < horizon and (count is None or k < count):
        s = s0 + k * (period or 0)
        out.append((s, s + duration))
        if period is None:
            break
        k += 1
    return out
