"""``dispatchlab plan``: a plan file that the replay dispatcher runs as planned."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from dispatchlab.cli.main import app
from dispatchlab.dispatchers.offline_plan.planner.plan import load_plan
from dispatchlab.simulation import simulate
from dispatchlab.workload.workload import Workload

runner = CliRunner()


def test_plan_then_replay(tmp_path) -> None:
    wl = Workload.from_columns(submit=[0, 10, 20, 30, 3000], runtime=[600, 300, 900, 60, 60],
                               walltime=[600, 300, 900, 60, 60], units=[2, 1, 1, 2, 1],
                               req={"cores": [4, 4, 2, 4, 1]}, power=[80, 40, 20, 120, 10])
    trace = tmp_path / "w.parquet"
    from dispatchlab.workload.load import save_workload

    save_workload(wl, trace)
    out = tmp_path / "plan.parquet"
    res = runner.invoke(app, ["plan", "-w", str(trace), "-p", "nodes=2,cores=4", "--search",
                              "delay", "--runs", "30", "--out", str(out), "--json"])
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    assert summary["jobs"] == 5 and summary["profit"] == summary["profit"]
    plan = load_plan(str(out))
    assert plan.objective == summary["profit"]
    run = simulate(trace, "nodes=2,cores=4", f"plan={out}")
    stats = run.summary["dispatcher_stats"]["replay"]
    assert stats["on_plan"] == 5 and stats["moved"] == 0


def test_plan_rejects_unknown_search(tmp_path) -> None:
    res = runner.invoke(app, ["plan", "-w", "gen:curie-thesis:level=low", "--search", "tabu"])
    assert res.exit_code != 0 and "unknown search" in res.output
