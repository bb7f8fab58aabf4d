"""The job-based heuristic (thesis Alg. 5) on hand-computed and random instances."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatchlab.dispatchers.offline_plan.planner.heuristic import FreeGrid, heuristic
from tests.planning.helpers import check_feasible, instance

#: 2 nodes × 4 cores; (submit, duration, units, cores per unit)
HAND = [(0, 10, 2, 4), (0, 5, 1, 2), (3, 4, 1, 4), (12, 3, 1, 4)]


def test_hand_instance_in_submit_order() -> None:
    inst = instance(HAND)
    s = heuristic(inst, [0, 1, 2, 3])
    assert s is not None
    # A fills both nodes until 10; B then takes half of node 0; C the whole node 1 until
    # 14; D (submitted at 12) finds node 0 half busy until 15 and node 1 free at 14
    assert s.start.tolist() == [0, 10, 10, 14]
    assert s.alloc == [((0, 1), (1, 1)), ((0, 1),), ((1, 1),), ((1, 1),)]


def test_hand_instance_in_reverse_order() -> None:
    inst = instance(HAND)
    s = heuristic(inst, [3, 2, 1, 0])
    assert s is not None
    # D at 12 on node 0, C at 3 on node 0, B at 0 on node 1 (node 0 is taken at 3–7),
    # A needs both nodes whole for 10 s: only after D ends at 15
    assert s.start.tolist() == [15, 0, 3, 12]
    assert s.alloc[1] == ((1, 1),)


def test_pinned_job_and_min_start() -> None:
    inst = instance(HAND)
    s = heuristic(inst, [0, 1, 2, 3], fixed_start=np.array([-1, -1, -1, 20]))
    assert s is not None and s.start[3] == 20
    s2 = heuristic(inst, [0, 1, 2, 3], min_start=np.array([5, 0, 0, 0]))
    assert s2 is not None and s2.start[0] == 5 and s2.start[1] == 0
    # two pinned jobs that cannot share the machine: no schedule
    bad = heuristic(inst, [0, 1, 2, 3], fixed_start=np.array([0, -1, 0, -1]))
    assert bad is None


def test_busy_capacity_and_slots() -> None:
    inst = instance([(0, 90, 1, 4), (30, 61, 1, 4)], nodes=1, step=60)
    # busy: the node fully taken until 100 s → slot 2 (120 s) is the first free one
    inst = type(inst)(**{**inst.__dict__, "busy": ((0, 100, np.array([[4]])),)})
    s = heuristic(inst, [0, 1])
    assert s is not None
    assert s.start.tolist() == [2, 4]  # job 0 holds 2 slots (90 s); job 1 holds 2 slots
    plan = s.to_plan(inst)
    assert plan.starts.tolist() == [120, 240]


def _brute_earliest(free: np.ndarray, release: int, slots: int, units: int, c: int) -> int:
    t = release
    while True:
        window = free[t:t + slots] if t + slots <= len(free) else None
        if window is None:
            return t
        if int((window.min(axis=0)[:, 0] // c).sum()) >= units:
            return t
        t += 1


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 30), st.integers(1, 12), st.integers(1, 3),
                          st.integers(1, 4)), min_size=1, max_size=12),
       st.randoms(use_true_random=False))
def test_random_instances_feasible_and_earliest(jobs, rnd) -> None:
    inst = instance(jobs, nodes=3, cores=4)
    order = list(range(len(jobs)))
    rnd.shuffle(order)
    s = heuristic(inst, order)
    assert s is not None
    check_feasible(inst, s.start, s.alloc)
    # each job started at the earliest slot feasible given the jobs placed before it
    grid = FreeGrid(inst.capacity, length=200)
    for j in order:
        free = grid.free.transpose(2, 1, 0)  # slots × nodes × resources
        want = _brute_earliest(free, int(inst.release_slot[j]), int(inst.slots[j]),
                               int(inst.units[j]), int(inst.req[j, 0]))
        assert s.start[j] == want
        usage = np.zeros_like(inst.capacity)
        for node, u in s.alloc[j]:
            usage[node] = u * inst.req[j]
        grid.take(int(s.start[j]), int(inst.slots[j]), usage)


def test_busy_window_in_the_middle() -> None:
    # node taken over [120, 180): a 2-slot job released at 60 cannot use slots 1–2, so it
    # starts at slot 3; a 1-slot job released at 0 fits at slot 0
    inst = instance([(60, 120, 1, 4), (0, 60, 1, 4)], nodes=1, step=60)
    inst = type(inst)(**{**inst.__dict__, "busy": ((120, 180, np.array([[4]])),)})
    s = heuristic(inst, [0, 1])
    assert s is not None and s.start.tolist() == [3, 0]


def test_overlapping_busy_windows_never_give_negative_room() -> None:
    # two busy windows overfill node 0 over slot 1; the job must go to node 1 or later
    inst = instance([(0, 60, 2, 4)], nodes=2, step=60)
    busy = ((30, 90, np.array([[4], [0]])), (60, 120, np.array([[4], [0]])))
    inst = type(inst)(**{**inst.__dict__, "busy": busy})
    s = heuristic(inst, [0])
    assert s is not None
    assert s.start.tolist() == [2] and s.alloc == [((0, 1), (1, 1))]
