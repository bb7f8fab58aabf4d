"""The Plan object: frame, utilization, save/load."""

from __future__ import annotations

import numpy as np
import pytest

from dispatchlab.dispatchers.offline_plan.planner.plan import Plan, concat_plans, load_plan
from dispatchlab.errors import ConfigError


def _plan() -> Plan:
    return Plan(job_ids=np.array([7, 8]), rows=np.array([0, 1]), starts=np.array([0, 30]),
                duration=np.array([60, 60]), alloc=(((0, 2),), ((0, 1), (1, 1))),
                cores_per_unit=np.array([2, 4]), total_cores=16, power=np.array([5.0, 6.0]),
                objective=1.5, stats={"search": "multi"}, meta={"platform": "p"})


def test_frame_and_utilization_by_hand() -> None:
    p = _plan()
    f = p.to_frame()
    assert f["end"].tolist() == [60, 90]
    assert f["nodes"].tolist() == [[0], [0, 1]]
    u = p.utilization(30)
    # job 7: 4 cores over [0, 60); job 8: 8 cores over [30, 90); machine 16 cores
    assert u["time"].tolist() == [0, 30, 60]
    assert u["utilization"].tolist() == pytest.approx([4 / 16, 12 / 16, 8 / 16])
    # bins that cut a job: [0, 45) and [45, 90)
    u2 = p.utilization(45)
    assert u2["utilization"].tolist() == pytest.approx([(4 * 45 + 8 * 15) / (45 * 16),
                                                        (4 * 15 + 8 * 45) / (45 * 16)])


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_save_load_round_trip(tmp_path, suffix) -> None:
    p = _plan()
    path = str(tmp_path / f"plan{suffix}")
    p.save(path)
    q = load_plan(path)
    assert q.alloc == p.alloc and q.starts.tolist() == p.starts.tolist()
    assert q.objective == 1.5 and q.stats == {"search": "multi"} and q.total_cores == 16
    both = concat_plans([p, q])
    assert len(both) == 4 and both.objective == 3.0


def test_bad_plan_file(tmp_path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("job_id,row,start\n1,0,0\n")
    with pytest.raises(ConfigError, match=r"bad\.csv"):
        load_plan(str(path))


def test_plan_jobs_one_call() -> None:
    from dispatchlab.dispatchers.offline_plan.planner import plan_jobs
    from dispatchlab.energy.cooling import pue_table
    from dispatchlab.platform.resolve import resolve_platform
    from dispatchlab.workload.workload import Workload

    wl = Workload.from_columns(submit=[0, 60, 120], runtime=[600, 300, 900],
                               walltime=[900, 900, 900], units=[2, 1, 1],
                               req={"cores": [4, 4, 2]}, power=[80.0, 40.0, 20.0])
    plat = resolve_platform("nodes=2,cores=4")
    plan = plan_jobs(wl, plat, pue_table("air"), ((0,), (20.0,)), search="multi")
    assert len(plan) == 3 and plan.objective is not None
    assert (plan.starts >= wl.submit).all()
    assert plan.stats["search"] == "multi"
    util = plan.utilization(300)
    assert 0 < util["utilization"].max() <= 1
