"""Experiment workloads with cooling keys: parameters expand, the keys enter the run hash,
a worker's run carries the profit entry and the cooling table."""

from __future__ import annotations

from pathlib import Path

from dispatchlab.experiments import load_experiment, plan
from dispatchlab.experiments.worker import execute_run

TOML = """
name = "profit-check"
platforms = ["nodes=2,cores=4"]
dispatchers = ["fifo", "order=profit,select=nonstrict"]
[parameters]
cooling = ["air:scaled", "hybrid:scaled"]
price = ["cheap", "expensive"]
[[workloads]]
path = "two.csv"
cooling = "{cooling}"
temperature = "gen:temperature:season=summer,days=1,seed={seed}"
prices = "{price}"
"""


def test_cooling_keys_plan_and_run(tmp_path: Path) -> None:
    (tmp_path / "two.csv").write_text("job_id,submit,runtime,walltime,units,req_cores,power\n"
                                      "1,0,3600,3600,1,4,100\n2,600,7200,7200,1,4,200\n")
    exp = tmp_path / "exp.toml"
    exp.write_text(TOML)
    runs = plan(load_experiment(exp), tmp_path, source=str(exp))
    assert len(runs) == 8 and len({r.key for r in runs}) == 8
    ref = runs[0].config.workload
    assert ref.cooling is not None and ref.cooling["temperature"].endswith("seed={seed}")
    out = execute_run(runs[0].config)
    profit = out.summary["profit"]
    assert profit["core_hours"] == 12.0
    assert set(out.tables) == {"cooling"} and len(out.tables["cooling"]) > 1
    prices = {r.labels.params["price"]: execute_run(r.config).summary["profit"]["prices"]
              for r in runs[:4] if r.labels.params["cooling"] == "air:scaled"}
    assert prices["cheap"]["core_hour"] == 0.013 and prices["expensive"]["core_hour"] == 0.10
