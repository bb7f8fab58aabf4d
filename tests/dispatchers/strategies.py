"""Hypothesis strategies: small random platforms and workloads, multi-resource included."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from dispatchlab import Platform, Workload


@st.composite
def instances(draw: st.DrawFn, max_jobs: int = 25) -> tuple[Workload, Platform]:
    """A random workload on a random platform.

    Half of the platforms have GPUs and memory besides cores (jobs then mix requests and
    the dispatcher works on node matrices); the rest run jobs whose units all ask the same
    vector (the pooled-slot path). Some jobs outlive their requested time and are killed;
    some have run time 0; arrivals often coincide.
    """
    n_nodes = draw(st.integers(1, 5))
    multi = draw(st.booleans())
    resources = ("cores", "gpu", "mem") if multi else ("cores",)
    cap = np.zeros((n_nodes, len(resources)), dtype=np.int64)
    for k in range(n_nodes):
        cap[k, 0] = draw(st.integers(1, 8))
        if multi:
            cap[k, 1] = draw(st.integers(0, 2))
            cap[k, 2] = draw(st.integers(1, 8))
    power = draw(st.lists(st.sampled_from([100.0, 150.0, 200.0]), min_size=n_nodes,
                          max_size=n_nodes))
    plat = Platform(resources=resources, capacity=cap,
                    node_names=tuple(f"n{k}" for k in range(n_nodes)),
                    node_power=np.array(power), name="random")
    n = draw(st.integers(1, max_jobs))
    gaps = draw(st.lists(st.sampled_from([0, 0, 1, 3, 10, 40]), min_size=n, max_size=n))
    submit = np.cumsum(gaps)
    walltime = draw(st.lists(st.integers(1, 80), min_size=n, max_size=n))
    runtime = [draw(st.integers(0, w + 10)) for w in walltime]
    units = draw(st.lists(st.integers(1, 3), min_size=n, max_size=n))
    if multi:
        req = {
            "cores": draw(st.lists(st.integers(1, 4), min_size=n, max_size=n)),
            "gpu": draw(st.lists(st.sampled_from([0, 0, 1, 2]), min_size=n, max_size=n)),
            "mem": draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)),
        }
    else:
        req = {"cores": [draw(st.integers(1, 2))] * n}
    wl = Workload.from_columns(submit=submit, walltime=walltime, runtime=runtime, units=units,
                               req=req)
    return wl, plat
