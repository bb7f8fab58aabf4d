"""Slurm's priorities computed by hand (priority_multifactor.c, fair_tree.c,
priority_basic.c) against :mod:`dispatchlab.dispatchers.slurm.priority`."""

from __future__ import annotations

import pytest

from dispatchlab.dispatchers.slurm.priority import TOP_PRIORITY, Priorities, PrioritySettings
from dispatchlab.dispatchers.slurm.select import choose_nodes


def prio(**kw: object) -> Priorities:
    settings = PrioritySettings(kind="multifactor", **kw)  # type: ignore[arg-type]
    return Priorities(settings, n_nodes=4, cluster_cpus=16, part_norm=[1.0, 0.5])


def test_multifactor_age_size_partition():
    p = prio(weight_age=1000, weight_jobsize=500, weight_partition=100, max_age=1000)
    # age 250/1000 → 250; size (1/4 + 4/16)/2 = 0.25 → 125; partition 0.5 → 50
    assert p.multifactor(submit=0, now=250, cpus=4, part=1, user=0) == 425
    # age saturates at PriorityMaxAge
    assert p.multifactor(submit=0, now=5000, cpus=4, part=1, user=0) == 1175


def test_favor_small():
    p = prio(weight_jobsize=500, favor_small=True)
    # ((4-1)/4 + (16-4)/16)/2 = 0.75 → 375
    assert p.multifactor(submit=0, now=0, cpus=4, part=0, user=0) == 375


def test_priority_is_at_least_one_and_truncated():
    assert prio().multifactor(0, 0, 4, 0, 0) == 1
    p = prio(weight_age=10, max_age=3)  # 10 × 1/3 = 3.33 → 3
    assert p.multifactor(submit=0, now=1, cpus=1, part=0, user=0) == 3


def test_basic_is_first_come_first_served():
    p = Priorities(PrioritySettings(), 4, 16, [1.0])
    for j in range(3):
        p.on_submit(j, submit=j, now=j, cpus=1, part=0, user=0)
    assert [p.value[j] for j in range(3)] == [TOP_PRIORITY - 1, TOP_PRIORITY - 2,
                                             TOP_PRIORITY - 3]


def test_fair_tree_ranks_users_by_shares_over_usage():
    p = prio(weight_fairshare=1000)
    p.usage = {0: 100.0, 1: 300.0, 2: 0.0}
    p._fair_tree()
    # levels: user 2 inf, user 0 (1/3)/(1/4) = 1.33, user 1 (1/3)/(3/4) = 0.44
    assert p.fs_factor == {2: 1.0, 0: pytest.approx(2 / 3), 1: pytest.approx(1 / 3)}
    p.usage = {0: 100.0, 1: 100.0, 2: 0.0}
    p._fair_tree()  # ties share the rank of the first of them
    assert p.fs_factor == {2: 1.0, 0: pytest.approx(2 / 3), 1: pytest.approx(2 / 3)}


def test_classic_fair_share_without_fair_tree():
    p = prio(weight_fairshare=1000, fair_tree=False)
    p.usage = {0: 100.0, 1: 300.0, 2: 0.0}
    p._fair_tree()
    # 2^(-U/S), S = 1/3: user 0 2^(-0.75), user 1 2^(-2.25), user 2 1
    assert p.fs_factor == {0: pytest.approx(2 ** -0.75), 1: pytest.approx(2 ** -2.25),
                           2: 1.0}
    assert p.multifactor(submit=0, now=0, cpus=1, part=0, user=1) == int(1000 * 2 ** -2.25)


def test_usage_decays_with_the_half_life():
    p = prio(decay_half_life=100)
    d = 1 - 0.693 / 100
    p.usage = {0: 1000.0}
    p.decay_all(100)
    assert p.usage[0] == pytest.approx(1000 * d ** 100)
    # about half after one half-life (Slurm linearizes ln 2: 498.9, not 500)
    assert p.usage[0] == pytest.approx(500, rel=5e-3)
    # a 2-CPU job running 0..500 charged for the period (300, 600]: 200 s × 2 × d^200
    p.usage = {0: 0.0}
    p.charge(0, cpus=2, start=0, end=500, period_start=300, period_end=600)
    assert p.usage[0] == pytest.approx(400 * d ** 200)


@pytest.mark.parametrize(("room", "units", "expected"), [
    ([4, 4, 0, 2, 4], 2, {3: 2}),        # best fit single node: the smallest that holds it
    ([4, 4, 0, 2, 4], 5, {3: 2, 4: 3}),  # the smallest run holding it (6 < 8), in order
    ([4, 4, 0, 2, 3], 6, {0: 4, 1: 2}),  # only run 0-1 holds 6
    ([1, 1, 0, 1], 3, {0: 1, 1: 1, 3: 1}),  # no run holds it: largest run first
    ([1, 0], 2, None),
])
def test_cons_tres_node_choice(room, units, expected):
    assert choose_nodes(room, units) == expected


def test_node_choice_stops_at_max_nodes():
    assert choose_nodes([1, 1, 1, 1], 3, max_nodes=3) == {0: 1, 1: 1, 2: 1}
    assert choose_nodes([1, 1, 1, 1], 3, max_nodes=2) is None
    assert choose_nodes([1, 0, 3], 3, max_nodes=1) == {2: 3}
