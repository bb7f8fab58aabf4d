"""One hash of everything a run recorded, measured times excluded: two runs with the same
digest made the same schedule (segments, nodes, outcomes, lost work, plans, rejections,
node states, decision points, samples, power samples, failed jobs).

Taken canonically (segments by job and start: :func:`schedule_digest` with
``canonical=True``, as ``summary["schedule_digest"]`` is), the compiled and the general loop
give the same digest for the same run; it does not move when a summary key is added or
renamed, so it compares schedules across versions (an experiment store's
``result_digest`` hashes every summary figure instead: prices and profit too).
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # (no import at run time: benchmarks load this file beside older trees)
    from dispatchlab.engine.recorder import Recorder


def schedule_digest(rec: Recorder, canonical: bool = False) -> str:
    """The SHA-256 of ``rec``'s record; ``canonical``: segments taken by job and start rather
    than in the order they were logged (the compiled fixed-machine loops before 2026-11-27
    logged them in job order)."""
    h = hashlib.sha256()
    seg = rec.segments
    order = np.lexsort((seg.t0, seg.job)) if canonical else np.arange(len(seg))
    sizes = np.diff(seg.offsets)[order]
    total = int(sizes.sum())
    # the node entries of the segments in ``order``, each segment's run of entries in turn
    run_start = np.asarray(seg.offsets[:-1], np.int64)[order] - (np.cumsum(sizes) - sizes)
    flat = np.repeat(run_start, sizes) + np.arange(total)
    for a in (seg.job[order], seg.t0[order], seg.t1[order], seg.outcome[order],
              seg.lost[order], np.concatenate(([0], np.cumsum(sizes))), seg.nodes[flat],
              seg.counts[flat]):
        h.update(np.ascontiguousarray(a).tobytes())
    if seg.power is not None:
        h.update(np.round(np.asarray(seg.power)[order], 6).tobytes())
    h.update(np.asarray(rec.planned, np.int64).tobytes())
    h.update(json.dumps(sorted((int(k), v) for k, v in rec.rejected.items())).encode())
    h.update(bytes(rec.node_log))
    h.update(bytes(rec.decision_at))
    h.update(bytes(rec.samples))
    h.update(np.round(np.frombuffer(bytes(rec.power_samples), np.float64), 6).tobytes())
    h.update(json.dumps(sorted(int(j) for j in rec.failed)).encode())
    return h.hexdigest()
