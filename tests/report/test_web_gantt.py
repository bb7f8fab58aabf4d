"""The interactive Gantt chart's data: which jobs become bars, the occupancy map under
them, and the hover columns."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatchlab.report.figures import RunView
from dispatchlab.report.web.gantt import gantt_figure, job_columns, occupancy, sample_jobs
from dispatchlab.report.web.timeseries import time_axis


def run_view(starts: list[int], runs: list[int], nodes: list[list[int]],
             node_cores: int = 1, cores: int = 1, n_nodes: int = 4) -> RunView:
    """A run whose job ``k`` starts at ``starts[k]`` for ``runs[k]`` s on ``nodes[k]``."""
    n = len(starts)
    jobs = pd.DataFrame({
        "job_id": np.arange(100, 100 + n), "submit": np.zeros(n, int), "start": starts,
        "end": np.add(starts, runs), "wait": starts, "requested": np.add(runs, 60),
        "actual_runtime": runs, "run": runs,
        "units": [len(x) for x in nodes], "req_cores": cores, "killed": False,
        "queue": "q", "user": [f"u{k % 3}" for k in range(n)], "rejected": False,
        "bounded_slowdown": 1.0})
    alloc = pd.DataFrame([(k, nd, 1, cores, node_cores) for k, ns in enumerate(nodes)
                          for nd in ns], columns=["job", "node", "units", "cores", "node_cores"])
    ts = pd.DataFrame({"time": [0], "used_cores": [0], "queue_length": [0]})
    return RunView("r", "#000", jobs, ts, {"cores": n_nodes * node_cores}, n_nodes, alloc)


def test_sample_keeps_the_middle_jobs_by_start() -> None:
    view = run_view(list(range(0, 1000, 100)), [50] * 10, [[0]] * 10)
    whole = sample_jobs(view.jobs, 20)
    assert not whole.sampled and len(whole.jobs) == 10
    part = sample_jobs(view.jobs, 4)
    assert part.sampled and part.total == 10
    assert part.jobs.tolist() == [3, 4, 5, 6]
    assert (part.t0, part.t1) == (300.0, 600.0)


def test_whole_nodes_in_a_row_make_one_bar_and_hover_names_the_job() -> None:
    view = run_view([0, 10], [100, 50], [[0, 1, 2], [3]])
    fig = gantt_figure(view, time_axis([view]))
    bars = [t for t in fig.data if t["type"] == "bar"]
    assert sum(len(t["y"]) for t in bars) == 2  # nodes 0-2 merged into one bar
    widths = sorted(w for t in bars for w in t["width"])
    assert widths == [0.92, 2.76]
    assert fig.jobs is not None
    cols = job_columns(view.jobs, np.array([1]))
    assert cols["id"].tolist() == [101] and cols["user_names"] == ["u1"]
    assert cols["outcome_names"] == ["completed"] and cols["per_unit_names"] == ["1 cores"]
    assert "All 2 jobs" in fig.caption


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5000), st.integers(1, 3000), st.integers(0, 5),
                          st.integers(1, 4)), min_size=1, max_size=30),
       st.integers(1, 3))
def test_occupancy_integrates_every_allocation(jobs: list[tuple[int, int, int, int]],
                                               rows: int) -> None:
    """Busy node-seconds in the map = Σ run time × share of the node, whatever the
    grouping of nodes and the bins."""
    starts = [j[0] for j in jobs]
    runs = [j[1] for j in jobs]
    nodes = [[j[2]] for j in jobs]
    view = run_view(starts, runs, nodes, node_cores=4, cores=1, n_nodes=6)
    view.alloc["cores"] = [j[3] for j in jobs]
    edges = np.linspace(0, 8001, 37)
    heat, g = occupancy(view, edges, rows=rows)
    sizes = np.array([min(g, 6 - k * g) for k in range(heat.shape[0])])
    busy = (heat * np.diff(edges)[None, :] * sizes[:, None]).sum()
    expect = sum(r * c / 4 for r, c in zip(runs, (j[3] for j in jobs), strict=True))
    assert np.isclose(busy, expect)


def test_the_jobs_table_names_each_jobs_user() -> None:
    """The Gantt tooltip's user comes from the per-job table's ``user`` column."""
    from dispatchlab import simulate
    from dispatchlab.platform.platform import Platform
    from tests.conftest import jobs as make_jobs

    wl = make_jobs((0, 10, 20, 1), (1, 10, 20, 1), (2, 10, 20, 1), user=["ann", "bob", "ann"])
    res = simulate(wl, Platform.homogeneous(2, {"cores": 1}), "fifo")
    assert res.jobs["user"].tolist() == ["ann", "bob", "ann"]
    unnamed = simulate(make_jobs((0, 10, 20, 1)), Platform.homogeneous(1, {"cores": 1}), "fifo")
    assert unnamed.jobs["user"].tolist() == ["-"]
