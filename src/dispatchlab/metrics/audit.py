"""Independent audit of a finished run: the schedule is re-checked from the record alone.

The engine validates every decision as it goes; the audit re-derives the same facts from
what was recorded, with a different algorithm (a sweep over start/end events per node),
so a bug in the engine's bookkeeping cannot hide behind itself.
"""

from __future__ import annotations

import numpy as np

from dispatchlab.engine.placements import flat_placements
from dispatchlab.engine.recorder import Recorder
from dispatchlab.errors import DispatchlabError


class AuditError(DispatchlabError):
    """The recorded schedule breaks a rule of the machine."""


def audit(rec: Recorder) -> None:
    """Raise :class:`AuditError` unless the recorded schedule is consistent.

    Checks: every job started once and ended once (or was rejected); no job started before
    its submission; every job ran exactly ``min(runtime, walltime)`` (kills at the wall-time);
    units placed = units asked; per node and resource, usage never exceeds capacity.
    """
    wl = rec.workload
    start, end = rec.start_time, rec.end_time
    rejected = np.zeros(wl.n_jobs, dtype=bool)
    if rec.rejected:
        rejected[list(rec.rejected)] = True
    ran = ~rejected
    _expect(bool((start[ran] >= 0).all()), "a job never started", wl, ran & (start < 0))
    _expect(bool((start[rejected] < 0).all()), "a rejected job started", wl,
            rejected & (start >= 0))
    _expect(bool((start[ran] >= wl.submit[ran]).all()), "a job started before its submission",
            wl, ran & (start < wl.submit))
    expected = start + np.minimum(wl.runtime, wl.walltime)
    bad = ran & (end != expected)
    _expect(not bad.any(), "a job did not run for min(runtime, walltime)", wl, bad)

    if not ran.any():
        return
    sizes, nodes, counts = flat_placements(rec)
    owner = np.repeat(np.arange(wl.n_jobs), sizes)
    placed = np.bincount(owner, weights=counts, minlength=wl.n_jobs)
    bad_units = ran & (placed != wl.units)
    _expect(not bad_units.any(), "placed units differ from requested units", wl, bad_units)

    req = rec.req
    cap = rec.platform.capacity
    # Sweep per node: +use at start, -use at end; at equal times releases come first.
    t = np.concatenate((start[owner], end[owner]))
    sign = np.concatenate((np.ones(len(owner), np.int64), -np.ones(len(owner), np.int64)))
    node2 = np.concatenate((nodes, nodes))
    job2 = np.concatenate((owner, owner))
    order = _sweep_order(node2, t, sign)
    node_s = node2[order]
    for r in range(cap.shape[1]):
        delta = (np.concatenate((counts, counts)) * req[job2, r] * sign)[order]
        use = np.cumsum(delta)
        # subtract the running total at the start of each node's group
        first = np.r_[0, np.flatnonzero(np.diff(node_s)) + 1]
        base = np.repeat(np.r_[0, use[first[1:] - 1]], np.diff(np.r_[first, len(use)]))
        level = use - base
        over = level > cap[node_s, r]
        if over.any():
            k = int(np.flatnonzero(over)[0])
            raise AuditError(
                f"node {rec.platform.node_names[int(node_s[k])]} uses {int(level[k])} "
                f"{rec.platform.resources[r]} > capacity {int(cap[node_s[k], r])} at "
                f"t={int(t[order][k])}"
            )


def _sweep_order(node: np.ndarray, t: np.ndarray, sign: np.ndarray) -> np.ndarray:
    """Events by node, then time, releases (-1) before starts (+1), ties in input order:
    ``np.lexsort``'s order, from one sort of a combined integer key when it fits in 63 bits
    (with the position appended the keys are unique, so a fast unstable sort is exact)."""
    lo = int(t.min())
    span = 2 * (int(t.max()) - lo + 1)
    groups = (int(node.max()) + 1) * span
    if groups >= 2**62:
        return np.lexsort((sign, t, node))
    key = node.astype(np.int64) * span + 2 * (t - lo) + (sign > 0)
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
