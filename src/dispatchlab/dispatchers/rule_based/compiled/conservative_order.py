"""Conservative backfilling's depth window in the compiled loop of a fixed machine.

As :meth:`Conservative.select
<dispatchlab.dispatchers.rule_based.selection.conservative.Conservative.select>` does with a
depth limit ``d`` and the order the policy hands it at each call (a dynamic ordering: the
queue sorted afresh by its score at that call, :mod:`.dynamic_order`): the first ``d``
queued jobs (those not started in this call) that hold no reservation are reserved, in
order, and again after every round of starts (starts let more jobs into the window; they
may be due at once). Reservations of jobs the window has left (a job of higher priority
arrived) stay in the book and are compressed with the others.

Plain functions on arrays, compiled into the loops (:mod:`.kernel` ``loop_helpers``).
"""

from __future__ import annotations

from typing import Any

from dispatchlab.engine.compiled.slot_availability_ops import NEVER, NONE, avail_reserve


def reserve_window(depth: int, q_job: Any, qn: int, started: Any, units: Any, est: Any,
                   avail: Any, pn: int, book: Any, bn: int, planned: Any) -> Any:
    """Reserve each of the first ``depth`` queued jobs not started (``started[j] >= 0``:
    started) that holds no reservation, in queue order, at its earliest fit (``avail``:
    ``(times, free)`` with room for ``2 × depth`` more breakpoints; ``book``: ``(r_start,
    r_end, b_key, b_heap, b_pos)``). Returns ``(pn, bn)``."""
    times, free = avail
    r_start, r_end, b_key, b_heap, b_pos = book
    seen = 0
    for k in range(qn):
        if seen >= depth:
            break
        j = q_job[k]
        if started[j] >= 0:
            continue
        seen += 1
        if b_pos[j] >= 0:
            continue
        pn, bn, s = avail_reserve(times, free, pn, j, units[j], est[j], NEVER, r_start,
                                  r_end, b_key, b_heap, b_pos, bn)
        if s != NONE:
            planned[j] = s
    return pn, bn
