"""Conservative backfilling's priority order in the compiled loops: arrivals reserved in
queue order, and the depth window.

As :meth:`Conservative.select
<dispatchlab.dispatchers.rule_based.selection.conservative.Conservative.select>` does with
the order the policy hands it at each call (a dynamic ordering: the queue sorted afresh by
its score at that call, :mod:`.dynamic_order`):

- without a depth limit, the jobs that arrived at a decision point are reserved in the
  order they hold in the queue (``[j for j in order if j in arrived]``);
- with a depth limit ``d``, the first ``d`` queued jobs (those not started in this call)
  that hold no reservation are reserved, in order, and again after every round of starts
  (starts let more jobs into the window; they may be due at once).

Plain functions on arrays, compiled into the loops (:mod:`.kernel` ``loop_helpers``).
"""

from __future__ import annotations

from typing import Any

from dispatchlab.dispatchers.rule_based.compiled.dynamic_order import STATIC
from dispatchlab.engine.compiled.slot_availability_ops import NEVER, NONE, avail_reserve


def arrivals_in_order(score: int, new: Any, n_new: int, rank: Any, q_job: Any, qn: int,
                      arrived: Any) -> None:
    """Sort ``new[:n_new]`` (jobs that arrived now, all queued) into queue order: by rank
    for a static ordering; for a dynamic one by their place in ``q_job[:qn]`` (sorted by
    the score now). ``arrived``: per job, scratch flags left cleared."""
    if n_new < 2:
        return
    if score == STATIC:
        for a in range(1, n_new):
            x = new[a]
            b = a - 1
            while b >= 0 and rank[new[b]] > rank[x]:
                new[b + 1] = new[b]
                b -= 1
            new[b + 1] = x
        return
    for a in range(n_new):
        arrived[new[a]] = True
    w = 0
    for k in range(qn):
        j = q_job[k]
        if arrived[j]:
            arrived[j] = False
            new[w] = j
            w += 1


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
