"""A run of a job as the engine opens it, for the compiled loops of machines whose nodes
change (a job may run several times, each run a segment of its own): the segment arrays
grown on demand and the run's end, exact for a first run and from the work left after an
abort (``begin_segment`` in :mod:`dispatchlab.engine.execution`).

Used by the core (:mod:`.loop`) and the wings' vector loop; the conservative and power-off
loops of a changing machine hold the same steps inline.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dispatchlab.engine.core.parts import room

#: A time that never comes (no wall-time kill).
NEVER = 1 << 62


def seg_room(segs: Any, n_seg: int) -> Any:
    """The segment arrays ``(job, t0, t1, outcome, lost, pos, len)``, grown when segment
    ``n_seg`` does not fit."""
    if n_seg < segs[0].shape[0]:
        return segs
    need = n_seg + 1
    return (room(segs[0], need), room(segs[1], need), room(segs[2], need),
            room(segs[3], need), room(segs[4], need), room(segs[5], need),
            room(segs[6], need))


def run_end(t: int, job: int, runtime: Any, walltime: Any, kill: bool, fresh: Any,
            left: Any, end_killed: Any) -> int:
    """When the run of ``job`` starting at ``t`` ends: its run time for a first run, the
    work left (rounded up) after an abort, cut at its wall-time when ``kill``; whether it
    is cut goes to ``end_killed``."""
    natural = t + runtime[job] if fresh[job] else t + np.int64(np.ceil(left[job]))
    kill_at = t + walltime[job] if kill else NEVER
    end_killed[job] = kill_at < natural
    return int(kill_at if kill_at < natural else natural)
