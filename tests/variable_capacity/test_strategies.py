"""The variable-capacity strategies: hand-computed placements, re-planning after a
removal, which machines leave, and audited random runs."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dispatchlab.dispatchers.registry import get_dispatcher
from dispatchlab.dispatchers.variable_capacity import FirstFitVC, TargetVC
from dispatchlab.dispatchers.variable_capacity.common import AreaShare
from dispatchlab.engine.recorder import ABORTED, COMPLETED
from dispatchlab.metrics.variable_capacity import vc_metrics
from tests.variable_capacity.helpers import run, segments, vc_jobs

STRATEGIES = ("ff-aware", "ff-unaware", "target-stretch", "target-asap", "packed-target-asap")


def frozen(mode: str, **kw: object) -> TargetVC:
    """A target strategy whose M_use stays at (alive + safe) / 2."""
    return TargetVC(mode, util_low=0.0, util_high=1.0, **kw)  # type: ignore[arg-type]


def test_area_share_counts_work_of_jobs_at_least_as_long() -> None:
    s = AreaShare()
    for w, c in ((100, 1), (300, 2), (600, 1)):
        s.add(w, c)
    # total 100 + 600 + 600 = 1300
    assert s.share(100) == 1.0
    assert s.share(300) == (600 + 600) / 1300
    assert s.share(600) == 600 / 1300


def test_targets_by_hand_asap_and_packed() -> None:
    # 4 machines of 2 cores, all risk-free (M_use = 4). Jobs at 0 of 100, 300, 600 s, 1
    # core: C = 1, 0.9, 0.6 → targets ⌊C·4⌋ capped at 3 = 3, 3, 2.
    wl = vc_jobs((0, 100, 1), (0, 300, 1), (0, 600, 1))
    res = run(wl, "nodes=4,cores=2", frozen("asap", neighbourhood=1, safe=4), [(0, 4)])
    assert [(j, node) for j, _, _, node, _ in segments(res)] == [(0, 3), (1, 3), (2, 2)]
    # packed, packs of 2: P = 2, targets ⌊C·2⌋ capped at 1, times 2 = 2, 2, 2; the third
    # finds machine 2 full and starts now on its neighbour 3
    res = run(wl, "nodes=4,cores=2", frozen("packed", neighbourhood=1, safe=4, pack=2),
              [(0, 4)])
    assert [(j, node) for j, _, _, node, _ in segments(res)] == [(0, 2), (1, 2), (2, 3)]


def test_target_stretch_waits_on_its_target_where_asap_takes_a_free_neighbour() -> None:
    # 2 machines of 1 core, M_use = 2. At 0: P (1000 s) → target 1; Q (400 s) → target 1,
    # busy → neighbour 0 now; S (10 s): no machine before 400 → machine 0 at 400, S⁺ =
    # (400 + 10) / 10 = 41. At 500 U (100 s): target 1 free at 1000, stretch (1000 + 100 −
    # 500) / 100 = 6 ≤ S⁺: TargetStretch books it there; TargetASAP starts it now on 0.
    wl = vc_jobs((0, 1000, 1), (0, 400, 1), (0, 10, 1), (500, 100, 1))
    stretch = run(wl, "nodes=2,cores=1", frozen("stretch", neighbourhood=1, safe=2),
                  [(0, 2)])
    asap = run(wl, "nodes=2,cores=1", frozen("asap", neighbourhood=1, safe=2), [(0, 2)])
    common = [(0, 0, 1000, 1, COMPLETED), (1, 0, 400, 0, COMPLETED),
              (2, 400, 410, 0, COMPLETED)]
    assert sorted(segments(stretch)) == sorted([*common, (3, 1000, 1100, 1, COMPLETED)])
    assert sorted(segments(asap)) == sorted([*common, (3, 500, 600, 0, COMPLETED)])
    assert stretch.summary["dispatcher_stats"]["target_stretch_final"] == 41.0


def test_removal_replans_pending_jobs_and_keeps_running_ones() -> None:
    # 2 machines of 1 core; A, B, C (100 s) at 0, all of category 1 → target machine 1.
    # A starts on 1, B on its neighbour 0, C is booked on 1 at 100. At 50 machine 1 leaves:
    # A is aborted and re-queued (submit 0); B keeps running; A then C are placed again
    # on the one machine left, in release order: A at 100, C at 200.
    wl = vc_jobs((0, 100, 1), (0, 100, 1), (0, 100, 1))
    res = run(wl, "nodes=2,cores=1", frozen("asap", neighbourhood=1, safe=2),
              [(0, 2), (50, 1), (1000, 2)])
    assert sorted(segments(res)) == [(0, 0, 50, 1, ABORTED), (0, 100, 200, 0, COMPLETED),
                                     (1, 0, 100, 0, COMPLETED), (2, 200, 300, 0, COMPLETED)]
    assert res.summary["dispatcher_stats"]["reallocations"] == 1


def _aborted_nodes(seed: int) -> list[int]:
    wl = vc_jobs(*[(0, 100, 1)] * 4)
    res = run(wl, "nodes=4,cores=1", "ff-unaware", [(0, 4), (10, 3)], seed=seed)
    return [node for _, _, _, node, out in segments(res) if out == ABORTED]


def test_unaware_removes_random_machines_reproducibly() -> None:
    picks = [_aborted_nodes(s) for s in range(12)]
    assert all(len(p) == 1 for p in picks)
    assert len({p[0] for p in picks}) > 1  # not always the same machine
    assert picks == [_aborted_nodes(s) for s in range(12)]  # same seed, same machine
    wl = vc_jobs(*[(0, 100, 1)] * 4)
    res = run(wl, "nodes=4,cores=1", "ff-aware", [(0, 4), (10, 3)])
    assert [n for _, _, _, n, o in segments(res) if o == ABORTED] == [3]  # the riskiest


def test_presets_are_registered() -> None:
    assert isinstance(get_dispatcher("ff-unaware"), FirstFitVC)
    for name in STRATEGIES[2:]:
        d = get_dispatcher(name)
        assert isinstance(d, TargetVC) and d.name == name


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), n=st.integers(5, 40), checkpoint=st.sampled_from([0, 40]))
def test_random_runs_are_audited_and_complete(seed: int, n: int, checkpoint: int) -> None:
    rng = np.random.default_rng(seed)
    rows = [(int(t), int(w), int(c)) for t, w, c in
            zip(np.sort(rng.integers(0, 600, n)), rng.integers(1, 300, n),
                rng.choice([1, 2, 4], n), strict=True)]
    wl = vc_jobs(*rows, checkpoint=checkpoint)
    times = list(range(0, 3000, 60))
    counts = np.clip(4 + np.cumsum(rng.integers(-1, 2, len(times))), 1, 6).tolist()
    for name in STRATEGIES:
        res = run(wl, "nodes=6,cores=4", name, list(zip(times, counts, strict=True)),
                  seed=seed)  # simulate() audits the schedule
        assert res.summary["jobs_run"] == n
        m = vc_metrics(res.recorder, 600)
        assert 0.0 <= m["goodput"] <= m["utilization_alive"] + 1e-9 <= 1.0 + 1e-9
        assert m["aborted_volume"] <= res.summary.get("lost_work_core_seconds", 0)


def test_compiled_and_plain_python_books_agree(monkeypatch: object) -> None:
    from dispatchlab.dispatchers.variable_capacity import books

    rng = np.random.default_rng(5)
    n = 120
    wl = vc_jobs(*[(int(t), int(w), int(c)) for t, w, c in
                   zip(np.sort(rng.integers(0, 3000, n)), rng.integers(1, 900, n),
                       rng.choice([1, 2, 4, 8], n), strict=True)])
    cap = [(t, int(c)) for t, c in zip(range(0, 20000, 300),
                                       np.clip(6 + np.cumsum(rng.integers(-1, 2, 67)), 3, 8),
                                       strict=True)]
    compiled = {name: segments(run(wl, "nodes=8,cores=8", name, cap))
                for name in STRATEGIES[2:]}
    plain = {"place_jobs": books.place_jobs, "take_many": books.take_many,
             "advance_all": books.advance_all}
    monkeypatch.setattr(books, "_kernels", plain)  # type: ignore[attr-defined]
    for name in STRATEGIES[2:]:
        assert segments(run(wl, "nodes=8,cores=8", name, cap)) == compiled[name]
