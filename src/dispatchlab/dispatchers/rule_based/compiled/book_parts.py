"""Conservative backfilling's compression of the book of reservations, as the compiled loop
of a machine that changes (:mod:`.conservative_scenario_loop`) does it: exactly
:meth:`SlotReservations.compress
<dispatchlab.dispatchers.slot_availability.SlotReservations.compress>` of the general loop.

Every reservation, in priority order, moves to its earliest fit when that is earlier. On a
book of :data:`SKIP_FROM` reservations or more, a reservation that cannot move (no run of
segments with its slots free, before its start, that reaches its start or lasts its
duration) is passed over without a search
(:func:`~dispatchlab.dispatchers.slot_book_ops.compress_skipping`, the general loop's own
choice for such books): a search would have found nothing, so the moves are the same.
The fixed-machine :mod:`.conservative_loop` keeps its own plain compression, written in
the loop: on full HPC2N, where nearly every search moves a reservation, the skipping cost
it 1.25× of CPU time (median 1.59 s against 1.27 s, 3 alternating fresh runs, load 12,
2026-11-27) and again 1.10× (1.91 s against 1.70 s, also from 1,024 reservations, load
~10), while it saved 1.14× on HPC2N's first 10,000 jobs on 30 nodes (2.33 s against
2.67 s), whose searches mostly find nothing (``benchmarks/profile_conservative_search.py``);
and calling this function even without skipping cost it 4 % on HPC2N and 14 % on KTH (the
book's arrays passed in and out at each of its 177,505 and 27,729 compressions).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dispatchlab.dispatchers.rule_based.compiled.loop_parts import room
from dispatchlab.dispatchers.slot_book_ops import TABLES, compress_skipping
from dispatchlab.engine.compiled.slot_availability_ops import avail_compress

#: Books of this many reservations or more skip the reservations that cannot move (as
#: :data:`dispatchlab.dispatchers.slot_availability.SKIP_FROM`).
SKIP_FROM = 256


def compress_book(times: Any, pfree: Any, pn: int, q_job: Any, qn: int, r_start: Any,
                  r_end: Any, units: Any, t: int, book: Any, bn: int, moved: Any,
                  planned: Any, best: Any, cached: Any) -> Any:
    """Compress the book at ``t`` (queue ``q_job[:qn]`` in priority order; ``book``:
    ``(b_key, b_heap, b_pos)``); each moved job's new start goes to ``planned``.
    ``best``/``cached``: the skipping's scratch tables (``best`` grown with ``times``).
    Returns ``(times, pfree, pn, moves, best)``."""
    b_key, b_heap, b_pos = book
    moves = 0
    first = 0
    while first < qn:
        times = room(times, pn + 4)
        pfree = room(pfree, pn + 4)
        if bn < SKIP_FROM:
            pn, n_moved, first = avail_compress(times, pfree, pn, q_job, first, qn, r_start,
                                                r_end, units, t, b_key, b_heap, b_pos, moved)
        else:
            if best.shape[1] < times.shape[0]:
                best = np.empty((TABLES, times.shape[0]), np.int64)
            pn, n_moved, first, _ = compress_skipping(times, pfree, pn, q_job, first, qn,
                                                      r_start, r_end, units, t, b_key,
                                                      b_heap, b_pos, moved, best, cached)
        for m in range(n_moved):
            planned[moved[m]] = r_start[moved[m]]
        moves += n_moved
    return times, pfree, pn, moves, best
