"""Hypothesis pieces shared by the power-cap property tests: small random workloads and
the power the hungriest of their jobs needs alone on an idle machine."""

from __future__ import annotations

from hypothesis import strategies as st

from dispatchlab import Workload
from dispatchlab.platform.power import NodePowerSpec


def draw_jobs(draw: st.DrawFn, n_nodes: int, cores: int, max_jobs: int, *,
              runtimes: tuple[int, int] = (0, 50), extra_walltime: int | None = 20,
              max_submit: int = 60) -> Workload:
    """1 to ``max_jobs`` jobs of at most ``n_nodes`` units of at most ``cores`` cores;
    wall-time = run time (at least 1) plus up to ``extra_walltime`` s, or the run time
    itself when ``extra_walltime`` is None."""
    n = draw(st.integers(1, max_jobs))
    units = draw(st.lists(st.integers(1, n_nodes), min_size=n, max_size=n))
    per = draw(st.lists(st.integers(1, cores), min_size=n, max_size=n))
    runtime = draw(st.lists(st.integers(*runtimes), min_size=n, max_size=n))
    walltime = runtime if extra_walltime is None else [
        max(r, 1) + draw(st.integers(0, extra_walltime)) for r in runtime]
    submit = sorted(draw(st.lists(st.integers(0, max_submit), min_size=n, max_size=n)))
    return Workload.from_columns(submit=submit, runtime=runtime, walltime=walltime,
                                 units=units, req={"cores": per})


def hungriest_job_w(wl: Workload, spec: NodePowerSpec) -> float:
    """The busy power of the hungriest job alone, spread one unit a node or packed on one
    node (the allocator may do either): a cap of idle power plus this lets every job start."""
    return max(max(u * (spec.core_first + (c - 1) * spec.core),
                   spec.core_first + (u * c - 1) * spec.core)
               for u, c in zip(wl.units.tolist(), wl.req[:, 0].tolist(), strict=True))
