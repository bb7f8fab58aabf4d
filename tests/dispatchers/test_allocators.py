"""Allocators: node choice, several units per node, validity on random matrices."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatchlab import Platform, Workload, simulate
from dispatchlab.dispatchers.allocators import ALLOCATORS, get_allocator
from dispatchlab.engine.state import SystemView
from dispatchlab.errors import ConfigError
from dispatchlab.platform.platform import units_fitting

#: Four nodes × (cores, gpu): node 1 and 3 have GPUs.
PLAT = Platform(resources=("cores", "gpu"),
                capacity=np.array([[8, 0], [8, 2], [8, 0], [8, 2]]),
                node_names=("a", "b", "c", "d"), node_power=np.array([200.0, 100.0, 100.0, 150.0]))


def place(name: str, free: list[list[int]], req: list[int], units: int) -> tuple[list[int],
                                                                                 list[int]] | None:
    alloc = get_allocator(name)
    alloc.reset(view_on(PLAT), np.random.default_rng(0))
    got = alloc.place(np.array(free, dtype=np.int64), np.array(req, dtype=np.int64), units)
    return None if got is None else (got[0].tolist(), got[1].tolist())


def view_on(plat: Platform) -> SystemView:
    """A view of ``plat`` with no jobs (what allocators read at reset)."""
    wl = Workload.from_columns(submit=[], walltime=[], runtime=[], units=[], req={"cores": []})
    return SystemView(wl, plat, np.zeros((0, len(plat.resources)), np.int64))


FREE = [[8, 0], [3, 2], [6, 0], [8, 2]]


def test_first_fit_packs_units_in_index_order() -> None:
    assert place("first-fit", FREE, [2, 0], 5) == ([0, 1], [4, 1])


def test_best_fit_prefers_the_node_left_with_least() -> None:
    # One 2-core unit leaves (cores/8 + gpus/2): a 6/8, b 1/8 + 2/2, c 4/8, d 6/8 + 2/2.
    # Idle GPUs count as waste, so c wins although b would keep the fewest cores.
    assert place("best-fit", FREE, [2, 0], 1) == ([2], [1])
    # Four units fill a exactly (left 0), c would keep 0 with 3 units: a comes first.
    assert place("best-fit", FREE, [2, 0], 4) == ([0], [4])
    # Six units: a (4, left 0), c (3, left 0) by index; c gets the remaining 2.
    assert place("best-fit", FREE, [2, 0], 6) == ([0, 2], [4, 2])


def test_worst_fit_spreads() -> None:
    assert place("worst-fit", FREE, [2, 0], 1) == ([3], [1])
    assert place("spread", FREE, [2, 0], 1) == ([3], [1])


def test_energy_prefers_low_power_then_most_loaded() -> None:
    # Power b = c = 100 < d = 150 < a = 200. Free now (cores/8 + gpus/2): b 3/8 + 1,
    # c 6/8: c is the more loaded of the two efficient nodes and goes first, then b, d, a.
    assert place("energy", FREE, [1, 0], 1) == ([2], [1])
    assert place("energy", FREE, [1, 0], 8) == ([1, 2], [2, 6])
    assert place("energy", FREE, [1, 0], 12) == ([1, 2, 3], [3, 6, 3])


def test_no_fit_returns_none() -> None:
    for name in ALLOCATORS:
        assert place(name, FREE, [1, 1], 5) is None
        assert place(name, FREE, [9, 0], 1) is None


def test_cpu_only_job_leaves_the_gpu_node_to_the_gpu_job() -> None:
    """The thesis §3.4.2 situation: with best-fit the CPU job avoids the GPU node."""
    plat = Platform(resources=("cores", "gpu"), capacity=np.array([[4, 1], [4, 0]]),
                    node_names=("A", "B"))
    wl = Workload.from_columns(submit=[0, 0], runtime=[10, 10], walltime=[10, 10], units=[1, 1],
                               req={"cores": [4, 4], "gpu": [0, 1]})
    first = simulate(wl, plat, "order=fifo,select=strict,alloc=first-fit").jobs["start"]
    best = simulate(wl, plat, "order=fifo,select=strict,alloc=best-fit").jobs["start"]
    assert first.tolist() == [0, 10]
    assert best.tolist() == [0, 0]


def test_unknown_allocator() -> None:
    with pytest.raises(ConfigError, match="unknown allocator 'bestfit'"):
        get_allocator("bestfit")


@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(sorted(ALLOCATORS)), data=st.data())
def test_placements_are_valid_and_found_whenever_possible(name: str, data: st.DataObject) -> None:
    n = data.draw(st.integers(1, 6))
    free = np.array(data.draw(st.lists(st.lists(st.integers(0, 6), min_size=2, max_size=2),
                                       min_size=n, max_size=n)), dtype=np.int64)
    req = np.array([data.draw(st.integers(1, 3)), data.draw(st.integers(0, 2))], dtype=np.int64)
    units = data.draw(st.integers(1, 6))
    plat = Platform(resources=("cores", "gpu"), capacity=np.full((n, 2), 6),
                    node_names=tuple(map(str, range(n))),
                    node_power=np.array(data.draw(st.lists(st.floats(50, 300), min_size=n,
                                                           max_size=n))))
    alloc = get_allocator(name)
    alloc.reset(view_on(plat), np.random.default_rng(0))
    got = alloc.place(free, req, units)
    possible = int(units_fitting(free, req).sum()) >= units
    assert (got is not None) == possible
    if got is not None:
        nodes, counts = got
        assert (np.diff(nodes) > 0).all() and (counts > 0).all() and counts.sum() == units
        assert (free[nodes] - counts[:, None] * req >= 0).all()
