"""The compiled earliest-start search of the offline planner against its definition, and
the monotone-queue window minimum against brute force."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatchlab.dispatchers.offline_plan.planner.earliest_kernel import earliest_start
from dispatchlab.dispatchers.sliding_min import queue_window_min


def _definition(free: np.ndarray, used_end: int, release: int, slots: int, units: int,
                req: np.ndarray) -> tuple[int, np.ndarray]:
    """First slot ≥ release (the machine as a whole holding the job over the window, and
    its nodes together); at used_end or later the slot's uncapped fit."""
    asked = req > 0
    fit = np.maximum((free[asked] // req[asked, None, None]).min(axis=0), 0)  # nodes × slots
    pool = free.sum(axis=1)  # resources × slots
    for t in range(release, used_end):
        if (pool[asked, t:t + slots] < units * req[asked, None]).any():
            continue
        room = np.minimum(fit[:, t:t + slots], units).min(axis=1)
        if room.sum() >= units:
            return t, room
    t = max(release, used_end)
    return t, fit[:, t]


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), nodes=st.integers(1, 5), used_end=st.integers(0, 60),
       release=st.integers(0, 70), slots=st.integers(1, 20), units=st.integers(1, 8),
       chunk=st.sampled_from([1, 3, 16, 256]), overfull=st.booleans())
def test_earliest_start_is_the_definitions(seed: int, nodes: int, used_end: int,
                                          release: int, slots: int, units: int, chunk: int,
                                          overfull: bool) -> None:
    rng = np.random.default_rng(seed)
    cap = rng.integers(2, 6, size=(2, nodes))
    held = max(release + 1, used_end + slots)
    free = np.repeat(cap[:, :, None], held, axis=2)
    taken = rng.integers(0, 5, size=(2, nodes, used_end))
    free[:, :, :used_end] -= np.minimum(taken, cap[:, :, None] + (1 if overfull else 0))
    req = np.array([int(rng.integers(1, 3)), int(rng.integers(0, 2))])
    # the job fits the empty machine node by node (the pool's total is not enough: 4 units
    # of 2 cores fit 8 cores in all, not nodes of 5 and 3 cores)
    per_node = (cap[req > 0] // req[req > 0, None]).min(axis=0)
    units = min(units, max(1, int(per_node.sum())))
    pool = free.sum(axis=1)
    want_t, want_room = _definition(free, used_end, release, slots, units, req)
    got_t, got_room = earliest_start(free, pool, used_end, release, slots, units, req, chunk)
    assert got_t == want_t
    # placing takes at most the job's units per node (from used_end on the room may come
    # capped or not, depending on the group the search reached it in)
    assert np.minimum(got_room, units).tolist() == np.minimum(want_room, units).tolist()
    if got_t < used_end:
        assert got_room.tolist() == want_room.tolist()


def test_a_job_larger_than_the_machine_is_refused() -> None:
    free = np.full((1, 2, 8), 4, dtype=np.int64)
    free[:, :, :3] = 0
    with pytest.raises(ValueError, match="exceed the machine"):
        earliest_start(free, free.sum(axis=1), 3, 0, 2, 3, np.array([4]))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 9), min_size=1, max_size=40), st.integers(1, 40))
def test_queue_window_min_matches_brute_force(values: list[int], width: int) -> None:
    row = np.array(values, dtype=np.int64)
    if width > len(row):
        return
    n = len(row) - width + 1
    out = np.empty(n, dtype=np.int64)
    queue_window_min(row, n, width, out, np.empty(len(row), dtype=np.int64))
    assert out.tolist() == [int(row[i:i + width].min()) for i in range(n)]
