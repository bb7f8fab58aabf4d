"""The compiled loop gives exactly the general loop's results wherever it runs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatchlab import Platform, Workload, simulate
from dispatchlab.dispatchers.rule_based.compiled.kernel import AVAILABLE
from dispatchlab.engine.placements import flat_placements
from dispatchlab.engine.recorder import Segments
from dispatchlab.errors import ConfigError
from dispatchlab.metrics.job_metrics import node_lists
from dispatchlab.metrics.results import Results
from dispatchlab.workload import SwfOptions, load_swf
from tests.conftest import jobs, shared_trace

pytestmark = pytest.mark.skipif(not AVAILABLE, reason="Numba disabled")

DISPATCHERS = ["fifo", "sjf", "ljf", "easy", "easy-sjf", "pbs-fifo-window",
               "order=sjf,select=easy,depth=3,estimate=real", "order=f1,select=easy",
               "conservative", "order=ljf,select=conservative,estimate=real"]
#: Summary entries that are measured times, or name the engine: they differ by design.
TIMED = {"dispatch_time_mean_ms", "dispatch_time_max_ms", "dispatch_time_total_s",
         "dispatch_overhead_pct", "sim_seconds", "jobs_per_second", "loop"}


def assert_same(wl: Workload, platform: str | Platform, dispatcher: str,
                **kwargs: object) -> Results:
    """Run both engines and compare everything they record."""
    fast = simulate(wl, platform, dispatcher, loop="compiled", **kwargs)  # type: ignore[arg-type]
    ref = simulate(wl, platform, dispatcher, loop="general", **kwargs)  # type: ignore[arg-type]
    assert fast.summary["loop"] == "compiled" and ref.summary["loop"] == "general"
    pd.testing.assert_frame_equal(fast.jobs, ref.jobs)
    pd.testing.assert_frame_equal(fast.timeseries, ref.timeseries)
    a, b = fast.recorder, ref.recorder
    assert a is not None and b is not None
    assert np.array_equal(a.planned, b.planned)
    assert bytes(a.samples) == bytes(b.samples)  # every row, also repeated timestamps
    assert list(a.decision_at) == list(b.decision_at)
    assert len(a.decision_cpu) == len(b.decision_cpu)
    assert a.rejected == b.rejected
    assert a.dispatcher_stats == b.dispatcher_stats
    assert a.engine_info == b.engine_info  # the same settings recorded, power included
    # every segment, aborted runs included, in the order the general loop logged them
    assert segment_rows(a.segments, logged=True) == segment_rows(b.segments, logged=True)
    assert bytes(a.node_log) == bytes(b.node_log)
    assert a.failed == b.failed
    for j in range(wl.n_jobs):
        na, nb = a.alloc_nodes[j], b.alloc_nodes[j]
        assert (na is None) == (nb is None)
        if na is not None and nb is not None:
            assert na.dtype == nb.dtype and np.array_equal(na, nb)
            assert np.array_equal(a.alloc_counts[j], b.alloc_counts[j])  # type: ignore[arg-type]
    assert set(fast.summary) == set(ref.summary)
    assert {k: v for k, v in fast.summary.items() if k not in TIMED} == \
        {k: v for k, v in ref.summary.items() if k not in TIMED}
    return fast


def segment_rows(seg: Segments, logged: bool = False) -> list[tuple[object, ...]]:
    """Every segment as a row, by job and start (``logged``: in the order they were logged,
    which every loop does in the order the segments started)."""
    rows = []
    for k in range(len(seg)):
        a, b = int(seg.offsets[k]), int(seg.offsets[k + 1])
        rows.append((int(seg.job[k]), int(seg.t0[k]), int(seg.t1[k]), int(seg.outcome[k]),
                     int(seg.lost[k]), seg.nodes[a:b].tolist(), seg.counts[a:b].tolist(),
                     None if seg.power is None else float(seg.power[k])))
    return rows if logged else sorted(rows, key=lambda r: (r[0], r[1]))


@pytest.mark.parametrize(
    ("trace", "limit", "platform"),
    [
        ("KTH-SP2-1996-2.1-cln.swf.gz", 1500, "nodes=100,cores=1"),
        ("CTC-SP2-1996-3.1-cln.swf.gz", 1500, "nodes=338,cores=1"),
        ("HPC2N-2002-2.2-cln.swf.gz", 1500, "nodes=120,cores=2"),
        ("SDSC-BLUE-2000-4.2-cln.swf.gz", 1500, "nodes=144,cores=8"),
        ("lublin-256-a.swf", 1500, "nodes=32,cores=8"),
    ],
)
def test_real_trace_slices(trace: str, limit: int, platform: str) -> None:
    wl = load_swf(shared_trace(trace), SwfOptions(limit=limit))
    for dispatcher in DISPATCHERS:
        assert_same(wl, platform, dispatcher)


def test_whole_node_units_and_kills() -> None:
    wl = load_swf(shared_trace("KTH-SP2-1996-2.1-cln.swf.gz"),
                  SwfOptions(limit=800, units="nodes", cores_per_node=1))
    assert (wl.runtime > wl.walltime).any()  # some jobs are killed at their wall-time
    for dispatcher in ("fifo", "easy"):
        assert_same(wl, "nodes=100,cores=1", dispatcher)


@st.composite
def slot_instances(draw: st.DrawFn, max_jobs: int = 30) -> tuple[Workload, Platform]:
    """Random runs where every unit asks one vector: coinciding events, run time 0,
    kills at the wall-time, jobs larger than the machine (rejected)."""
    n_nodes = draw(st.integers(1, 5))
    multi = draw(st.booleans())
    resources = ("cores", "mem") if multi else ("cores",)
    cap = np.array([[draw(st.integers(1, 6)) for _ in resources] for _ in range(n_nodes)],
                   dtype=np.int64)
    plat = Platform(resources=resources, capacity=cap,
                    node_names=tuple(f"n{k}" for k in range(n_nodes)), name="random")
    n = draw(st.integers(1, max_jobs))
    submit = np.cumsum(draw(st.lists(st.sampled_from([0, 0, 1, 2, 5, 30]), min_size=n,
                                     max_size=n)))
    walltime = draw(st.lists(st.integers(1, 40), min_size=n, max_size=n))
    runtime = [draw(st.integers(0, w + 5)) for w in walltime]
    units = draw(st.lists(st.integers(1, 8), min_size=n, max_size=n))
    unit = [draw(st.integers(1, 2)) for _ in resources]
    req = {r: [unit[k]] * n for k, r in enumerate(resources)}
    wl = Workload.from_columns(submit=submit, walltime=walltime, runtime=runtime,
                               units=units, req=req)
    return wl, plat


@settings(max_examples=60, deadline=None)
@given(slot_instances(), st.sampled_from([*DISPATCHERS, "order=fifo,select=easy,depth=1"]))
def test_random_slot_workloads(instance: tuple[Workload, Platform], dispatcher: str) -> None:
    wl, plat = instance
    assert_same(wl, plat, dispatcher, on_infeasible="reject")


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(slot_instances(max_jobs=40), st.sampled_from(["fifo", "sjf", "ljf"]),
       st.sampled_from(["walltime", "real"]))
def test_random_conservative_workloads(instance: tuple[Workload, Platform], order: str,
                                       estimate: str) -> None:
    wl, plat = instance
    assert_same(wl, plat, f"order={order},select=conservative,estimate={estimate}",
                on_infeasible="reject")


def test_simultaneous_events_and_zero_runtimes() -> None:
    wl = jobs((0, 5, 5, 2), (0, 0, 5, 1), (0, 3, 2, 2), (2, 0, 1, 4), (2, 4, 9, 1),
              (5, 1, 1, 3), (5, 6, 6, 1), (5, 0, 3, 2))
    for dispatcher in DISPATCHERS:
        assert_same(wl, "nodes=2,cores=2", dispatcher)


def test_backfill_boundaries() -> None:
    """EASY edge cases: a candidate ending exactly at the shadow time, one using exactly
    the extra slots, the head changing without a completion, depth 1."""
    wl = jobs((0, 10, 10, 3), (1, 5, 5, 4), (1, 9, 9, 1), (2, 3, 30, 1), (3, 2, 2, 2),
              (12, 4, 4, 4), (12, 1, 20, 1), (13, 1, 1, 1))
    for dispatcher in ("easy", "pbs-fifo-window", "order=fifo,select=easy,depth=1", "easy-sjf"):
        res = assert_same(wl, "nodes=1,cores=4", dispatcher)
    assert res.summary["dispatcher_stats"]["backfilled"] > 0


def test_auto_picks_the_engine() -> None:
    wl = jobs((0, 5, 5, 2), (1, 3, 4, 1))
    assert simulate(wl, "nodes=2,cores=2", "easy").summary["loop"] == "compiled"
    assert simulate(wl, "nodes=2,cores=2", "conservative").summary["loop"] == "compiled"
    assert simulate(wl, "nodes=2,cores=2", "order=fifo,select=conservative,depth=2"
                    ).summary["loop"] == "compiled"
    assert simulate(wl, "nodes=2,cores=2", "order=wfp3,select=conservative"
                    ).summary["loop"] == "compiled"
    assert simulate(wl, "nodes=2,cores=2", "order=fifo,select=strict,alloc=best-fit"
                    ).summary["loop"] == "general"
    with pytest.raises(ConfigError, match="not first-fit"):
        simulate(wl, "nodes=2,cores=2", "order=fifo,select=strict,alloc=best-fit",
                 loop="compiled")
    with pytest.raises(ConfigError, match="unknown loop"):
        simulate(wl, "nodes=2,cores=2", "fifo", loop="fast")


def test_placements_and_node_lists() -> None:
    """The vectorised node-list formatting equals the per-job one, in both record forms."""
    names = tuple(f"n{k}" for k in range(40))
    rng = np.random.default_rng(3)
    per_job: list[tuple[np.ndarray, np.ndarray] | None] = []
    for _ in range(200):
        if rng.random() < 0.2:
            per_job.append(None)
            continue
        k = int(rng.integers(1, 25))
        nodes = np.sort(rng.choice(40, size=k, replace=False)).astype(np.int32)
        per_job.append((nodes, rng.integers(1, 4, size=k).astype(np.int32)))
    sizes = np.array([0 if p is None else len(p[0]) for p in per_job])
    flat_n = np.concatenate([p[0] for p in per_job if p is not None])
    flat_c = np.concatenate([p[1] for p in per_job if p is not None])
    expected = [fmt_alloc(p, names) for p in per_job]
    rec = simulate(jobs((0, 1, 1, 1)), "nodes=1,cores=1", loop="general").recorder
    assert rec is not None
    ran = [j for j, p in enumerate(per_job) if p is not None]
    for order in (ran, list(rng.permutation(ran))):  # job order (one run), start order
        parts = [per_job[j] for j in order]
        seg_sizes = np.array([len(p[0]) for p in parts if p is not None])
        rec.segments = Segments(
            job=np.array(order, np.int64), t0=np.zeros(len(order), np.int64),
            t1=np.ones(len(order), np.int64), outcome=np.zeros(len(order), np.int8),
            lost=np.zeros(len(order), np.int64), offsets=np.r_[0, np.cumsum(seg_sizes)],
            nodes=np.concatenate([p[0] for p in parts if p is not None]),
            counts=np.concatenate([p[1] for p in parts if p is not None]))
        rec.last_seg = np.full(len(per_job), -1, np.int64)
        rec.last_seg[order] = np.arange(len(order))
        seq = rec.alloc_nodes
        assert len(seq) == 200
        for j, got_j in enumerate(seq):
            p = per_job[j]
            assert (got_j is None) == (p is None) and (p is None or np.array_equal(got_j, p[0]))
        assert node_lists(rec, sizes, names).tolist() == expected
        got = flat_placements(rec)
        assert np.array_equal(got[0], sizes) and np.array_equal(got[1], flat_n)
        assert np.array_equal(got[2], flat_c)
        few = np.zeros(200, bool)
        few[:3] = True  # few placements: tokens built one by one
        assert node_lists(rec, np.where(few, sizes, 0), names).tolist()[:3] == expected[:3]


def fmt_alloc(placement: tuple[np.ndarray, np.ndarray] | None, names: tuple[str, ...]) -> str:
    """The per-job formatting the vectorised ``node_lists`` must reproduce."""
    if placement is None:
        return ""
    nodes, counts = placement
    if len(nodes) > 16:
        return f"{names[int(nodes[0])]}..{names[int(nodes[-1])]} ({len(nodes)} nodes)"
    return " ".join(names[n] if c == 1 else f"{names[n]}*{c}"
                    for n, c in zip(nodes.tolist(), counts.tolist(), strict=True))


def test_audit_sweep_order_is_lexsort() -> None:
    """The audit's one-key sort orders events exactly as the three-key lexsort."""
    from dispatchlab.metrics.audit import _sweep_order

    rng = np.random.default_rng(1)
    for n, nodes, span in ((1, 1, 5), (300, 7, 50), (20000, 128, 10**7)):
        node, t = rng.integers(0, nodes, n), rng.integers(0, span, n)
        kind = rng.integers(0, 3, n)
        assert np.array_equal(_sweep_order(node, t, kind), np.lexsort((kind, t, node)))
    big = np.array([0, 2**61, 5, 5])  # keys too wide for one integer: lexsort itself
    assert np.array_equal(_sweep_order(np.array([3, 0, 3, 3]), big, np.array([2, 0, 0, 2])),
                          np.lexsort((np.array([2, 0, 0, 2]), big, np.array([3, 0, 3, 3]))))


def test_no_walltime_kill_agrees_and_equals_full_runs() -> None:
    """Without kills, FIFO on a 1024-job HPC2N window starts every job as a schedule in
    which each job's requested time covers its whole run would; both loops agree."""
    wl = load_swf(shared_trace("HPC2N-2002-2.2-cln.swf.gz"), SwfOptions(limit=1024))
    assert (wl.runtime > wl.walltime).any()
    plat = "nodes=120,cores=2"
    free = simulate(wl, plat, "fifo", walltime_kill=False)
    covered = Workload.from_columns(submit=wl.submit, runtime=wl.runtime,
                                    walltime=np.maximum(wl.walltime, wl.runtime),
                                    units=wl.units, req={"cores": wl.req[:, 0]},
                                    job_id=wl.job_id)
    full = simulate(covered, plat, "fifo")
    assert free.jobs["start"].tolist() == full.jobs["start"].tolist()
    assert free.jobs["end"].tolist() == full.jobs["end"].tolist()
    assert not free.jobs["killed"].any() and free.summary["killed"] == 0
    for dispatcher in ("fifo", "easy", "order=sjf,select=easy,estimate=real"):
        assert_same(wl, plat, dispatcher, walltime_kill=False)


def test_the_compiled_loop_runs_only_supported_features() -> None:
    """Every engine feature outside the whitelist sends the run to the general loop."""
    from dispatchlab.dispatchers.registry import get_dispatcher
    from dispatchlab.engine.compiled.eligibility import SUPPORTED, slot_run
    from dispatchlab.engine.scenario import Change, Scenario
    from dispatchlab.engine.simulator import Simulator

    plat = Platform.homogeneous(2, {"cores": 2})
    base = jobs((0, 5, 5, 2), (1, 3, 4, 1))
    cases = {
        # nodes leaving and coming back, caps, informational rows on a fixed machine are
        # supported; informational rows with nodes leaving are not
        "scenario": (base, {"scenario": Scenario([Change(3, "temperature", 20.0),
                                                  Change(4, "alive_nodes", 1.0)])}),
        # a varying cap that stops jobs when it falls (a fixed one, or one that varies
        # and is waited for, with node or column power, is supported)
        "power": (jobs((0, 5, 5, 2), (1, 3, 4, 1), power=[10.0, 10.0]),
                  {"scenario": Scenario([Change(3, "power_cap", 50.0)]),
                   "on_over_cap": "kill-youngest"}),
        "malleable": (jobs((0, 5, 5, 2), (1, 3, 4, 1), max_units=[3, 1]), {}),
    }
    for feature, (wl, kwargs) in cases.items():
        assert feature not in SUPPORTED or feature == "scenario"
        sim = Simulator(wl, plat, get_dispatcher("fifo"), **kwargs)  # type: ignore[arg-type]
        assert feature in sim.features()
        why = slot_run(sim)
        assert isinstance(why, str) and feature in why
        res = simulate(wl, plat, "fifo", **kwargs)  # type: ignore[arg-type]
        assert res.summary["loop"] == "general"
