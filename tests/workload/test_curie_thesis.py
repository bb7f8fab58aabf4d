"""The thesis ch. 6 Curie workloads: counts, spans, power per core, exact cores, seeds."""

from __future__ import annotations

import numpy as np
import pytest

from dispatchlab.errors import WorkloadError
from dispatchlab.workload import load_workload
from dispatchlab.workload.generators.curie_thesis import DEFAULT_TRACE
from tests.conftest import missing_reason, trace_available

pytestmark = pytest.mark.skipif(not trace_available(DEFAULT_TRACE.removeprefix("trace:")),
                                reason=missing_reason("CEA-Curie"))


def test_low_and_high() -> None:
    low = load_workload("gen:curie-thesis:level=low,seed=0")
    assert low.n_jobs == 8165 and low.submit.max() < 30 * 86400
    high = load_workload("gen:curie-thesis:level=high,seed=0")
    assert high.n_jobs == 33_583 and 22 * 86400 < high.submit.max() < 23 * 86400
    for wl in (low, high):
        cores = wl.units * wl.req[:, 0]
        per_core = wl.power / cores
        assert per_core.min() >= 7.8 and per_core.max() <= 11.11
        assert cores.max() <= 9600 and (wl.units * wl.req[:, 0] > 0).all()
        assert (wl.walltime >= wl.runtime).all()
        assert (wl.req[:, 0] <= 32).all()
    # lst = est + aqt: the mean wait of the whole log's large partition (thesis §5.5)
    assert low.meta["aqt_s"] == high.meta["aqt_s"] == 11_400
    assert set(low.ewt().tolist()) == {11_400}
    assert low.meta["offered_load"] == pytest.approx(0.62, abs=0.01)
    assert high.meta["offered_load"] == pytest.approx(1.39, abs=0.01)


def test_seeded_power_only() -> None:
    a = load_workload("gen:curie-thesis:level=low,seed=0")
    b = load_workload("gen:curie-thesis:level=low,seed=1")
    assert np.array_equal(a.submit, b.submit) and not np.array_equal(a.power, b.power)
    assert np.array_equal(a.power, load_workload("gen:curie-thesis:level=low,seed=0").power)
    with pytest.raises(WorkloadError, match="level"):
        load_workload("gen:curie-thesis:level=medium")


def test_ch7_levels() -> None:
    low = load_workload("gen:curie-thesis:level=ch7-low,seed=0")
    medium = load_workload("gen:curie-thesis:level=ch7-medium,seed=0")
    high = load_workload("gen:curie-thesis:level=ch7-high,seed=0")
    assert (low.n_jobs, medium.n_jobs, high.n_jobs) == (3207, 8165, 10_861)
    assert high.submit.max() < 23 * 86400 and low.submit.max() < 30 * 86400
    ch6 = load_workload("gen:curie-thesis:level=low,seed=0")
    assert np.array_equal(medium.submit, ch6.submit)
    # the thinning keeps whole jobs of the 4,670 of its window, the same ones every time
    again = load_workload("gen:curie-thesis:level=ch7-low,seed=3")
    assert np.array_equal(low.job_id, again.job_id)
    assert high.meta["offered_load"] == pytest.approx(0.98, abs=0.01)
