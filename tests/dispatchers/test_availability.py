"""Resource-time availabilities against a brute-force second-by-second model."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatchlab.dispatchers.allocators import get_allocator
from dispatchlab.dispatchers.availability import NodeAvailability, SlotAvailability
from dispatchlab.engine.compiled.compiled_ops import (
    python_slot_availability_ops,
    slot_availability_ops,
)

HORIZON = 60


def brute_earliest(free: np.ndarray, need: int, dur: int, now: int) -> int:
    """First t ≥ now with ``need`` free over [t, t + dur) in a per-second array."""
    for t in range(now, len(free)):
        if (free[t:t + dur] >= need).all():
            return t
    raise AssertionError("horizon too short")


@pytest.mark.parametrize("ops", [slot_availability_ops, python_slot_availability_ops])
@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_slot_availability_matches_a_per_second_model(
        ops: Callable[[], SimpleNamespace], data: st.DataObject) -> None:
    """The compiled operations on arrays and the plain Python ones on lists alike."""
    total = data.draw(st.integers(1, 6))
    units = list(range(total + 1))  # job j needs j slots
    avail = SlotAvailability(total, units, ops())
    model = np.full(4 * HORIZON, total)
    held: list[tuple[int, int, int]] = []
    now = 0
    for _ in range(data.draw(st.integers(1, 15))):
        action = data.draw(st.sampled_from(["reserve", "give", "advance"]))
        if action == "reserve":
            need = data.draw(st.integers(1, total))
            dur = data.draw(st.integers(1, 15))
            before = data.draw(st.one_of(st.none(), st.integers(now, HORIZON)))
            found = avail.earliest(need, dur, before)
            expect = brute_earliest(model, need, dur, now)
            if before is not None and expect >= before:
                assert found is None
                continue
            assert found == (expect, need)
            avail.take(need, expect, expect + dur, need)
            model[expect:expect + dur] -= need
            held.append((expect, expect + dur, need))
        elif action == "give" and held:
            t0, t1, need = held.pop(data.draw(st.integers(0, len(held) - 1)))
            t0 = max(t0, now)
            if t1 > t0:
                avail.give(need, t0, t1, need)
                model[t0:t1] += need
        elif action == "advance":
            now = data.draw(st.integers(now, HORIZON))
            avail.advance(now)
        # The availability is a faithful, minimal step function of the model from now on.
        times = avail.times
        assert times[0] == now
        for k, t in enumerate(times):
            end = times[k + 1] if k + 1 < len(times) else len(model)
            assert (model[t:end] == avail.free[k]).all()
            if k:
                assert avail.free[k] != avail.free[k - 1]


def test_node_profile_pins_reservations_to_nodes() -> None:
    # Two 4-core nodes; job 0 = 2 units of 3 cores, job 1 = 1 unit of 2 cores.
    cap = np.array([[4], [4]])
    req = np.array([[3], [2]])
    alloc = get_allocator("first-fit")
    avail = NodeAvailability(cap, req, [2, 1], alloc)
    found = avail.earliest(0, 10)
    assert found is not None
    t, (nodes, counts) = found
    assert (t, nodes.tolist(), counts.tolist()) == (0, [0, 1], [1, 1])
    avail.take(0, 0, 10, (nodes, counts))
    # One core is left on each node: job 1 (2 cores on one node) must wait until 10 —
    # although two cores are free in total.
    found = avail.earliest(1, 5)
    assert found is not None
    t, (nodes, counts) = found
    assert (t, nodes.tolist(), counts.tolist()) == (10, [0], [1])
    avail.take(1, 10, 15, (nodes, counts))
    assert avail.times == [0, 10, 15]
    assert avail.free[:, :, 0].tolist() == [[1, 1], [2, 4], [4, 4]]
    # Job 1 again, but only if it can start before 10: impossible.
    assert avail.earliest(1, 5, before=10) is None
    avail.give(0, 0, 10, (np.array([0, 1]), np.array([1, 1])))
    found = avail.earliest(1, 5, before=10)
    assert found is not None and found[0] == 0 and found[1][0].tolist() == [0]
    avail.advance(12)
    assert avail.times == [12, 15] and avail.free[:, :, 0].tolist() == [[2, 4], [4, 4]]


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_node_profile_matches_a_per_second_model(data: st.DataObject) -> None:
    n_nodes = data.draw(st.integers(1, 3))
    cap = np.array(data.draw(st.lists(st.lists(st.integers(1, 4), min_size=2, max_size=2),
                                      min_size=n_nodes, max_size=n_nodes)), dtype=np.int64)
    kinds = 4
    req = np.array(data.draw(st.lists(st.tuples(st.integers(1, 2), st.integers(0, 2)),
                                      min_size=kinds, max_size=kinds)), dtype=np.int64)
    units = data.draw(st.lists(st.integers(1, 3), min_size=kinds, max_size=kinds))
    alloc = get_allocator("first-fit")
    avail = NodeAvailability(cap, req, units, alloc)
    model = np.repeat(cap[None, :, :], 4 * HORIZON, axis=0)  # second × node × resource
    for _ in range(data.draw(st.integers(1, 10))):
        job = data.draw(st.integers(0, kinds - 1))
        dur = data.draw(st.integers(1, 12))
        before = data.draw(st.one_of(st.none(), st.integers(0, HORIZON)))
        per_node = (model // np.maximum(req[job], 1)).min(axis=2, where=req[job] > 0,
                                                           initial=1 << 30)
        expect = next((t for t in range(len(model) - dur)
                       if per_node[t:t + dur].min(axis=0).sum() >= units[job]), None)
        if expect is None:
            continue  # the job never fits this platform
        found = avail.earliest(job, dur, before)
        if before is not None and expect >= before:
            assert found is None
            continue
        assert found is not None and found[0] == expect
        nodes, counts = found[1]
        window = model[expect:expect + dur, nodes] - counts[None, :, None] * req[job]
        assert (window >= 0).all()
        avail.take(job, expect, expect + dur, (nodes, counts))
        model[expect:expect + dur, nodes] -= counts[:, None] * req[job]
    for k, t in enumerate(avail.times):
        end = avail.times[k + 1] if k + 1 < len(avail.times) else len(model)
        assert (model[t:end] == avail.free[k]).all()
