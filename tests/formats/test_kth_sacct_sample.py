"""The bundled sacct export (examples/workloads/kth-sp2.sacct.txt) holds the bundled KTH SP2
slice's first jobs: the same submit times, run times, limits and widths."""

from __future__ import annotations

import numpy as np

from dispatchlab.workload.load import load_workload
from tests.conftest import REPO

SAMPLE = REPO / "examples/workloads/kth-sp2.sacct.txt"
TRACE = REPO / "src/dispatchlab/data/traces/KTH-SP2-1996-2.1-cln.slice.swf.gz"


def test_the_sacct_sample_is_the_kth_slice() -> None:
    sacct = load_workload(SAMPLE)
    swf = load_workload(TRACE, limit=1000)
    assert sacct.n_jobs == 1000
    common, a, b = np.intersect1d(sacct.job_id, swf.job_id, return_indices=True)
    assert len(common) == 1000
    assert sacct.origin_unix is not None and swf.origin_unix is not None
    assert (sacct.submit[a] + sacct.origin_unix == swf.submit[b] + swf.origin_unix).all()
    assert (sacct.runtime[a] == swf.runtime[b]).all()
    assert (sacct.walltime[a] == swf.walltime[b]).all()
    assert (sacct.units[a] * sacct.req[a, 0] == swf.units[b] * swf.req[b, 0]).all()
    assert {q.name for q in sacct.queues} == {"batch"}
