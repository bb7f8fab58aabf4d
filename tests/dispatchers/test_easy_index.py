"""EASY's backfill scan in the general loop skips jobs that cannot start, with the same run.

On unit slots the scan passes over a job asking more units than are free (or, under a
power budget with the node model, more than the least power per unit leaves room for);
on a long queue kept by job index it jumps with a :class:`BackfillIndex`. Both only skip
jobs that cannot start: every run must equal the plain scan's.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dispatchlab.dispatchers.rule_based.selection.easy as easy_module
from dispatchlab import Platform, Workload
from dispatchlab.dispatchers.registry import get_dispatcher
from dispatchlab.dispatchers.rule_based.selection.queue_index import BackfillIndex
from dispatchlab.engine.power_meter import MachinePower
from dispatchlab.engine.recorder import Recorder
from dispatchlab.engine.simulator import Simulator
from dispatchlab.engine.state import SystemView
from dispatchlab.platform.power import GENERIC, NodePowerSpec
from tests.conftest import jobs
from tests.engine.test_fastpath_power import capped_runs


def _run(wl: Workload, plat: Platform | str, dispatcher: str, index_from: int,
         **kw: object) -> Recorder:
    saved = easy_module._INDEX_FROM
    easy_module._INDEX_FROM = index_from
    try:
        if isinstance(plat, str):
            plat = Platform.homogeneous(*_spec(plat))
        return Simulator(wl, plat, get_dispatcher(dispatcher), **kw).run()  # type: ignore[arg-type]
    finally:
        easy_module._INDEX_FROM = saved


def _spec(text: str) -> tuple[int, dict[str, int]]:
    nodes, cores = (int(part.split("=")[1]) for part in text.split(","))
    return nodes, {"cores": cores}


def _same(a: Recorder, b: Recorder) -> None:
    for name in ("job", "t0", "t1", "outcome", "offsets", "nodes", "counts"):
        assert np.array_equal(getattr(a.segments, name), getattr(b.segments, name)), name
    assert np.array_equal(a.planned, b.planned)
    assert bytes(a.decision_at) == bytes(b.decision_at)
    assert bytes(a.samples) == bytes(b.samples)
    assert bytes(a.power_samples) == bytes(b.power_samples)
    assert a.dispatcher_stats == b.dispatcher_stats


def overloaded(n: int, first: int = 9) -> list[tuple[int, int, int, int]]:
    """A long job on ``first`` of 10 slots, then ``n`` jobs of mixed sizes and lengths: a
    long queue, with a few short one-unit jobs that backfill."""
    rows = [(0, 20 * n, 20 * n, first)]
    for k in range(1, n + 1):
        rows.append((k, 5, 5, 1) if k % 37 == 0 else (k, 100 + k % 13, 200, 1 + k % 4))
    return rows


@pytest.mark.parametrize("dispatcher", ["easy", "easy-sjf"])
def test_long_queue_same_run_with_and_without_the_index(dispatcher: str) -> None:
    wl = jobs(*overloaded(600))
    _same(_run(wl, "nodes=10,cores=1", dispatcher, 8),
          _run(wl, "nodes=10,cores=1", dispatcher, 1 << 40))


def test_long_queue_under_a_power_cap_same_run_with_and_without_the_index() -> None:
    wl = jobs(*overloaded(400, first=6))
    plat = Platform.homogeneous(10, {"cores": 1}).with_node_model(GENERIC)
    cap = 10 * GENERIC.idle + 8 * GENERIC.core_first + 1.0  # eight busy nodes at most
    _same(_run(wl, plat, "easy", 8, power_cap=cap),
          _run(wl, plat, "easy", 1 << 40, power_cap=cap))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=capped_runs())
def test_random_capped_runs_same_with_the_index(
        case: tuple[Workload, Platform, float, str]) -> None:
    wl, plat, cap, dispatcher = case
    _same(_run(wl, plat, dispatcher, 1, power_cap=cap),
          _run(wl, plat, dispatcher, 1 << 40, power_cap=cap))


@settings(max_examples=60, deadline=None)
@given(ops=st.lists(st.tuples(st.booleans(), st.integers(0, 40), st.integers(1, 6),
                              st.integers(1, 50)), max_size=60),
       queries=st.lists(st.tuples(st.integers(0, 45), st.integers(0, 7), st.integers(0, 60),
                                  st.integers(0, 7)), min_size=1, max_size=20))
def test_index_finds_the_first_candidate(ops: list[tuple[bool, int, int, int]],
                                         queries: list[tuple[int, int, int, int]]) -> None:
    index = BackfillIndex(41)
    held: dict[int, tuple[int, int]] = {}
    for add, job, units, dur in ops:
        if add:
            index.put(job, units, dur)
            held[job] = (units, dur)
        else:
            index.drop(job)
            held.pop(job, None)
    assert index.count == len(held)
    for first, limit, within, extra in queries:
        want = next((j for j in sorted(held) if j >= first and held[j][0] <= limit
                     and (held[j][0] <= extra or held[j][1] <= within)), -1)
        assert index.next_candidate(first, limit, within, extra) == want


def _placements(n_nodes: int, cores: int, units: int) -> Iterator[tuple[list[int], list[int]]]:
    """Every way of spreading ``units`` units over nodes 0, 1, … (at most ``cores`` each)."""
    def spread(node: int, left: int) -> Iterator[list[int]]:
        if left == 0:
            yield []
            return
        if node == n_nodes:
            return
        for k in range(min(cores, left), -1, -1):
            for rest in spread(node + 1, left - k):
                yield [k, *rest]
    for counts in spread(0, units):
        nodes = [n for n, k in enumerate(counts) if k]
        yield nodes, [k for k in counts if k]


@pytest.mark.parametrize("spec", [GENERIC, NodePowerSpec(idle=50.0, core_first=40.0, core=15.0),
                                  NodePowerSpec(idle=10.0, core_first=5.0, core=2.5)])
@pytest.mark.parametrize("cores", [1, 2, 4])
def test_unit_floor_bounds_every_start(spec: NodePowerSpec, cores: int) -> None:
    plat = Platform.homogeneous(3, {"cores": cores}).with_node_model(spec)
    wl = jobs(*[(0, 10, 10, 1)] * 4)
    req = np.ones((wl.n_jobs, 1), np.int64)
    view = SystemView(wl, plat, req)
    meter = MachinePower(view, req, plat.power_table, None)
    floor = meter.unit_floor(req[0])
    assert floor >= 0
    if cores == 1:  # every unit pays a node's first core: the bound is that
        assert floor == spec.core_first
    for used in range(cores):  # node 0 already running `used` cores of another job
        view.free[0, 0] = cores - used
        for units in range(1, 3 * cores - used + 1):
            for nodes, counts in _placements(3, cores, units):
                if nodes and nodes[0] == 0 and counts[0] > cores - used:
                    continue
                delta = meter.start_delta(0, np.array(nodes), np.array(counts))
                assert delta >= units * floor - 1e-9, (used, nodes, counts, delta, floor)
