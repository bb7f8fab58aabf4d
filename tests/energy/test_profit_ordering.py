"""The thesis's Profit rule: the queued job with the best profit/cost (least W per core)
starts first, strict and non-strict."""

from __future__ import annotations

from dispatchlab import Platform, Workload, simulate


def test_profit_order_strict_and_nonstrict() -> None:
    # job 0 holds the one 4-core node until 100; jobs 1-3 queue: W per core 10, 8, 9
    wl = Workload.from_columns(job_id=[0, 1, 2, 3], submit=[0, 1, 2, 3], runtime=[100, 50, 50, 50],
                               walltime=[100, 50, 50, 50], units=[1, 1, 1, 1],
                               req={"cores": [4, 4, 2, 2]}, power=[40.0, 40.0, 16.0, 18.0])
    plat = Platform.homogeneous(1, {"cores": 4})
    fifo = simulate(wl, plat, "fifo").jobs.set_index("job_id")["start"]
    assert (fifo[1], fifo[2], fifo[3]) == (100, 150, 150)
    res = simulate(wl, plat, "order=profit")
    start = res.jobs.set_index("job_id")["start"]
    # at 100: job 2 (8 W/core) and job 3 (9 W/core) share the node, job 1 (10 W/core) waits
    assert (start[1], start[2], start[3]) == (150, 100, 100)
    res = simulate(wl, plat, "order=profit,select=nonstrict")
    start = res.jobs.set_index("job_id")["start"]
    assert (start[1], start[2], start[3]) == (150, 100, 100)
