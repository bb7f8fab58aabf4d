"""Queue orderings: the scores, the tie-breaks, and the incrementally sorted queue."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatchlab import Platform, Workload
from dispatchlab.dispatchers.rule_based.orderings import JobQueue, get_ordering
from dispatchlab.engine.simulator import map_requests
from dispatchlab.engine.state import SystemView
from dispatchlab.errors import ConfigError
from dispatchlab.estimates import get_estimator


def view_of(wl: Workload, plat: Platform | None = None) -> SystemView:
    """A view on which every job of ``wl`` was submitted."""
    plat = plat or Platform.homogeneous(4, {"cores": 8, "gpu": 2})
    view = SystemView(wl, plat, map_requests(wl, plat))
    view._advance(wl.n_jobs)
    return view


def ranked(order: str, wl: Workload, now: int = 0, plat: Platform | None = None) -> list[int]:
    """Job ids in priority order with every job queued at ``now``."""
    view = view_of(wl, plat)
    view.now = now
    view.queue = dict.fromkeys(range(wl.n_jobs))
    rng = np.random.default_rng(0)
    q = JobQueue(get_ordering(order))
    q.reset(view, rng)
    q.add(view, list(range(wl.n_jobs)))
    est = get_estimator("walltime")
    est.reset(view, rng)
    return [int(wl.job_id[j]) for j in q.order(view, est)]


# Jobs 1..5 (ids), submit, requested time, cores.
WL = Workload.from_columns(
    job_id=[1, 2, 3, 4, 5],
    submit=[0, 10, 10, 20, 30],
    walltime=[100, 50, 50, 400, 10],
    runtime=[100, 50, 50, 400, 10],
    units=[1, 1, 1, 1, 1],
    req={"cores": [4, 1, 2, 8, 1], "gpu": [0, 2, 0, 1, 0]},
    lst=[500, -1, 50, 40, -1],
    queue=["long", "short", "short", "long", "debug"],
    queues={"debug": 600, "short": 3600, "long": 86400},
)


def test_fifo_sjf_ljf_and_ties() -> None:
    assert ranked("fifo", WL) == [1, 2, 3, 4, 5]
    # Jobs 2 and 3 request 50 s and arrive together: job id breaks the tie.
    assert ranked("sjf", WL) == [5, 2, 3, 1, 4]
    assert ranked("ljf", WL) == [4, 1, 2, 3, 5]


def test_edf_uses_lst_else_submit_plus_ewt() -> None:
    # Deadlines: 1 → 500, 2 → 10 + 3600, 3 → 50, 4 → 40, 5 → 30 + 600.
    assert ranked("edf", WL) == [4, 3, 1, 5, 2]


def test_prb_orders_by_expected_wait_then_demand() -> None:
    # ewt: 5 → 600 (debug), 2 and 3 → 3600, 1 and 4 → 86400.
    # Demand (cores/32 + gpu/8) × requested time: job 2 = (1/32 + 2/8)·50 = 14.06,
    # job 3 = (2/32)·50 = 3.125, job 1 = (4/32)·100 = 12.5, job 4 = (8/32 + 1/8)·400 = 150.
    assert ranked("prb", WL) == [5, 3, 2, 1, 4]


def test_resource_orderings() -> None:
    assert ranked("most:gpu", WL) == [2, 4, 1, 3, 5]
    assert ranked("least:cores", WL) == [2, 5, 3, 1, 4]
    with pytest.raises(ConfigError, match="unknown resource 'mic'"):
        ranked("most:mic", WL)


def test_f1_score() -> None:
    score = {
        j: math.log10(r) * n + 870 * math.log10(max(s, 1))
        for j, s, r, n in zip([1, 2, 3, 4, 5], [0, 10, 10, 20, 30], [100, 50, 50, 400, 10],
                              [4, 1, 2, 8, 1], strict=True)
    }
    expected = sorted(score, key=lambda j: (score[j], j))
    assert ranked("f1", WL) == expected


def test_dynamic_scores_at_a_given_time() -> None:
    now = 130
    w = {j: now - s for j, s in zip([1, 2, 3, 4, 5], [0, 10, 10, 20, 30], strict=True)}
    r = dict(zip([1, 2, 3, 4, 5], [100, 50, 50, 400, 10], strict=True))
    n = dict(zip([1, 2, 3, 4, 5], [4, 1, 2, 8, 1], strict=True))
    wfp3 = {j: -((w[j] / r[j]) ** 3) * n[j] for j in w}
    uni = {j: -w[j] / (math.log2(max(n[j], 2)) * r[j]) for j in w}
    slowdown = {j: -(w[j] + r[j]) / r[j] for j in w}
    for name, score in (("wfp3", wfp3), ("uni", uni), ("slowdown", slowdown)):
        assert ranked(name, WL, now) == sorted(score, key=lambda j: (score[j], j)), name


def test_dynamic_order_changes_with_time() -> None:
    # WFP3 at the arrival instant ranks by submit order (all scores 0); later the job that
    # waited long relative to its request comes first.
    wl = Workload.from_columns(submit=[0, 0], walltime=[1000, 10], runtime=[1000, 10],
                               units=[1, 1], req={"cores": [1, 1]})
    assert ranked("wfp3", wl, now=0) == [1, 2]
    assert ranked("wfp3", wl, now=50) == [2, 1]


def test_unknown_ordering_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError, match=r"unknown ordering 'sjfx'.*wfp3"):
        get_ordering("sjfx")


@settings(max_examples=40, deadline=None)
@given(order=st.sampled_from(["fifo", "sjf", "ljf", "edf", "prb", "f1", "most:cores"]),
       data=st.data())
def test_incremental_queue_equals_full_sort(order: str, data: st.DataObject) -> None:
    n = data.draw(st.integers(1, 40))
    wl = Workload.from_columns(
        submit=np.sort(data.draw(st.lists(st.integers(0, 20), min_size=n, max_size=n))),
        walltime=data.draw(st.lists(st.integers(1, 5), min_size=n, max_size=n)),
        runtime=[1] * n,
        units=data.draw(st.lists(st.integers(1, 3), min_size=n, max_size=n)),
        req={"cores": [1] * n},
    )
    view = view_of(wl)
    rng = np.random.default_rng(0)
    q = JobQueue(get_ordering(order))
    q.reset(view, rng)
    keys = get_ordering(order).keys(view, np.arange(n))
    queued: set[int] = set()
    est = get_estimator("walltime")
    est.reset(view, rng)
    for j in range(n):
        q.add(view, [j])
        queued.add(j)
        if data.draw(st.booleans()) and queued:
            gone = data.draw(st.sampled_from(sorted(queued)))
            q.remove(gone)
            queued.discard(gone)
        expect = sorted(queued, key=lambda i: (*(k[i] for k in keys), i))
        assert q.order(view, est) == expect
