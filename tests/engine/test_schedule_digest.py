"""The schedule digest: equal for equal records, whatever their log order; moved by any change
of the schedule; what experiment stores compare runs by."""

from __future__ import annotations

import numpy as np

from dispatchlab import simulate
from dispatchlab.engine.recorder import Recorder
from dispatchlab.experiments.collect import result_digest
from dispatchlab.metrics.schedule_digest import schedule_digest
from tests.conftest import jobs

WL = jobs((0, 10, 20, 2), (0, 5, 20, 1), (1, 30, 40, 3), (2, 4, 10, 1), (3, 7, 10, 2))


def _record(dispatcher: str = "easy") -> Recorder:
    rec = simulate(WL, "nodes=3,cores=1", dispatcher, loop="general").recorder
    assert rec is not None
    return rec


def test_the_summary_carries_the_canonical_digest() -> None:
    res = simulate(WL, "nodes=3,cores=1", "easy", loop="general")
    assert res.recorder is not None
    assert res.summary["schedule_digest"] == schedule_digest(res.recorder, canonical=True,
                                                                  points=False)
    assert len(res.summary["schedule_digest"]) == 64


def test_same_run_same_digest_and_another_schedule_another() -> None:
    assert schedule_digest(_record()) == schedule_digest(_record())
    assert schedule_digest(_record("easy")) != schedule_digest(_record("fifo"))


def test_one_second_moved_changes_the_digest() -> None:
    rec = _record()
    before = schedule_digest(rec)
    rec.segments.t1[0] += 1
    assert schedule_digest(rec) != before
    rec.segments.t1[0] -= 1
    rec.segments.nodes[0] = (rec.segments.nodes[0] + 1) % 3
    assert schedule_digest(rec) != before


def test_canonical_digest_ignores_the_log_order() -> None:
    rec = _record()
    seg = rec.segments
    flip = np.arange(len(seg))[::-1]  # the same segments logged in reverse order
    sizes = np.diff(seg.offsets)
    entries = np.concatenate([np.arange(seg.offsets[k], seg.offsets[k + 1]) for k in flip])
    rec2 = _record()
    s2 = rec2.segments
    for name in ("job", "t0", "t1", "outcome", "lost"):
        setattr(s2, name, getattr(seg, name)[flip])
    s2.offsets = np.concatenate(([0], np.cumsum(sizes[flip])))
    s2.nodes, s2.counts = seg.nodes[entries], seg.counts[entries]
    assert schedule_digest(rec2) != schedule_digest(rec)
    assert schedule_digest(rec2, canonical=True) == schedule_digest(rec, canonical=True)


def test_result_digest_covers_the_figures_the_schedule_digest_does_not() -> None:
    summary = simulate(WL, "nodes=3,cores=1", "easy", loop="general").summary
    priced = {**summary, "profit": 12.5}  # the same schedule at another price
    assert priced["schedule_digest"] == summary["schedule_digest"]
    assert result_digest(priced) != result_digest(summary)


def test_result_digest_does_not_depend_on_the_loop() -> None:
    general = simulate(WL, "nodes=3,cores=1", "easy", loop="general").summary
    compiled = simulate(WL, "nodes=3,cores=1", "easy", loop="auto").summary
    assert general["loop"] != compiled["loop"] or compiled["loop"] == "general"
    assert result_digest(general) == result_digest(compiled)
