"""The fitting index read from the grid at an offset (compiled) equals the numpy index of
the same window, entry for entry."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatchlab.dispatchers.dardis.fitting import fitting_index
from dispatchlab.dispatchers.dardis.fitting_kernel import grid_fitting_index


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_starts=st.integers(1, 40),
       width=st.integers(1, 30), extra=st.integers(-1, 1), nodes=st.integers(1, 5),
       pad=st.integers(0, 5), profile=st.booleans(), fractional=st.booleans())
def test_grid_index_equals_the_numpy_index(seed: int, n_starts: int, width: int, extra: int,
                                           nodes: int, pad: int, profile: bool,
                                           fractional: bool) -> None:
    rng = np.random.default_rng(seed)
    first_width = max(1, width + extra)
    span = n_starts - 1 + max(width, first_width)
    held = span + 2 * pad
    grid = rng.integers(0, 9, size=(3, nodes, held)).astype(float)
    if fractional:
        grid = grid * rng.choice([0.5, 1 / 3, 0.1], size=grid.shape)
    cap = rng.integers(4, 12, size=(nodes, 3)).astype(float)
    req = np.array([float(rng.integers(1, 3)), float(rng.integers(0, 3)), 0.0])
    table = rng.choice([0.3, 0.6, 1.0, 1.2], size=(3, held)) if profile else None
    want = fitting_index(grid[:, :, pad:pad + span],
                         None if table is None else table[:, pad:pad + span], cap, req,
                         n_starts, width, first_width)
    got = grid_fitting_index(grid, pad, table, pad, cap, req, n_starts, width, first_width)
    assert got.shape == want.shape
    assert np.array_equal(got, want)


def test_a_request_for_nothing_is_refused() -> None:
    with pytest.raises(ValueError, match="some resource"):
        grid_fitting_index(np.zeros((1, 1, 4)), 0, None, 0, np.ones((1, 1)),
                           np.zeros(1), 2, 2, 2)
