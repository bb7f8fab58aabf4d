"""Every shared SWF trace loads with the job count of traces/README.md (about 5 s in all).

``records`` is the README's job count; jobs kept differ only by what the default cleaning
drops, which the load report names.
"""

from __future__ import annotations

import pytest

from dispatchlab.workload import load_workload
from dispatchlab.workload.trace_summary import swf_cleaning
from tests.workload.conftest import shared

#: file → (README job count, dropped: no processor count, dropped: unknown run time)
TRACES = {
    "lublin-256-a.swf": (10_000, 0, 0),
    "lublin-256-b.swf": (10_000, 0, 0),
    "HPC2N-2002-2.2-cln.swf.gz": (202_871, 0, 0),
    "CTC-SP2-1996-3.1-cln.swf.gz": (77_222, 0, 0),
    "KTH-SP2-1996-2.1-cln.swf.gz": (28_476, 1, 0),
    "SDSC-BLUE-2000-4.2-cln.swf.gz": (243_306, 0, 10_744),
    "CEA-Curie-2011-2.1-cln.swf.gz": (312_826, 19, 0),
    "LANL-CM5-1994-4.1-cln.swf.gz": (122_060, 3, 0),
    "NASA-iPSC-1993-3.1-cln.swf.gz": (18_239, 0, 0),
    "RICC-2010-2.swf.gz": (447_794, 0, 0),
    "METACENTRUM-2009-2.swf.gz": (103_656, 0, 0),
}


@pytest.mark.parametrize("name", sorted(TRACES))
def test_trace_loads_with_readme_count(name: str) -> None:
    records, no_procs, unknown_runtime = TRACES[name]
    wl = load_workload(shared("swf", name))
    rep = wl.meta["load_report"]
    assert rep["records"] == records
    assert rep["dropped_no_procs"] == no_procs
    assert rep["dropped_unknown_runtime"] == unknown_runtime
    assert len(wl) == records - no_procs - unknown_runtime == rep["jobs"]
    assert wl.submit[0] == 0
    assert (wl.units > 0).all()


def test_thunder_loads_with_readme_count() -> None:
    # 1190 records have an unknown submit time (-1); 2248 lack a processor count, 1190 of
    # them among those, so the sequential cleaning counts 1058 more.
    path = shared("swf", "LLNL-Thunder-2007-1.1-cln.swf.gz")
    wl = load_workload(path)
    rep = wl.meta["load_report"]
    assert rep["records"] == 121_039
    assert rep["dropped_unknown_submit"] == 1190
    assert rep["dropped_no_procs"] == 1058
    assert len(wl) == rep["jobs"] == 121_039 - 1190 - 1058
    assert (wl.submit >= 0).all() and (wl.units > 0).all()


def test_thunder_cleaning_counts_explain_the_failure() -> None:
    counts = swf_cleaning(shared("swf", "LLNL-Thunder-2007-1.1-cln.swf.gz"))
    assert counts["records"] == 121_039
    assert counts["unknown_submit"] == 1190
    assert counts["drop_invalid"]["no_procs"] == 2248
