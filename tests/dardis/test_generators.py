"""Start-time generators and task-manager policies: hand examples, the distribution of
each generator on a fixed profile, and the pigeonhole guarantee."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from dispatchlab.dispatchers.dardis.generators import (
    carried_weights,
    exponential,
    first,
    get_generator,
    responses,
    uniform,
)
from dispatchlab.dispatchers.dardis.task_manager import POLICIES, max_probability, min_start

ROW = np.array([0.5, 2.0, 0.0, 3.0, 1.0, 0.2])  # feasible (I ≥ 1): starts 1, 3, 4


def test_responses_formula() -> None:
    assert responses(1, 100, 300) == 1
    assert responses(4, 100, 300) == 2  # floor(3·100/300) + 1
    assert responses(301, 10, 300) == 11


def test_carried_weights_by_hand() -> None:
    # start 1 carries start 0 (0.5) and the trailing 0.2; start 4 carries nothing
    w = carried_weights(ROW[None, :], ROW[None, :] >= 1)
    assert np.allclose(w, [[0, 2.7, 0, 3.0, 1.0, 0]])


def test_first_takes_the_earliest_feasible() -> None:
    assert np.flatnonzero(first(ROW[None, :], 2, np.random.default_rng(0))[0]).tolist() == [1, 3]


def _frequencies(gen, n: int = 30_000) -> np.ndarray:  # type: ignore[no-untyped-def]
    chosen = gen(np.tile(ROW, (n, 1)), 1, np.random.default_rng(7))
    assert (chosen.sum(axis=1) == 1).all()
    return chosen.sum(axis=0)


def test_uniform_draws_in_proportion_to_the_index() -> None:
    counts = _frequencies(uniform)
    assert counts[[0, 2, 5]].sum() == 0
    expected = np.array([2.7, 3.0, 1.0]) / 6.7 * counts.sum()
    assert chisquare(counts[[1, 3, 4]], expected).pvalue > 1e-3
    # and it is not the exponential's law
    assert chisquare(_frequencies(exponential(3.0))[[1, 3, 4]], expected).pvalue < 1e-6


def test_exponential_draws_in_proportion_to_index_times_decay() -> None:
    counts = _frequencies(exponential(3.0))
    decay = np.exp(-3.0 * np.arange(6) / 6)
    w = ROW * decay  # start 1 carries start 0 and the trailing start 5
    weights = np.array([w[0] + w[1] + w[5], w[3], w[4]])
    expected = weights / weights.sum() * counts.sum()
    assert chisquare(counts[[1, 3, 4]], expected).pvalue > 1e-3


def test_several_draws_are_distinct_feasible_starts() -> None:
    chosen = uniform(np.tile(ROW, (500, 1)), 2, np.random.default_rng(1))
    assert (chosen.sum(axis=1) == 2).all()
    assert not chosen[:, [0, 2, 5]].any()


def test_policies_by_hand() -> None:
    index = np.array([[1.0, 3.0, 1.0], [0.0, 2.0, 1.0], [1.0, 0.0, 4.0]])
    offered = index >= 1
    rng = np.random.default_rng(0)
    c = min_start(index, offered, 3, rng)
    assert c is not None and c.start == 1 and c.nodes.tolist() == [0]
    assert c.counts.tolist() == [3]
    c = max_probability(index, offered, 5, rng)  # start 2: Σ I = 6 vs start 1: 5
    assert c is not None and c.start == 2
    # largest index first: node 2 hosts 4, then node 0 one (node 1 ties with 0, later)
    assert c.nodes.tolist() == [0, 2] and c.counts.tolist() == [1, 4]
    assert min_start(index, offered, 7, rng) is None


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_pigeonhole_a_job_always_gets_a_common_start(data: st.DataObject) -> None:
    nodes = data.draw(st.integers(1, 12))
    starts = data.draw(st.integers(1, 24))
    units = data.draw(st.integers(1, nodes))
    seed = data.draw(st.integers(0, 2**31))
    rng = np.random.default_rng(seed)
    r = responses(units, starts, nodes)
    need = min(r, starts)
    index = rng.choice([0.0, 0.4, 0.9], size=(nodes, starts))
    for n in range(nodes):  # the window allows it: each node has ≥ `need` feasible starts
        k = data.draw(st.integers(need, starts))
        index[n, rng.choice(starts, size=k, replace=False)] = rng.choice([1.0, 1.5, 3.0], k)
    for name in ("first", "uniform", "exponential"):
        offered = get_generator(name)(index, r, rng)
        assert (offered.sum(axis=1) == need).all()
        for policy in POLICIES.values():
            choice = policy(index, offered, units, rng)
            assert choice is not None, (name, r)
            assert int(choice.counts.sum()) == units
            assert (index[choice.nodes, choice.start] >= choice.counts).all()
