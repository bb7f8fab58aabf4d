"""The fitting index I(s) of SPEC §5 on a hand-computed two-node example."""

from __future__ import annotations

import numpy as np
import pytest

from dispatchlab.dispatchers.dardis.fitting import fitting_index, sliding_min
from dispatchlab.dispatchers.dardis.grid import UsageGrid

# Two nodes of 4 cores; reserved use per slot; desired share 0.5 for two slots, then 1.
UP = np.array([[[1, 2, 0, 0, 3],
                [0, 0, 1, 4, 0]]], dtype=np.float64)
SHARE = np.array([[0.5, 0.5, 1.0, 1.0, 1.0]])
CAP = np.array([[4.0], [4.0]])


def test_two_nodes_one_core_units() -> None:
    # desired headroom dp − up: node 0 [1, 0, 4, 4, 1], node 1 [2, 2, 3, 0, 4];
    # capacity headroom is never smaller here; minimum over 2-slot durations:
    index = fitting_index(UP, SHARE, CAP, np.array([1.0]), 4, 2, 2)
    assert index.tolist() == [[0, 0, 4, 1], [2, 2, 0, 0]]


def test_two_nodes_two_core_units_profile_fraction_and_capacity_floor() -> None:
    # node 0: (dp − up)/2 = [.5, 0, 2, 2, .5]; floor((c − up)/2) = [1, 1, 2, 2, 0]
    # → per slot [.5, 0, 2, 2, 0] → I = [0, 0, 2, 0]
    # node 1: (dp − up)/2 = [1, 1, 1.5, 0, 2]; floor((c − up)/2) = [2, 2, 1, 0, 2]
    # → per slot [1, 1, 1, 0, 2] → I = [1, 1, 0, 0]
    index = fitting_index(UP, SHARE, CAP, np.array([2.0]), 4, 2, 2)
    assert index.tolist() == [[0, 0, 2, 0], [1, 1, 0, 0]]


def test_capacity_only_ignores_the_profile() -> None:
    index = fitting_index(UP, None, CAP, np.array([1.0]), 4, 2, 2)
    assert index.tolist() == [[2, 2, 4, 1], [4, 3, 0, 0]]


def test_first_start_inside_its_slot_covers_one_more_slot() -> None:
    index = fitting_index(UP, None, CAP, np.array([1.0]), 2, 2, 3)
    assert index[:, 0].tolist() == [2, 3]  # slots 0–2 instead of 0–1


def test_two_resources_take_the_tighter() -> None:
    up = np.stack([UP[0], np.zeros((2, 5))])
    up[1, 0, :] = 6  # node 0 has 2 GB of 8 left everywhere
    cap = np.array([[4.0, 8.0], [4.0, 8.0]])
    index = fitting_index(up, None, cap, np.array([1.0, 2.0]), 4, 2, 2)
    assert index.tolist() == [[1, 1, 1, 1], [4, 3, 0, 0]]


@pytest.mark.parametrize("w", [1, 2, 3, 5, 7, 10, 12, 13])
def test_sliding_min_matches_brute_force(w: int) -> None:
    rng = np.random.default_rng(w)
    a = rng.integers(-5, 9, size=(4, 13)).astype(float)
    want = np.array([[row[j:j + w].min() for j in range(13 - w + 1)] for row in a])
    assert np.array_equal(sliding_min(a, w), want)


def test_grid_reserves_every_touched_slot_and_releases_from_now() -> None:
    g = UsageGrid(1, 2, slot=10, horizon=16)
    g.add(np.array([1]), np.array([[3.0]]), 2, 5)  # slots 2, 3, 4
    assert g.window(0, 6)[0, 1].tolist() == [0, 0, 3, 3, 3, 0]
    g.add(np.array([1]), np.array([[3.0]]), 3, 5, -1.0)  # ended during slot 3
    assert g.window(0, 6)[0, 1].tolist() == [0, 0, 3, 0, 0, 0]
    g.ensure(100)
    assert g.window(0, 6)[0, 1].tolist() == [0, 0, 3, 0, 0, 0]


@pytest.mark.parametrize("seed", range(6))
def test_common_starts_agree_with_the_fitting_index(seed: int) -> None:
    from dispatchlab.dispatchers.dardis.fitting import common_starts

    rng = np.random.default_rng(seed)
    up = rng.integers(0, 5, size=(2, 3, 12)).astype(float)
    cap = np.array([[6.0, 8.0], [6.0, 8.0], [5.0, 9.0]])
    share = rng.choice([0.5, 1.0], size=(2, 12))
    req = np.array([1.0, 2.0])
    counts = rng.integers(0, 3, 3)
    for s in (share, None):
        index = fitting_index(up, s, cap, req, 6, 4, 5)
        want = (np.floor(index) >= counts[:, None]).all(axis=0)
        got = common_starts(up, s, cap, req, counts, 6, 4, 5)
        assert got.tolist() == want.tolist()


@pytest.mark.parametrize("seed", range(8))
def test_free_from_is_one_past_each_nodes_last_busy_slot(seed: int) -> None:
    rng = np.random.default_rng(seed)
    g = UsageGrid(2, 5, slot=10, horizon=16)
    g.advance(int(rng.integers(0, 200)))
    for _ in range(int(rng.integers(0, 6))):
        a = g.base + int(rng.integers(0, 40))
        g.add(np.array([int(rng.integers(5))]), rng.integers(0, 3, (2, 1)).astype(float),
              a, a + int(rng.integers(1, 30)))
    first = g.base + int(rng.integers(0, 50))
    busy = (g.window(first, g.end) > 1e-9).any(axis=0)
    want = [first + (int(np.flatnonzero(row)[-1]) + 1 if row.any() else 0) for row in busy]
    assert g.free_from(first).tolist() == want
