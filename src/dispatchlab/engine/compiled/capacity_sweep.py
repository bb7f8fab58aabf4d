"""The audit's capacity sweep as one loop over events (compiled ahead of time with the
engine's kernels, or by Numba's JIT; plain Python when Numba is off).

Events are segment ends, node-state changes and segment starts, ordered by time and kind
(ends, then states, then starts). The loop keeps each node's usage per resource and its
state: a start on a node that is not on, a usage above capacity, or a node leaving while
used stops it with a code and the event's position. Memory is the nodes × resources usage
and the events, nothing per (segment, node) pair.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: Status codes of :func:`sweep`.
OK, STARTED_ON_UNUSABLE, OVER_CAPACITY, LEFT_WHILE_USED = 0, 1, 2, 3
_ON = 0


def sweep(ev_kind: Any, ev_ref: Any, seg_job: Any, offsets: Any, nodes: Any, counts: Any,
          req: Any, cap: Any, log_node: Any, log_state: Any) -> Any:
    """Run the events; returns ``(status, event position, node, resource, level)``.

    ``ev_kind[k]``: 0 segment end, 1 node-state change, 2 segment start; ``ev_ref[k]``:
    the segment (kinds 0 and 2) or the node-log row (kind 1).
    """
    n_nodes, n_res = cap.shape
    usage = np.zeros((n_nodes, n_res), np.int64)
    state = np.zeros(n_nodes, np.int64)
    for k in range(ev_kind.shape[0]):
        kind = ev_kind[k]
        ref = ev_ref[k]
        if kind == 1:
            nd = log_node[ref]
            st = log_state[ref]
            if st != _ON:
                for r in range(n_res):
                    if usage[nd, r] > 0:
                        return LEFT_WHILE_USED, k, nd, r, usage[nd, r]
            state[nd] = st
            continue
        job = seg_job[ref]
        for a in range(offsets[ref], offsets[ref + 1]):
            nd = nodes[a]
            c = counts[a]
            if kind == 0:
                for r in range(n_res):
                    usage[nd, r] -= c * req[job, r]
            else:
                if state[nd] != _ON:
                    return STARTED_ON_UNUSABLE, k, nd, 0, state[nd]
                for r in range(n_res):
                    usage[nd, r] += c * req[job, r]
                    if usage[nd, r] > cap[nd, r]:
                        return OVER_CAPACITY, k, nd, r, usage[nd, r]
    return OK, -1, -1, -1, 0
