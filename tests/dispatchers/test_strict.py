"""Strict and non-strict list scheduling by hand, and the slot/node choice of the machine."""

from __future__ import annotations

import numpy as np

from dispatchlab import Platform, Workload, simulate
from dispatchlab.dispatchers.allocators import get_allocator
from dispatchlab.dispatchers.machine import NodeMachine, SlotMachine, make_machine
from dispatchlab.engine.simulator import map_requests
from dispatchlab.engine.state import SystemView
from dispatchlab.estimates import get_estimator
from tests.conftest import jobs
from tests.dispatchers.helpers import placement

# 4 cores: A (3 cores) runs; B (2 cores) cannot start; C and D (1 core each) could.
WL = jobs((0, 50, 50, 3), (1, 10, 10, 2), (2, 10, 10, 1), (3, 10, 10, 1))


def test_strict_stops_at_the_first_job_that_waits() -> None:
    assert simulate(WL, "nodes=4,cores=1", "fifo").jobs["start"].tolist() == [0, 50, 50, 50]


def test_nonstrict_skips_it() -> None:
    starts = simulate(WL, "nodes=4,cores=1", "fifo-nonstrict").jobs["start"].tolist()
    # C takes the free core at 2; D waits for it (12); B starts when A ends (50).
    assert starts == [0, 50, 2, 12]


def test_nonstrict_depth() -> None:
    # With depth 1 only the blocked job itself is looked at: nothing passes it.
    starts = simulate(WL, "nodes=4,cores=1", "select=nonstrict,depth=1").jobs["start"]
    assert starts.tolist() == [0, 50, 50, 50]
    starts = simulate(WL, "nodes=4,cores=1", "select=nonstrict,depth=2").jobs["start"]
    assert starts.tolist() == [0, 50, 2, 12]


def _machine(wl: Workload, plat: Platform) -> object:
    view = SystemView(wl, plat, map_requests(wl, plat))
    return make_machine(view, get_allocator("first-fit"), get_estimator("walltime"))


def test_slot_machine_only_when_every_unit_asks_the_same() -> None:
    plat = Platform(resources=("cores", "gpu"), capacity=np.array([[3, 1], [4, 0]]),
                    node_names=("a", "b"))
    same = Workload.from_columns(submit=[0, 0], runtime=[1, 1], walltime=[1, 1], units=[1, 5],
                                 req={"cores": [2, 2]})
    mixed = Workload.from_columns(submit=[0, 0], runtime=[1, 1], walltime=[1, 1], units=[1, 1],
                                  req={"cores": [2, 1], "gpu": [0, 1]})
    m = _machine(same, plat)
    assert isinstance(m, SlotMachine)
    assert m.total == 1 + 2  # a hosts one 2-core unit (3 cores), b two
    assert isinstance(_machine(mixed, plat), NodeMachine)


def test_units_share_nodes_when_capacity_allows() -> None:
    # Three 3-unit jobs of 1 core on two 4-core nodes: first-fit packs 3 on node 0, the
    # second job takes node 0's last core and two of node 1.
    wl = jobs((0, 10, 10, 3), (0, 10, 10, 3), (0, 10, 10, 3))
    res = simulate(wl, "nodes=2,cores=4", "easy")
    assert res.jobs["start"].tolist() == [0, 0, 10]
    assert placement(res, 0) == ([0], [3])
    assert placement(res, 1) == ([0, 1], [1, 2])
