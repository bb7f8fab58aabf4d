"""The paper's metric: mean weighted queue time in EWT units (Borghesi et al. 2015 §6.1)."""

from __future__ import annotations

import numpy as np

from dispatchlab import simulate
from tests.conftest import jobs


def test_mean_weighted_queue_time_by_hand() -> None:
    # One 1-core node, FIFO, everything at 0: A (debug, 1800 s) runs 0–1800, B (parallel,
    # 3600 s) 1800–5400, C (debug, 100 s) 5400–5500, D (a queue with no EWT) 5500–5510.
    # wait / EWT: A 0/3600 = 0, B 1800/21600 = 1/12, C 5400/3600 = 1.5; D has none.
    wl = jobs((0, 1800, 1800, 1), (0, 3600, 3600, 1), (0, 100, 100, 1), (0, 10, 10, 1),
              queue=["debug", "parallel", "debug", "none"],
              queues={"debug": 3600, "parallel": 21600, "none": 0})
    res = simulate(wl, "nodes=1,cores=1", "fifo")
    assert res.jobs["wait"].tolist() == [0, 1800, 5400, 5500]
    assert np.isclose(res.summary["mean_weighted_queue_time"], (0 + 1 / 12 + 1.5) / 3)
    assert np.isclose(res.summary["weighted_queue_time"], 0 + 1 / 12 + 1.5)


def test_mean_weighted_queue_time_without_ewt_is_zero() -> None:
    wl = jobs((0, 10, 10, 1), (0, 10, 10, 1), queue=["none", "none"], queues={"none": 0})
    res = simulate(wl, "nodes=1,cores=1", "fifo")
    assert res.jobs["wait"].tolist() == [0, 10]
    assert res.summary["mean_weighted_queue_time"] == 0.0
