"""The node managers' fitting index, for every node at once (thesis §5.3.1, SPEC §5).

For a job unit asking ``req[k]`` of each resource ``k`` and a start ``s`` on node ``n``::

    I'(s) = min_k min_{t ∈ [s, s + wt)} (dp[n,k](t) − up[n,k](t)) / req[k]
    I(s)  = min(I'(s), min_k min_t floor((c[n,k] − up[n,k](t)) / req[k]))

``I(s) ≥ 1`` means one more unit fits the desired profile (and the capacity) over the
whole duration; ``floor(I(s))`` units fit. With the profile ignored (``dp = c``, the
soft fallback) ``I`` is the capacity index alone. Time runs on the slot grid of
:class:`~dispatchlab.dispatchers.dardis.grid.UsageGrid`; the minimum over each
candidate's duration is a sliding-window minimum (van Herk / Gil–Werman: two cumulative
minima per block), so one call costs ``O(nodes × (window + duration))`` numpy work.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from dispatchlab.arrays import FloatArray, IntArray


def sliding_min(a: FloatArray, w: int) -> FloatArray:
    """``out[:, j] = a[:, j:j+w].min(axis=1)`` for ``j = 0 … T − w``."""
    n, t = a.shape
    if w <= 0 or w > t:
        raise ValueError(f"window {w} must be within 1 … {t}")
    if w == 1:
        return a.copy()
    m = t - w + 1
    if m <= w:
        return _few_windows(a, w, m)
    blocks = -(-t // w)
    pad = np.full((n, blocks * w), np.inf)
    pad[:, :t] = a
    b = pad.reshape(n, blocks, w)
    prefix = np.minimum.accumulate(b, axis=2).reshape(n, -1)
    suffix = np.minimum.accumulate(b[:, :, ::-1], axis=2)[:, :, ::-1].reshape(n, -1)
    return np.minimum(suffix[:, :m], prefix[:, w - 1:w - 1 + m])


def _few_windows(a: FloatArray, w: int, m: int) -> FloatArray:
    """Sliding minimum when there are no more windows than the width: every window holds
    the core ``[m − 1, w)``; window ``j`` adds ``[j, m − 1)`` on the left and
    ``[w, w + j)`` on the right (two short cumulative minima)."""
    n = a.shape[0]
    out = np.repeat(a[:, m - 1:w].min(axis=1, keepdims=True), m, axis=1)
    if m > 1:
        left = np.minimum.accumulate(a[:, m - 2::-1], axis=1)[:, ::-1]
        np.minimum(out[:, :m - 1], left, out=out[:, :m - 1])
        right = np.minimum.accumulate(a[:, w:w + m - 1], axis=1)
        np.minimum(out[:, 1:], right, out=out[:, 1:])
    assert out.shape == (n, m)
    return out


def headroom(up: FloatArray, limit: FloatArray, req: FloatArray) -> FloatArray:
    """Per node and slot, how many units of ``req`` fit under ``limit``:
    ``min_k (limit[k, n, t] − up[k, n, t]) / req[k]`` over resources asked (nodes ×
    slots). ``up``/``limit`` are resources × nodes × slots."""
    asked = np.flatnonzero(req > 0)
    if len(asked) == 0:
        raise ValueError("a unit must ask for some resource")
    out = (limit[asked[0]] - up[asked[0]]) / req[asked[0]]
    for k in asked[1:]:
        np.minimum(out, (limit[k] - up[k]) / req[k], out=out)
    return out


def fitting_index(up: FloatArray, share: FloatArray | None, capacity: FloatArray,
                  req: FloatArray, n_starts: int, width: int, first_width: int
                  ) -> FloatArray:
    """The fitting index ``I`` of ``n_starts`` candidate starts on every node.

    ``up``: reserved use, resources × nodes × slots, slot 0 being the first candidate's;
    ``share``: desired share of each resource per slot (resources × slots) or ``None``
    (capacity only); ``capacity``: nodes × resources; ``req``: per-unit request per
    resource; candidate ``i`` covers slots ``[i, i + width)`` except candidate 0, which
    covers ``[0, first_width)`` (a start inside its slot may touch one more). Returns
    nodes × ``n_starts``.

    Dividing by ``req[k] > 0`` and flooring are monotone, so they commute with the
    minima: the sliding minimum runs on the free room ``c − up`` (and on the room under
    the profile) and only the small nodes × starts result is divided and floored.
    """
    need = n_starts - 1 + max(width, first_width)
    cap_idx: FloatArray | None = None
    prof_idx: FloatArray | None = None
    for k in np.flatnonzero(req > 0):
        room = capacity[:, k, None] - up[k, :, :need]
        c = _window_min(room, n_starts, width, first_width) / req[k]
        cap_idx = c if cap_idx is None else np.minimum(cap_idx, c)
        if share is not None:
            room -= capacity[:, k, None] * (1.0 - share[k, None, :need])
            d = _window_min(room, n_starts, width, first_width) / req[k]
            prof_idx = d if prof_idx is None else np.minimum(prof_idx, d)
    if cap_idx is None:
        raise ValueError("a unit must ask for some resource")
    out = np.floor(cap_idx)
    return out if prof_idx is None else np.minimum(prof_idx, out)


def _window_min(a: FloatArray, n_starts: int, width: int, first_width: int) -> FloatArray:
    """Per node, the minimum of ``a`` over each candidate's slots."""
    out = sliding_min(a[:, :n_starts - 1 + width], width)
    if first_width > width:
        np.minimum(out[:, 0], a[:, first_width - 1], out=out[:, 0])
    return out


def common_starts(up: FloatArray, share: FloatArray | None, capacity: FloatArray,
                  req: FloatArray, counts: IntArray, n_starts: int, width: int,
                  first_width: int) -> npt.NDArray[np.bool_]:
    """Candidate starts at which *every* node can host its ``counts`` units over the
    whole duration (profile included when ``share`` is given): the fitting test of a job
    that keeps its nodes (backfilling). Same conventions as :func:`fitting_index`; the
    node test is folded per slot first, so the cost is one pass over nodes × slots."""
    cap = capacity.T[:, :, None]
    need = n_starts - 1 + max(width, first_width)
    up = up[:, :, :need]
    limit = np.broadcast_to(cap, up.shape)
    if share is not None:
        limit = np.minimum(cap * share[:, None, :need], cap)
    room = np.floor(headroom(up, limit, req))
    ok = (room >= counts[:, None]).all(axis=0)
    bad = np.concatenate([[0], np.cumsum(~ok)])
    starts = np.arange(n_starts)
    out = bad[np.minimum(starts + width, need)] == bad[starts]
    out[0] = bad[first_width] == 0
    return out
