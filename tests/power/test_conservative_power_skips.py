"""``conservative-power`` passes over what surely cannot fit — reservations that cannot move
in a compression, candidate windows whose power leaves no room — with the same schedules
as when it tries everything; the segment power it carries over a change is a full pass's."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dispatchlab import Platform, Workload, simulate
from dispatchlab.dispatchers.availability import NodeAvailability
from dispatchlab.dispatchers.rule_based.policy import Policy
from dispatchlab.dispatchers.rule_based.power_availability import PowerAvailability
from dispatchlab.dispatchers.rule_based.selection import ConservativePower
from dispatchlab.metrics.results import Results
from dispatchlab.platform.power import NodePowerSpec
from tests.conftest import jobs
from tests.dispatchers.test_slot_book_ops import blocked_queue
from tests.power.test_conservative_power import capped


@contextmanager
def trying_everything() -> Iterator[None]:
    """Every reservation searched in a compression, every candidate window tried."""
    with mock.patch.object(NodeAvailability, "may_start_before", lambda *a: True), \
            mock.patch.object(PowerAvailability, "window_filter", lambda *a: None):
        yield


def run(wl: Workload, plat: Platform, cap: float, alloc: str) -> Results:
    return simulate(wl, plat, Policy("fifo", ConservativePower(), alloc), power_cap=cap,
                    loop="general")


def same(a: Results, b: Results) -> None:
    ra, rb = a.recorder, b.recorder
    assert ra is not None and rb is not None
    assert a.jobs["start"].tolist() == b.jobs["start"].tolist()
    assert np.array_equal(ra.planned, rb.planned)
    for j in range(len(a.jobs)):
        na, nb = ra.alloc_nodes[j], rb.alloc_nodes[j]
        assert (na is None) == (nb is None)
        if na is not None and nb is not None:
            assert np.array_equal(na, nb)


_carry = PowerAvailability._carry_power


def carried_exactly(self: PowerAvailability, kept: Any, t0: int, t1: int) -> None:
    """The segment power carried over a change, checked against a full pass."""
    _carry(self, kept, t0, t1)
    if kept is not None:
        carried = self.segment_power().copy()
        self._power = None
        assert np.array_equal(carried, self.segment_power())


@pytest.mark.slow
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=capped(), alloc=st.sampled_from(["first-fit", "best-fit", "energy-model"]),
       early=st.integers(0, 3))
def test_skipping_keeps_every_schedule(case: tuple[Workload, Platform, float], alloc: str,
                                       early: int) -> None:
    wl, plat, cap = case
    if early:  # some jobs end before their requested time: compressions
        wl = Workload.from_columns(
            submit=wl.submit, runtime=wl.runtime, units=wl.units, req={"cores": wl.req[:, 0]},
            walltime=wl.walltime + early * (np.arange(wl.n_jobs) % 3))
    with mock.patch.object(PowerAvailability, "_carry_power", carried_exactly):
        got = run(wl, plat, cap, alloc)
    with trying_everything():
        want = run(wl, plat, cap, alloc)
    same(got, want)


def test_compressions_pass_over_reservations_that_cannot_move() -> None:
    # 1-core nodes: 9 of 10 held by a long job, 300 two-node jobs queued behind it, 60
    # one-node jobs ending early on the node left: each early end compresses, and no
    # queued job fits the one node freed
    spec = NodePowerSpec(idle=10.0, core_first=30.0, core=0.0, off=0.0)
    plat = Platform.homogeneous(10, {"cores": 1}).with_node_model(spec)
    wl = jobs(*blocked_queue(300, 60))
    calls = []
    real = PowerAvailability.earliest

    def counted(self: PowerAvailability, job: int, dur: int, before: int | None = None
                ) -> Any:
        calls.append(before)
        return real(self, job, dur, before)

    with mock.patch.object(PowerAvailability, "earliest", counted):
        run(wl, plat, 10 * 10.0 + 10 * 30.0, "first-fit")
    compress_searches = sum(1 for b in calls if b is not None)
    assert len(calls) >= wl.n_jobs  # every job reserved once
    assert compress_searches == 0, compress_searches  # was ~ 60 × 300
