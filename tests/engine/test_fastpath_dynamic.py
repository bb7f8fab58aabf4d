"""Dynamic orderings (``wfp3``, ``uni``, ``slowdown``) run compiled
(:mod:`dispatchlab.dispatchers.rule_based.compiled.dynamic_order`) and give exactly the
general loop's run (``assert_same``: every segment, plan, sample, decision point, summary
entry), with strict, EASY (any depth) and ``easy-power`` selection, on a fixed machine, under
a cap and with nodes leaving; the scores are the general loop's to the last bit (IEEE operations,
``uni``'s ``log2`` taken from numpy per job, ``wfp3`` cubing by products in both)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dispatchlab import Platform, Workload, simulate
from dispatchlab.dispatchers.rule_based.compiled.dynamic_order import (
    SCORES,
    order_queue,
    order_work,
)
from dispatchlab.dispatchers.rule_based.compiled.kernel import AVAILABLE
from dispatchlab.dispatchers.rule_based.compiled_scores import score_terms
from dispatchlab.dispatchers.rule_based.orderings import JobQueue, get_ordering
from dispatchlab.engine.scenario import Change, Scenario
from dispatchlab.engine.simulator import map_requests
from dispatchlab.engine.state import SystemView
from dispatchlab.errors import ConfigError
from dispatchlab.estimates.base import WalltimeEstimate
from dispatchlab.platform.power import GENERIC
from dispatchlab.platform.resolve import resolve_platform
from dispatchlab.workload import SwfOptions, load_swf
from tests.conftest import jobs, shared_trace
from tests.engine.test_fastpath import assert_same
from tests.engine.test_fastpath_power import draw_powered_jobs

ORDERS = tuple(SCORES)
#: The compiled loops' tests (the order's own run as plain Python).
compiled = pytest.mark.skipif(not AVAILABLE, reason="Numba disabled")
SELECTIONS = ("strict", "easy", "easy,depth=2", "easy-power")


def _view(wl: Workload, plat: Platform, now: int) -> SystemView:
    view = SystemView(wl, plat, map_requests(wl, plat))
    view.jobs.known = wl.n_jobs
    view.now = now
    return view


class _Estimates(WalltimeEstimate):
    """The requested time, or (``real``) the real-duration estimate's values."""

    def __init__(self, wl: Workload, real: bool) -> None:
        self.values = np.maximum(np.minimum(wl.runtime, wl.walltime) if real else wl.walltime,
                                 1).tolist()

    def estimate(self, job: int) -> int:
        return int(self.values[job])


@st.composite
def queues(draw: st.DrawFn) -> tuple[Workload, int, np.ndarray]:
    """Jobs with few distinct submit times, requested times and sizes (many equal scores),
    a decision time and a queue of them in any order."""
    n = draw(st.integers(1, 60))
    submit = sorted(draw(st.lists(st.sampled_from([0, 0, 7, 100, 3600, 86_400]), min_size=n,
                                  max_size=n)))
    walltime = draw(st.lists(st.sampled_from([1, 60, 120, 3600, 7200, 123_457]), min_size=n,
                             max_size=n))
    runtime = [draw(st.integers(0, w + 10)) for w in walltime]
    units = draw(st.lists(st.sampled_from([1, 2, 3, 8, 16, 64]), min_size=n, max_size=n))
    wl = jobs(*zip(submit, runtime, walltime, units, strict=True))
    now = submit[-1] + draw(st.sampled_from([0, 1, 59, 3600, 1_000_003]))
    queue = np.array(draw(st.permutations(range(n))), np.int64)[:draw(st.integers(1, n))]
    return wl, now, queue


@settings(max_examples=300, deadline=None)
@given(case=queues(), order=st.sampled_from(ORDERS), real=st.booleans())
def test_the_queue_is_ordered_as_jobqueue_orders_it(case: tuple[Workload, int, np.ndarray],
                                                    order: str, real: bool) -> None:
    """The compiled order (run here as plain Python) is JobQueue's, ties by job index; the
    ``uni`` and ``slowdown`` scores are numpy's to the last bit."""
    wl, now, queue = case
    plat = Platform.homogeneous(2, {"cores": 64})
    view = _view(wl, plat, now)
    view.queue = {int(j): None for j in queue}  # (JobQueue reads its keys)
    est = _Estimates(wl, real)
    estimate = np.array([est.estimate(j) for j in range(wl.n_jobs)], np.int64)
    ordering = get_ordering(order)
    jq = JobQueue(ordering)
    jq.reset(view, np.random.default_rng(0))
    expected = jq.order(view, est)
    code = SCORES[order]
    a, b = score_terms(code, view, estimate)
    q_job = queue.copy()
    q_rank = np.zeros_like(q_job)
    work = order_work(wl.n_jobs, code)
    order_queue(code, now, q_job, q_rank, len(q_job), wl.submit, a, b, work)
    assert q_job.tolist() == expected
    assert q_rank.tolist() == expected
    ours = work[0][:len(queue)]
    bits = ordering.scores(view, np.array(expected, np.int64), est)
    assert ours.tobytes() == bits.tobytes()  # bit for bit, -0.0 included


def test_numpys_cube_is_not_numbas_and_the_ordering_takes_neither() -> None:
    """Why ``wfp3`` cubes by two products: numpy's ``** 3`` (its own ``pow``, SIMD on some
    processors) is not even alike for ``x`` and ``2x``; products are, and are what the
    ordering computes. A tie ``(2x)³·1 = x³·8`` then breaks by job index in both loops."""
    rng = np.random.default_rng(5)
    x = rng.integers(1, 10**8, 100_000) / rng.integers(1, 10**6, 100_000).astype(np.float64)
    assert np.array_equal((2 * x) * (2 * x) * (2 * x), 8 * (x * x * x))
    wl = jobs((0, 50, 50, 8), (0, 10, 50, 8), (0, 10, 25, 1), (0, 10, 50, 8), (50, 5, 5, 1))
    plat = Platform.homogeneous(8, {"cores": 1})
    view = _view(wl, plat, 50)
    scores = get_ordering("wfp3").scores(view, np.arange(4), WalltimeEstimate())
    assert scores[1] == scores[2] == scores[3] == -8.0  # x = 1, n = 8 and x = 2, n = 1
    if AVAILABLE:
        assert_same(wl, plat, "wfp3")


@st.composite
def dynamic_runs(draw: st.DrawFn) -> tuple[Workload, Platform, dict[str, object], str]:
    """A small node-model machine, maybe a cap (fixed or varying) and nodes leaving, a
    dynamic ordering with strict, EASY or easy-power selection."""
    wl, plat, spec, n_nodes, cores = draw_powered_jobs(draw)
    kw: dict[str, object] = {}
    full = n_nodes * spec.idle + int(wl.units.max()) * (spec.core_first
                                                         + (cores - 1) * spec.core)
    steps = [0.0, 0.5, 7.5, 40.0]
    if draw(st.booleans()):
        kw["power_cap"] = full + draw(st.sampled_from(steps))
    rows = []
    for _ in range(draw(st.integers(0, 6))):
        t = draw(st.integers(0, 80))
        if "power_cap" in kw and draw(st.booleans()):
            rows.append(Change(t, "power_cap", full * draw(st.sampled_from([0.3, 0.7, 1.0]))
                               + draw(st.sampled_from(steps))))
        else:
            rows.append(Change(t, "alive_nodes", float(draw(st.integers(1, n_nodes)))))
    if rows:
        rows.append(Change(90, "alive_nodes", float(n_nodes)))  # in the end every job runs
        if "power_cap" in kw:
            rows.append(Change(90, "power_cap", full + 1.0))
        kw["scenario"] = Scenario(rows, source="drawn")
    order = draw(st.sampled_from(ORDERS))
    selection = draw(st.sampled_from(SELECTIONS))
    estimate = draw(st.sampled_from(["", ",estimate=real"]))
    return wl, plat, kw, f"order={order},select={selection}{estimate}"


@pytest.mark.slow
@compiled
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=dynamic_runs())
def test_random_runs(case: tuple[Workload, Platform, dict[str, object], str]) -> None:
    wl, plat, kw, dispatcher = case
    assert_same(wl, plat, dispatcher, **kw)


@pytest.fixture(scope="module")
def kth() -> Workload:
    return load_swf(shared_trace("KTH-SP2-1996-2.1-cln.swf.gz"), SwfOptions(limit=1500))


@compiled
@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("selection", ["strict", "easy", "easy,depth=3"])
def test_kth_slice(kth: Workload, order: str, selection: str) -> None:
    assert_same(kth, "nodes=100,cores=1", f"order={order},select={selection}")


@compiled
@pytest.mark.parametrize("order", ORDERS)
def test_kth_slice_nodes_leaving_and_a_cap(kth: Workload, order: str) -> None:
    plat = resolve_platform("nodes=100,cores=1").with_node_model(GENERIC)
    low = 100 * GENERIC.idle + int(kth.units.max()) * GENERIC.core_first + 3.0
    walk = ("gen:random-walk:what=alive_nodes,mean=90,range=10,step=3,period=3600,"
            "until=9000000,seed=5")
    cap = (f"gen:random-walk:what=power_cap,mean={low + 700},range=700,step=350,"
           "period=7200,until=9000000,seed=2")
    assert_same(kth, plat, f"order={order},select=easy", scenario=[walk, cap])
    assert_same(kth, plat, f"order={order},select=easy-power", power_cap=low + 400)


@compiled
def test_what_stays_general() -> None:
    wl = jobs((0, 5, 5, 2), (1, 3, 4, 1), (2, 4, 4, 2))
    with pytest.raises(ConfigError, match=r"dynamic \(with nonstrict"):
        simulate(wl, "nodes=2,cores=2", "order=wfp3,select=nonstrict", loop="compiled")
    assert simulate(wl, "nodes=2,cores=2", "order=uni,select=easy").summary["loop"] == \
        "compiled"
    plat = resolve_platform("nodes=2,cores=2").with_node_model(GENERIC)
    # (idle-node power-off around a dynamic ordering is compiled since 2026-11-27:
    # tests/engine/test_fastpath_poweroff_scenario.py)
    assert simulate(wl, plat, "order=wfp3,select=easy+poweroff:5",
                    loop="compiled").summary["loop"] == "compiled"


# ---- the static orderings the plan always took, proven here: keys of other columns ----

STATIC_ORDERS = ("edf", "prb", "queue", "profit", "most:cores", "least:mem", "f1")


@st.composite
def static_runs(draw: st.DrawFn) -> tuple[Workload, Platform, str]:
    """Small runs whose jobs carry latest start times (some unknown), two queues of
    different expected waits, power figures (some unknown, some 0) and two resources, with
    many equal keys; a static ordering by them with strict, EASY or conservative."""
    n_nodes = draw(st.integers(1, 4))
    plat = Platform.homogeneous(n_nodes, {"cores": draw(st.integers(1, 4)), "mem": 8})
    n = draw(st.integers(1, 30))
    submit = sorted(draw(st.lists(st.sampled_from([0, 0, 1, 5, 30]), min_size=n, max_size=n)))
    walltime = draw(st.lists(st.sampled_from([1, 4, 10, 40]), min_size=n, max_size=n))
    runtime = [draw(st.integers(0, w + 3)) for w in walltime]
    units = draw(st.lists(st.integers(1, n_nodes * 2), min_size=n, max_size=n))
    lst = draw(st.lists(st.sampled_from([-1, -1, 0, 3, 20]), min_size=n, max_size=n))
    queue = draw(st.lists(st.sampled_from(["a", "b"]), min_size=n, max_size=n))
    power = draw(st.lists(st.sampled_from([float("nan"), 0.0, 10.0, 25.0]), min_size=n,
                          max_size=n))
    wl = Workload.from_columns(submit=submit, walltime=walltime, runtime=runtime, units=units,
                               req={"cores": [1] * n, "mem": [2] * n}, lst=lst, queue=queue,
                               queues={"a": 0, "b": 600}, power=power)
    order = draw(st.sampled_from(STATIC_ORDERS))
    selection = draw(st.sampled_from(["strict", "easy", "easy,depth=2", "conservative"]))
    return wl, plat, f"order={order},select={selection}"


@compiled
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=static_runs())
def test_other_static_orderings(case: tuple[Workload, Platform, str]) -> None:
    wl, plat, dispatcher = case
    assert_same(wl, plat, dispatcher, on_infeasible="reject")
