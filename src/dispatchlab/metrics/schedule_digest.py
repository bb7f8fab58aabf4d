"""One hash of everything a run recorded, measured times excluded: two runs with the same
digest made the same schedule (segments, nodes, outcomes, lost work, plans, rejections,
node states, failed jobs and, unless left out, the decision points with their samples).

Taken canonically (segments by job and start: :func:`schedule_digest` with
``canonical=True``; ``summary["schedule_digest"]`` is that, without the decision points),
the compiled and the general loop give the same digest for the same run; it does not move
when a summary key is added or renamed, so it compares schedules across versions (an
experiment store's ``result_digest`` hashes every summary figure instead: prices and profit
too).
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # (no import at run time: benchmarks load this file beside older trees)
    from dispatchlab.engine.recorder import Recorder


def schedule_digest(rec: Recorder, canonical: bool = False, points: bool = True) -> str:
    """The SHA-256 of ``rec``'s record; ``canonical``: segments taken by job and start rather
    than in the order they were logged (the compiled fixed-machine loops before 2026-11-27
    logged them in job order); ``points``: the decision points and the samples taken at them
    too (two thirds of the bytes on a long trace; the summary's digest leaves them out)."""
    h = hashlib.sha256()
    seg = rec.segments
    n = len(seg)
    order = np.lexsort((seg.t0, seg.job)) if canonical else np.arange(n)
    offsets = np.asarray(seg.offsets, np.int64)
    if n and not (order == np.arange(n)).all():
        sizes = np.diff(offsets)[order]
        # the node entries of the segments in ``order``, each segment's run in turn
        run_start = offsets[:-1][order] - (np.cumsum(sizes) - sizes)
        flat = np.repeat(run_start, sizes) + np.arange(int(sizes.sum()))
        columns = (seg.job[order], seg.t0[order], seg.t1[order], seg.outcome[order],
                   seg.lost[order], np.concatenate(([0], np.cumsum(sizes))), seg.nodes[flat],
                   seg.counts[flat])
    else:  # already in that order (a FIFO run logs by job): the log's own arrays
        columns = (seg.job, seg.t0, seg.t1, seg.outcome, seg.lost, offsets - offsets[0],
                   seg.nodes[offsets[0]:], seg.counts[offsets[0]:])
    for a in columns:
        h.update(np.ascontiguousarray(a).tobytes())
    if seg.power is not None:
        h.update(np.round(np.asarray(seg.power)[order], 6).tobytes())
    h.update(np.asarray(rec.planned, np.int64).tobytes())
    h.update(json.dumps(sorted((int(k), v) for k, v in rec.rejected.items())).encode())
    h.update(bytes(rec.node_log))
    if points:
        h.update(bytes(rec.decision_at))
        h.update(bytes(rec.samples))
        h.update(np.round(np.frombuffer(bytes(rec.power_samples), np.float64), 6).tobytes())
    h.update(json.dumps(sorted(int(j) for j in rec.failed)).encode())
    return h.hexdigest()
