"""Schedules written in Batsim's jobs.csv layout, read back by evalys."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dispatchlab.dispatchers.registry import get_dispatcher
from dispatchlab.metrics.batsim_schedule import COLUMNS, interval_set, write_batsim_jobs
from dispatchlab.platform.platform import Platform
from dispatchlab.simulation import simulate
from dispatchlab.workload.load import load_workload
from dispatchlab.workload.platform_for import platform_for
from dispatchlab.workload.swf import SwfOptions

#: evalys 4.0.7 calls DataFrame.rename(inplace=True), deprecated by pandas: not ours to fix
pytestmark = pytest.mark.filterwarnings("ignore:The inplace keyword")

KTH = (Path(__file__).parents[2] / "src" / "dispatchlab" / "data" / "traces"
       / "KTH-SP2-1996-2.1-cln.slice.swf.gz")


def evalys_jobset(path: Path, total: int) -> object:
    jobset = pytest.importorskip("evalys.jobset")
    return jobset.JobSet.from_csv(str(path), resource_bounds=(0, total - 1))


def assert_no_resource_used_twice(table: pd.DataFrame) -> None:
    """At every instant, each resource number belongs to at most one running job."""
    ran = table[table.starting_time >= 0]
    events = sorted([(t, 1, i) for i, t in zip(ran.index, ran.starting_time, strict=True)]
                    + [(t, 0, i) for i, t in zip(ran.index, ran.finish_time, strict=True)])
    busy: set[int] = set()
    for _, kind, i in events:
        ids: set[int] = set()
        for part in str(ran.allocated_resources[i]).split():
            lo, _, hi = part.partition("-")
            ids.update(range(int(lo), int(hi or lo) + 1))
        assert len(ids) == ran.requested_number_of_resources[i]
        if kind:
            assert not (busy & ids)
            busy |= ids
        else:
            busy -= ids


@pytest.mark.parametrize("dispatcher", ["fifo", "easy"])
def test_evalys_reads_the_schedule_and_agrees_on_utilization_and_wait(
        tmp_path: Path, dispatcher: str) -> None:
    wl = load_workload(KTH, limit=400)
    plat, _ = platform_for(wl)
    res = simulate(wl, plat, get_dispatcher(dispatcher))
    path = write_batsim_jobs(res, tmp_path / "out_jobs.csv")
    table = pd.read_csv(path, keep_default_na=False)
    assert tuple(table.columns) == COLUMNS
    assert_no_resource_used_twice(table)
    total = int(plat.total[0])
    js = evalys_jobset(path, total)
    assert js.MaxProcs == total  # type: ignore[attr-defined]
    assert js.mean_utilisation() / total == pytest.approx(  # type: ignore[attr-defined]
        res.summary["utilization"], rel=1e-12)
    assert js.df.waiting_time.mean() == pytest.approx(  # type: ignore[attr-defined]
        res.summary["mean_wait"], rel=1e-12)


def test_whole_node_jobs_are_numbered_by_node(tmp_path: Path) -> None:
    wl = load_workload(KTH, limit=200, swf=SwfOptions(units="nodes", cores_per_node=4,
                                                      limit=200))
    plat = Platform.homogeneous(25, {"cores": 4})
    res = simulate(wl, plat, get_dispatcher("easy"))
    path = write_batsim_jobs(res, tmp_path / "jobs.csv")
    table = pd.read_csv(path, keep_default_na=False)
    assert (table.requested_number_of_resources == wl.units).all()  # nodes
    assert_no_resource_used_twice(table)
    js = evalys_jobset(path, plat.n_nodes)
    assert js.mean_utilisation() / plat.n_nodes == pytest.approx(  # type: ignore[attr-defined]
        res.summary["utilization"], rel=1e-12)
    cores = pd.read_csv(write_batsim_jobs(res, tmp_path / "c.csv", resource="core"),
                        keep_default_na=False)
    assert (cores.requested_number_of_resources == 4 * wl.units).all()
    assert_no_resource_used_twice(cores)


@pytest.mark.parametrize("resource", ["node", "core"])
def test_one_core_units_filling_nodes_count_what_they_hold(tmp_path: Path,
                                                           resource: str) -> None:
    """1-core units that fill whole 4-core nodes: numbered by node, a job requests and is
    allocated nodes (not its cores); evalys finds our utilisation and mean wait."""
    from tests.conftest import jobs

    wl = jobs((0, 100, 100, 8), (0, 50, 50, 4), (10, 30, 30, 4), (20, 70, 80, 12),
              (30, 10, 10, 4))
    plat = Platform.homogeneous(4, {"cores": 4})
    res = simulate(wl, plat, get_dispatcher("easy"))
    path = write_batsim_jobs(res, tmp_path / "out_jobs.csv")
    table = pd.read_csv(path, keep_default_na=False)
    assert_no_resource_used_twice(table)
    if resource == "node":  # "auto" numbers nodes: every job filled the nodes it ran on
        assert (table.requested_number_of_resources == wl.units // 4).all()
        total = plat.n_nodes
    else:
        path = write_batsim_jobs(res, tmp_path / "out_jobs.csv", resource="core")
        total = int(plat.total[0])
    js = evalys_jobset(path, total)
    assert js.mean_utilisation() / total == pytest.approx(  # type: ignore[attr-defined]
        res.summary["utilization"], abs=1e-9)
    assert js.df.waiting_time.mean() == pytest.approx(  # type: ignore[attr-defined]
        res.summary["mean_wait"], abs=1e-9)


def test_rejected_and_killed_jobs(tmp_path: Path) -> None:
    from tests.conftest import jobs

    wl = jobs((0, 50, 100, 1), (0, 500, 100, 1), (5, 10, 100, 8))
    res = simulate(wl, Platform.homogeneous(2, {"cores": 1}), get_dispatcher("fifo"),
                   on_infeasible="reject")
    table = pd.read_csv(write_batsim_jobs(res, tmp_path / "j.csv"), keep_default_na=False)
    assert table.final_state.tolist() == ["COMPLETED_SUCCESSFULLY",
                                          "COMPLETED_WALLTIME_REACHED", "REJECTED"]
    assert table.success.tolist() == [1, 0, 0]
    assert table.execution_time.tolist() == [50, 100, -1]
    assert table.allocated_resources.tolist() == ["0", "1", ""]
    assert table.stretch.tolist() == [1.0, 1.0, -1.0]


@given(st.lists(st.integers(0, 200), max_size=40))
def test_interval_set_spells_each_id_once(ids: list[int]) -> None:
    text = interval_set(ids)
    back: list[int] = []
    for part in text.split():
        lo, _, hi = part.partition("-")
        back.extend(range(int(lo), int(hi or lo) + 1))
    assert back == sorted(set(ids))
    starts = [int(p.split("-")[0]) for p in text.split()]
    ends = [int(p.split("-")[-1]) for p in text.split()]
    assert all(b > a + 1 for a, b in zip(ends, starts[1:], strict=False))  # runs joined
