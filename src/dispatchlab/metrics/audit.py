"""Independent audit of a finished run: the schedule is re-checked from the record alone.

The engine validates every decision as it goes; the audit re-derives the same facts from
what was recorded — the segment log and the node-state log — with other algorithms, so a
bug in the engine's bookkeeping cannot hide behind itself:

- every job that was not rejected ran and ended (or failed for good after an abort), a
  rejected job never ran, no segment starts before its job's submission, a job's segments
  do not overlap;
- units: a rigid job's segments hold exactly its units, a malleable job's within its range;
- durations: each job's segments are replayed through the work model
  (:mod:`dispatchlab.engine.work`): a completed segment ends when its work is done, a
  killed one exactly at the wall-time, an interrupted one before its work was done;
- capacity: a sweep over segment starts and ends and node-state changes per node checks
  that usage never exceeds any node's capacity, that segments use only nodes that are on,
  and that no node leaves (off, down, shutting down) while a job uses it;
- power: wherever a start or a node transition raised the IT power (idle nodes included),
  it fits under the cap then in force (:mod:`~dispatchlab.metrics.power_audit`).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from dispatchlab.arrays import IntArray, group_starts, one_of, with_zero
from dispatchlab.engine.recorder import (
    ABORTED,
    CANCELLED,
    COMPLETED,
    KILLED,
    OUTCOMES,
    PREEMPTED,
    RECONFIGURED,
    Recorder,
)
from dispatchlab.engine.work import WorkModel
from dispatchlab.errors import DispatchlabError
from dispatchlab.metrics.audit_sweep import (
    LEFT_WHILE_USED,
    OK,
    STARTED_ON_UNUSABLE,
    aot_sweep,
    sweep_kernel,
)
from dispatchlab.metrics.power_audit import check_power_cap
from dispatchlab.platform.node_states import ON, STATE_NAMES

_NEVER = 1 << 62


class AuditError(DispatchlabError):
    """The recorded schedule breaks a rule of the machine."""


def audit(rec: Recorder) -> None:
    """Raise :class:`AuditError` unless the recorded schedule is consistent."""
    wl = rec.workload
    seg = rec.segments
    n = wl.n_jobs
    rejected = np.zeros(n, dtype=bool)
    if rec.rejected:
        rejected[list(rec.rejected)] = True
    ran = np.zeros(n, dtype=bool)
    ran[seg.job] = True
    _expect(not (ran & rejected).any(), "a rejected job ran", wl, ran & rejected)
    ended = np.zeros(n, dtype=bool)
    if len(seg):
        last = np.full(n, -1, np.int64)
        last[seg.job] = np.arange(len(seg))
        final_out = seg.outcome[last[ran]]
        done = one_of(final_out, (COMPLETED, KILLED, CANCELLED))
        failed = one_of(np.flatnonzero(ran), rec.failed) & (final_out == ABORTED)
        ended[np.flatnonzero(ran)] = done | failed
    _expect(bool(ended[~rejected].all()), "a job never ran to its end", wl,
            ~rejected & ~ended)
    if not len(seg):
        return
    _expect(bool((seg.t0 >= wl.submit[seg.job]).all()), "a job started before its "
            "submission", wl, _jobs_of(n, seg.job[seg.t0 < wl.submit[seg.job]]))
    _expect(bool((seg.t1 >= seg.t0).all()), "a segment ends before it starts", wl,
            _jobs_of(n, seg.job[seg.t1 < seg.t0]))
    _check_units(rec)
    _check_capacity(rec)
    _check_durations(rec)
    check_power_cap(rec)


def _jobs_of(n: int, jobs: IntArray) -> npt.NDArray[np.bool_]:
    mask = np.zeros(n, dtype=bool)
    mask[jobs] = True
    return mask


def _segment_units(rec: Recorder) -> IntArray:
    seg = rec.segments
    return np.add.reduceat(seg.counts.astype(np.int64), seg.offsets[:-1])


def _check_units(rec: Recorder) -> None:
    wl, seg = rec.workload, rec.segments
    units = _segment_units(rec)
    bad = (units < wl.min_units[seg.job]) | (units > wl.max_units[seg.job]) \
        | (np.minimum.reduceat(seg.counts, seg.offsets[:-1]) <= 0)
    _expect(not bad.any(), "placed units differ from requested units", wl,
            _jobs_of(wl.n_jobs, seg.job[bad]))


def _check_durations(rec: Recorder) -> None:
    """Replay each job's segments through the work model."""
    wl, seg = rec.workload, rec.segments
    kill = rec.walltime_kill
    count = np.bincount(seg.job, minlength=wl.n_jobs)
    units = _segment_units(rec)
    # one segment on its own units, run to its end: min(runtime, walltime), killed iff over
    plain = (count[seg.job] == 1) & (units == wl.units[seg.job]) \
        & one_of(seg.outcome, (COMPLETED, KILLED))
    j = seg.job[plain]
    over = (wl.runtime[j] > wl.walltime[j]) & kill
    want = np.where(over, wl.walltime[j], wl.runtime[j])
    bad = (seg.t1[plain] - seg.t0[plain] != want) | ((seg.outcome[plain] == KILLED) != over)
    _expect(not bad.any(), "a job did not run for min(runtime, walltime)" if kill else
            "a job did not run for its run time", wl, _jobs_of(wl.n_jobs, j[bad]))
    rest = np.flatnonzero(~plain)
    if len(rest):
        work = WorkModel(wl)
        by_job: dict[int, list[int]] = {}
        for k in rest.tolist():
            by_job.setdefault(int(seg.job[k]), []).append(k)
        for job, ks in by_job.items():
            why = _replay(rec, work, job, ks, units)
            if why:
                raise AuditError(f"job {int(wl.job_id[job])}: {why}")


def _replay(rec: Recorder, work: WorkModel, job: int, ks: list[int], units: IntArray
            ) -> str | None:
    """Why job ``job``'s segments ``ks`` disagree with the work model, or ``None``."""
    seg = rec.segments
    left = float(work.runtime[job])
    run_start = -1
    prev_out, prev_n = ABORTED, 0
    for k in ks:
        t0, t1, out, n = int(seg.t0[k]), int(seg.t1[k]), int(seg.outcome[k]), int(units[k])
        if prev_out in (ABORTED, PREEMPTED):
            run_start = t0
            pause = 0
        elif prev_out == RECONFIGURED:
            pause = work.reconfiguration_pause(job, prev_n, n)
        else:
            return f"segment after a final {OUTCOMES[prev_out]} one"
        natural = t0 + pause + work.duration(job, left, n)
        kill_at = run_start + work.walltime[job] if rec.walltime_kill else _NEVER
        if out == COMPLETED and (t1 != natural or natural > kill_at):
            return f"completed at {t1}, its work ends at {natural}"
        if out == KILLED and (t1 != kill_at or natural <= kill_at):
            return f"killed at {t1}, its wall-time ends at {kill_at}, its work at {natural}"
        if out in (ABORTED, PREEMPTED, RECONFIGURED, CANCELLED) and \
                t1 >= min(natural, kill_at) and t1 > t0 + pause:
            return f"{OUTCOMES[out]} at {t1}, after its work or wall-time ended"
        worked = max(0, t1 - t0 - pause)
        lost = int(seg.lost[k])
        if not 0 <= lost <= worked:
            return f"segment at {t0} lost {lost} s of {worked} s worked"
        left = max(0.0, left - work.done(job, worked - lost, n))
        prev_out, prev_n = out, n
    return None


#: The capacity check runs the compiled event sweep (memory per node, not per pair) when the
#: ahead-of-time module has it, or above this many (segment, node) pairs (worth a JIT
#: compilation); otherwise the vectorised per-pair sweep.
SWEEP_PAIRS = 200_000


def _check_capacity(rec: Recorder, compiled: bool | None = None) -> None:
    """Usage never above capacity, segments only on nodes that are on, no node leaving
    under a job: the vectorised per-node sweep for small runs, the compiled event sweep for
    large ones (``compiled`` forces one; both give the same verdicts)."""
    if compiled is None:
        compiled = len(rec.segments.nodes) > SWEEP_PAIRS or aot_sweep() is not None
    if compiled:
        _sweep_events(rec)
    else:
        _sweep_pairs(rec)


def _sweep_events(rec: Recorder) -> None:
    """The compiled sweep over segment and node-state events, in time order."""
    seg = rec.segments
    plat = rec.platform
    log = np.frombuffer(rec.node_log, dtype=np.int64).reshape(-1, 3)
    n, n_log = len(seg), len(log)
    time = np.concatenate((seg.t1, log[:, 0], seg.t0))
    kind = np.concatenate((np.zeros(n, np.int64), np.ones(n_log, np.int64),
                           np.full(n, 2, np.int64)))
    ref = np.concatenate((np.arange(n), np.arange(n_log), np.arange(n)))
    order = _sweep_order(np.zeros(len(time), np.int64), time, kind)
    i8, i4 = np.int64, np.int32  # the exact types of the ahead-of-time signature
    status, k, node, r, level = sweep_kernel()(
        np.ascontiguousarray(kind[order], i8), np.ascontiguousarray(ref[order], i8),
        np.ascontiguousarray(seg.job, i8), np.ascontiguousarray(seg.offsets, i8),
        np.ascontiguousarray(seg.nodes, i4), np.ascontiguousarray(seg.counts, i4),
        np.ascontiguousarray(rec.req, i8), np.ascontiguousarray(plat.capacity, i8),
        np.ascontiguousarray(log[:, 1], i8), np.ascontiguousarray(log[:, 2], i8))
    if status == OK:
        return
    t = int(time[order][k])
    where = f"node {plat.node_names[int(node)]}"
    if status == STARTED_ON_UNUSABLE:
        s = int(ref[order][k])
        raise AuditError(f"job {int(rec.workload.job_id[seg.job[s]])} started at {t} on "
                         f"{where}, which was {STATE_NAMES[int(level)]}")
    if status == LEFT_WHILE_USED:
        state = int(log[int(ref[order][k]), 2])
        raise AuditError(f"{where} became {STATE_NAMES[state]} at t={t} while jobs used "
                         f"{int(level)} {plat.resources[int(r)]} on it")
    raise AuditError(f"{where} uses {int(level)} {plat.resources[int(r)]} > capacity "
                     f"{int(plat.capacity[int(node), int(r)])} at t={t}")


def _sweep_pairs(rec: Recorder) -> None:
    """Sweep per node: ends, then node-state changes, then starts, at each time."""
    seg = rec.segments
    plat = rec.platform
    cap = plat.capacity
    sizes = seg.sizes
    owner = np.repeat(np.arange(len(seg)), sizes)  # segment of each (segment, node) pair
    nodes = seg.nodes.astype(np.int64)
    counts = seg.counts.astype(np.int64)
    log = np.frombuffer(rec.node_log, dtype=np.int64).reshape(-1, 3)
    n_pairs, n_log = len(owner), len(log)
    # events: pairs ending (0), node states (1), pairs starting (2); by node, time, kind
    node = np.concatenate((nodes, log[:, 1], nodes))
    time = np.concatenate((seg.t1[owner], log[:, 0], seg.t0[owner]))
    kind = np.concatenate((np.zeros(n_pairs, np.int64), np.ones(n_log, np.int64),
                           np.full(n_pairs, 2, np.int64)))
    order = _sweep_order(node, time, kind)
    node_s, time_s, kind_s = node[order], time[order], kind[order]
    ref = np.concatenate((np.arange(n_pairs), np.arange(n_log), np.arange(n_pairs)))[order]
    sign = np.where(kind_s == 2, 1, np.where(kind_s == 0, -1, 0))
    first = group_starts(node_s)
    group = np.repeat(np.arange(len(first)), np.diff(np.append(first, len(node_s))))
    # node state in force at every event: the last state change of the node so far
    is_state = kind_s == 1
    state_now = np.full(len(kind_s), ON, np.int64)
    if n_log:
        state_at = np.where(is_state, log[:, 2][np.where(is_state, ref, 0)], ON)
        last_change = np.maximum.accumulate(np.where(is_state, np.arange(len(kind_s)), -1))
        seen = last_change >= first[group]
        state_now = np.where(seen, state_at[np.maximum(last_change, 0)], ON)
    bad = (kind_s == 2) & (state_now != ON)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        s = owner[ref[k]]
        raise AuditError(
            f"job {int(rec.workload.job_id[seg.job[s]])} started at {int(time_s[k])} on node "
            f"{plat.node_names[int(node_s[k])]}, which was {STATE_NAMES[int(state_now[k])]}")
    for r in range(cap.shape[1]):
        use_pair = counts * rec.req[seg.job[owner], r]
        delta = sign * np.where(kind_s == 1, 0, use_pair[np.where(kind_s == 1, 0, ref)])
        level = np.cumsum(delta)
        base = with_zero(level[first[1:] - 1])[group]
        level = level - base
        over = level > cap[node_s, r]
        leaving = is_state & (state_now != ON) & (level > 0)
        bad = over | leaving
        if bad.any():  # report the earliest violation
            k = int(np.flatnonzero(bad)[np.argmin(time_s[bad])])
            where = f"node {plat.node_names[int(node_s[k])]}"
            if leaving[k]:
                raise AuditError(f"{where} became {STATE_NAMES[int(state_now[k])]} at "
                                 f"t={int(time_s[k])} while jobs used {int(level[k])} "
                                 f"{plat.resources[r]} on it")
            raise AuditError(f"{where} uses {int(level[k])} {plat.resources[r]} > capacity "
                             f"{int(cap[node_s[k], r])} at t={int(time_s[k])}")


def _sweep_order(node: IntArray, t: IntArray, kind: IntArray) -> IntArray:
    """Events by node, then time, then kind (0 ≤ kind < 3), ties in input order: what
    ``np.lexsort((kind, t, node))`` gives, from one sort of a combined integer key when it
    fits in 63 bits (with the position appended the keys are unique, so a fast unstable
    sort is exact)."""
    if not len(t):
        return np.empty(0, np.int64)
    lo = int(t.min())
    span = 3 * (int(t.max()) - lo + 1)
    groups = (int(node.max()) + 1) * span
    if groups >= 2**62:
        return np.lexsort((kind, t, node))
    key = node.astype(np.int64) * span + 3 * (t - lo) + kind
    m = len(key)
    if groups * m >= 2**62:
        return np.argsort(key, kind="stable")
    return np.argsort(key * m + np.arange(m))


def _expect(ok: bool, what: str, wl: object, mask: np.ndarray) -> None:
    if ok:
        return
    job_ids = getattr(wl, "job_id")  # noqa: B009
    first = int(job_ids[np.flatnonzero(mask)[0]]) if mask.any() else -1
    raise AuditError(f"{what} (job {first}, {int(mask.sum())} job(s))")
