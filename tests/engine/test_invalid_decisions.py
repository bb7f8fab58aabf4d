"""Every kind of wrong decision is refused with a message naming job, node and resource."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest

from dispatchlab import Platform, simulate
from dispatchlab.dispatchers.base import BaseDispatcher
from dispatchlab.engine.decisions import Decision, Start, WakeAt
from dispatchlab.engine.events import Events
from dispatchlab.engine.state import SystemView
from dispatchlab.errors import DispatchlabError, InfeasibleJob, InvalidDecision
from tests.conftest import jobs


class Scripted(BaseDispatcher):
    """Returns whatever the test's function builds from the view."""

    name = "scripted"

    def __init__(self, fn: Callable[[SystemView, Events], Sequence[Decision]]):
        self.fn = fn

    def decide(self, view: SystemView, events: Events) -> Sequence[Decision]:
        return self.fn(view, events)


def arr(*v: int) -> np.ndarray:
    return np.array(v, dtype=np.int64)


PLAT = Platform(resources=("cores", "gpu"), capacity=np.array([[4, 0], [4, 2]]),
                node_names=("c0", "g0"))


@pytest.mark.parametrize(
    ("decision", "message"),
    [
        (Start(0, arr(0), arr(3)), "needs 2 units"),
        (Start(0, arr(0, 0), arr(1, 1)), "strictly increasing"),
        (Start(0, arr(5), arr(2)), "out of range"),
        (Start(0, arr(), arr()), "non-empty"),
        (Start(7, arr(0), arr(2)), "unknown index 7"),
    ],
)
def test_malformed_starts(decision: Start, message: str) -> None:
    wl = jobs((0, 10, 10, 2))
    disp = Scripted(lambda v, e: [decision] if v.queue else [])
    with pytest.raises(InvalidDecision, match=message):
        simulate(wl, "nodes=2,cores=4", disp)


def test_over_capacity_names_node_and_resource() -> None:
    from dispatchlab import Workload

    wl = Workload.from_columns(submit=[0], runtime=[5], walltime=[5], units=[1],
                               req={"cores": [1], "gpu": [1]})
    disp = Scripted(lambda v, e: [Start(0, arr(0), arr(1))] if v.queue else [])
    with pytest.raises(InvalidDecision, match=r"needs 1 gpu on node c0, 0 free"):
        simulate(wl, PLAT, disp)


def test_starting_a_running_job_twice() -> None:
    wl = jobs((0, 10, 10, 1))
    disp = Scripted(lambda v, e: [Start(0, arr(0), arr(1)), Start(0, arr(1), arr(1))]
                    if v.queue else [])
    with pytest.raises(InvalidDecision, match="it is running"):
        simulate(wl, "nodes=2,cores=1", disp)


def test_wake_in_the_past() -> None:
    wl = jobs((5, 10, 10, 1))
    disp = Scripted(lambda v, e: [WakeAt(v.now)])
    with pytest.raises(InvalidDecision, match="not after now"):
        simulate(wl, "nodes=1,cores=1", disp)


def test_lazy_dispatcher_is_reported() -> None:
    wl = jobs((0, 10, 10, 1))
    with pytest.raises(DispatchlabError, match="left 1 job"):
        simulate(wl, "nodes=1,cores=1", Scripted(lambda v, e: []))


def test_wake_timer_gives_a_second_chance() -> None:
    wl = jobs((0, 10, 10, 1))

    def fn(v: SystemView, e: Events) -> list[Decision]:
        if v.now < 100:
            return [WakeAt(100)]
        return [Start(0, arr(0), arr(1))] if v.queue else []

    res = simulate(wl, "nodes=1,cores=1", Scripted(fn))
    assert res.jobs["start"].tolist() == [100]


def test_job_larger_than_the_machine() -> None:
    wl = jobs((0, 10, 10, 1), (0, 10, 10, 9))
    with pytest.raises(InfeasibleJob, match="job 2 needs 9 unit"):
        simulate(wl, "nodes=2,cores=4", "fifo")
    res = simulate(wl, "nodes=2,cores=4", "fifo", on_infeasible="reject")
    assert res.jobs["rejected"].tolist() == [False, True]
    assert "hosts at most 8" in res.jobs["reject_reason"].iloc[1]
    assert res.summary["rejected"] == 1


def test_request_for_a_resource_the_platform_lacks() -> None:
    from dispatchlab import Workload

    wl = Workload.from_columns(submit=[0], runtime=[5], walltime=[5], units=[1],
                               req={"cores": [1], "mic": [1]})
    with pytest.raises(InfeasibleJob, match="requests 'mic'"):
        simulate(wl, "nodes=2,cores=4", "fifo")


def test_unit_no_node_configuration_can_host() -> None:
    from dispatchlab import Workload

    plat = Platform(resources=("cores", "gpu", "mic"),
                    capacity=np.array([[16, 2, 0], [16, 0, 2]]), node_names=("g", "m"))
    wl = Workload.from_columns(submit=[0, 0], runtime=[5, 5], walltime=[5, 5], units=[1, 1],
                               req={"cores": [1, 32], "gpu": [1, 0], "mic": [1, 0]})
    res = simulate(wl, plat, "fifo", on_infeasible="reject")
    reasons = res.jobs["reject_reason"].tolist()
    assert "no node has cores and gpu and mic together" in reasons[0]
    assert "no node has cores=32 (largest node has 16)" in reasons[1]
