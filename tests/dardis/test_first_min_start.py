"""The First + Min start round that stops at its answer gives the choice of the whole
window's fitting index, First generator and Min start policy."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatchlab.dispatchers.dardis.first_min_start import first_min_start
from dispatchlab.dispatchers.dardis.fitting import fitting_index
from dispatchlab.dispatchers.dardis.generators import first, responses
from dispatchlab.dispatchers.dardis.task_manager import min_start


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_starts=st.integers(1, 300),
       width=st.integers(1, 90), extra=st.integers(-1, 1), nodes=st.integers(1, 8),
       pad=st.integers(0, 4), profile=st.booleans(), units=st.integers(1, 12),
       busy=st.floats(0.0, 1.0))
def test_the_round_stops_at_the_whole_windows_choice(
        seed: int, n_starts: int, width: int, extra: int, nodes: int, pad: int,
        profile: bool, units: int, busy: float) -> None:
    rng = np.random.default_rng(seed)
    first_width = max(1, width + extra)
    span = n_starts - 1 + max(width, first_width)
    held = span + 2 * pad
    # reservations as runs of slots, so that early starts are often blocked
    grid = np.zeros((2, nodes, held))
    for _ in range(int(busy * 3 * nodes) + 1):
        v, a = int(rng.integers(nodes)), int(rng.integers(held))
        grid[:, v, a:a + int(rng.integers(1, max(2, held // 2)))] += rng.integers(1, 4, (2, 1))
    cap = rng.integers(3, 8, size=(nodes, 2)).astype(float)
    req = np.array([1.0, float(rng.integers(0, 2))])
    alive = rng.random(nodes) < 0.85
    table = rng.choice([0.5, 0.75, 1.0], size=(2, held)) if profile else None
    count = responses(units, n_starts, int(alive.sum()))

    index = fitting_index(grid[:, :, pad:pad + span],
                          None if table is None else table[:, pad:pad + span], cap, req,
                          n_starts, width, first_width)
    index[~alive] = -np.inf
    want = min_start(index, first(index, count, rng), units, rng)
    got = first_min_start(grid, pad, table, pad, cap, alive, req, units, count, n_starts,
                          width, first_width)
    if want is None:
        assert got is None
    else:
        assert got is not None
        s, nodes_got, counts_got = got
        assert s == want.start
        assert nodes_got.tolist() == want.nodes.tolist()
        assert counts_got.tolist() == want.counts.tolist()
