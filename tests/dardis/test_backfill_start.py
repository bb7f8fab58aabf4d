"""Backfilling's earliest common start, walked slot by slot with the job's own
reservation left out on the fly, against the all-candidates numpy answer on a grid with
the reservation taken out."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatchlab.dispatchers.dardis.backfill_start import first_common_start
from dispatchlab.dispatchers.dardis.fitting import common_starts


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_starts=st.integers(1, 8), width=st.integers(1, 6),
       extra=st.integers(0, 1), nodes=st.integers(1, 4), profile=st.booleans())
def test_first_common_start_is_the_first_common_start(seed: int, n_starts: int,
                                                      width: int, extra: int, nodes: int,
                                                      profile: bool) -> None:
    rng = np.random.default_rng(seed)
    first_width = max(1, width + extra)
    span = n_starts - 1 + max(width, first_width)
    cap = rng.integers(2, 9, size=(nodes, 2)).astype(float)
    req = np.array([1.0, float(rng.integers(0, 3))])
    counts = rng.integers(1, 3, nodes)
    own = req[:, None] * counts[None, :]
    lo = int(rng.integers(0, span + 1))
    hi = int(rng.integers(lo, span + 3))
    other = rng.integers(0, 6, size=(2, nodes, span)).astype(float)
    held = other.copy()
    held[:, :, lo:min(hi, span)] += own[:, :, None]  # the grid as it is: own amounts in
    share = rng.choice([0.25, 0.5, 1.0], size=(2, span)) if profile else None
    want = np.flatnonzero(common_starts(other, share, cap, req, counts, n_starts, width,
                                        first_width))
    # the grid read at an offset: other nodes and slots around the job's
    pad_nodes, pad_slots = int(rng.integers(0, 3)), int(rng.integers(0, 4))
    grid = rng.integers(0, 6, size=(2, nodes + pad_nodes, span + 2 * pad_slots)).astype(float)
    mine = np.sort(rng.choice(nodes + pad_nodes, nodes, replace=False))
    grid[:, mine, pad_slots:pad_slots + span] = held
    full_cap = rng.integers(2, 9, size=(nodes + pad_nodes, 2)).astype(float)
    full_cap[mine] = cap
    table = None
    if share is not None:
        table = rng.choice([0.25, 0.5, 1.0], size=(2, span + 2 * pad_slots))
        table[:, pad_slots:pad_slots + span] = share
    got = first_common_start(grid, pad_slots, mine, own, lo, hi, full_cap, table, pad_slots,
                             req, counts, n_starts, width, first_width)
    assert got == (int(want[0]) if len(want) else -1)
