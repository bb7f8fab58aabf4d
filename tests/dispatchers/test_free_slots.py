"""The slot machine's own free slots place exactly as first-fit on the free matrix does."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatchlab import Platform, Workload
from dispatchlab.dispatchers.allocators import first_fit
from dispatchlab.dispatchers.free_slots import FreeSlots
from dispatchlab.engine.state import SystemView
from dispatchlab.platform.platform import units_fitting


def empty_view(plat: Platform) -> SystemView:
    """A view of ``plat`` with no jobs."""
    wl = Workload.from_columns(submit=[], walltime=[], runtime=[], units=[], req={"cores": []})
    return SystemView(wl, plat, np.zeros((0, len(plat.resources)), np.int64))


@settings(max_examples=60, deadline=None)
@given(cores=st.sampled_from([1, 2, 3, 8]), per_unit=st.sampled_from([1, 2]),
       steps=st.lists(st.tuples(st.booleans(), st.integers(1, 12)), min_size=1, max_size=40))
def test_takes_and_gives_back_match_first_fit_on_the_matrix(
        cores: int, per_unit: int, steps: list[tuple[bool, int]]) -> None:
    """Random starts and ends: every start lands where first-fit on the matrix puts it,
    and the slots kept equal the matrix's after every step."""
    plat = Platform.homogeneous(9, {"cores": cores})
    view = empty_view(plat)
    req = np.array([per_unit], np.int64)
    most = int(units_fitting(plat.capacity, req).max())
    if most == 0:
        return
    slots = FreeSlots(view, req, most)
    free = view.free  # the matrix the engine would keep
    running: list[int] = []
    job = 0
    for start, units in steps:
        if start or not running:
            want = first_fit(free, req, units)
            if want is None:
                continue
            d = slots.take(job, units)
            assert (d.nodes.tolist(), d.counts.tolist()) == (want[0].tolist(),
                                                             want[1].tolist())
            free[d.nodes] -= d.counts[:, None] * req
            running.append(job)
            job += 1
        else:
            j = running.pop(len(running) // 2)
            nodes, counts = slots.held[j]
            free[nodes] += np.array(counts)[:, None] * req
            slots.give_back(j)
        kept = units_fitting(free, req)
        assert slots.avail == np.flatnonzero(kept).tolist()
        if not slots.one:
            assert slots.free == kept.tolist()


def test_sync_reads_nodes_that_left() -> None:
    """After a node leaves (its free row is 0), sync drops it from the free slots."""
    view = empty_view(Platform.homogeneous(3, {"cores": 2}))
    slots = FreeSlots(view, np.array([1], np.int64), 2)
    view.free[1] = 0
    view.node_changes += 1
    slots.sync(view)
    assert slots.avail == [0, 2] and slots.changes == view.node_changes
    d = slots.take(7, 3)
    assert d.nodes.tolist() == [0, 2] and d.counts.tolist() == [2, 1]
