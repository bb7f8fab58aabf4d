"""Hypothesis strategies for workloads (shared by the round-trip tests)."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st

from dispatchlab.workload.limits import MAX_ID, MAX_SECONDS
from dispatchlab.workload.workload import Queue, Workload

#: Any text a user could put in a name (no lone surrogates: they cannot be UTF-8).
NAMES = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=6)
ZONES = st.sampled_from(["Europe/Rome", "UTC", "US/Pacific", "Asia/Tokyo"])
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | NAMES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(NAMES, inner, max_size=3),
    max_leaves=8,
)
#: Largest time any workload may hold (~3,000 years), SWF or not.
BIG = SWF_BIG = MAX_SECONDS


@st.composite
def workloads(draw: st.DrawFn, *, max_jobs: int = 20) -> Workload:
    """Any valid workload: odd names, extra resources, unknown values, meta."""
    n = draw(st.integers(0, max_jobs))
    extra = draw(
        st.lists(st.sampled_from(["mem", "gpu", "mic", "fpga", "lic-x"]), unique=True, max_size=3)
    )
    resources = ["cores", *extra]
    req = {
        r: np.array(draw(st.lists(st.integers(0, 2**31), min_size=n, max_size=n)), dtype=np.int64)
        for r in resources
    }
    empty = np.all([req[r] == 0 for r in resources], axis=0) if n else np.zeros(0, bool)
    req["cores"] = np.where(empty, 1, req["cores"])
    queue_names = draw(st.lists(NAMES, min_size=1, max_size=4, unique=True))
    queues = [Queue(q, draw(st.integers(0, 10**6))) for q in queue_names]
    ints = st.integers(0, BIG)

    def column(elements: st.SearchStrategy[Any]) -> list[Any]:
        return draw(st.lists(elements, min_size=n, max_size=n))

    return Workload.from_columns(
        job_id=draw(st.lists(st.integers(0, MAX_ID - 1), min_size=n, max_size=n, unique=True)),
        submit=column(ints),
        walltime=column(st.integers(1, BIG)),
        runtime=column(ints),
        units=column(st.integers(1, 10**6)),
        req=req,
        queue=column(st.sampled_from(queue_names)) if n else None,
        queues=queues,
        user=column(NAMES) if n else None,
        app=column(NAMES) if n else None,
        power=column(st.floats(allow_nan=True, allow_infinity=True)),
        est=column(st.integers(-1, BIG)),
        lst=column(st.integers(-1, BIG)),
        logged_wait=column(st.integers(-1, BIG)),
        origin_unix=draw(st.none() | st.integers(0, 2**33)),
        timezone=draw(st.none() | ZONES),
        source=draw(NAMES),
        meta=draw(st.dictionaries(NAMES, JSON, max_size=4)),
    )


@st.composite
def swf_workloads(draw: st.DrawFn, *, max_jobs: int = 20) -> Workload:
    """Workloads SWF can hold: 1-core units, numeric labels, first arrival at 0."""
    n = draw(st.integers(1, max_jobs))
    submit = np.array(draw(st.lists(st.integers(0, SWF_BIG), min_size=n, max_size=n)))
    labels = st.integers(-1, 10**6).map(str)

    def column(elements: st.SearchStrategy[Any]) -> list[Any]:
        return draw(st.lists(elements, min_size=n, max_size=n))

    return Workload.from_columns(
        job_id=draw(st.lists(st.integers(0, 2**40), min_size=n, max_size=n, unique=True)),
        submit=submit - submit.min(),
        walltime=column(st.integers(1, SWF_BIG)),
        runtime=column(st.integers(0, SWF_BIG)),
        units=column(st.integers(1, 10**6)),
        req={"cores": [1] * n},
        queue=column(labels),
        user=column(labels),
        app=column(labels),
        logged_wait=column(st.integers(-1, SWF_BIG)),
        origin_unix=draw(st.none() | st.integers(0, 2**33)),
        timezone=draw(st.none() | ZONES),
    )
