"""An experiment with a generator workload, a platform file and ``cp=`` dispatcher specs
(the thesis Tables 4.13–4.15 setup, scaled down) plans and runs through the shared
machinery."""

from __future__ import annotations

from pathlib import Path

from dispatchlab.experiments import execute_run, parse_experiment, plan
from dispatchlab.metrics.thesis_metrics import NAMES, thesis_metrics

PLATFORM = """
name = "eurora-4"
[[nodes]]
count = 2
group = "gpu"
capacity = { cores = 16, mem = "16 GB", gpu = 2 }
[[nodes]]
count = 2
group = "mic"
capacity = { cores = 16, mem = "16 GB", mic = 2 }
"""


def test_thesis_like_experiment(tmp_path: Path) -> None:
    (tmp_path / "eurora-4.toml").write_text(PLATFORM)
    spec = parse_experiment({
        "name": "thesis-mini",
        "platforms": [{"spec": "eurora-4.toml", "name": "eurora-4"}],
        "seeds": 2,
        "on_infeasible": "reject",
        "dispatchers": ["pbs-fifo", {"spec": "cp=pcp1,objective=wait,m=10", "name": "pcp1-wqt"}],
        "workloads": [{"name": "gen", "path": "gen:eurora-like:jobs=12,seed={seed},nmax=2"}],
        "stats": {"metrics": ["weighted_queue_time", "late_jobs", "dispatch_overhead_pct"]},
    })
    runs = plan(spec, tmp_path)
    assert len(runs) == 4
    assert {r.labels.dispatcher for r in runs} == {"pbs-fifo", "pcp1-wqt"}
    cp_run = next(r for r in runs if r.labels.dispatcher == "pcp1-wqt" and r.labels.seed == 0)
    out = execute_run(cp_run.config)
    assert out.summary["dispatcher_stats"]["errors"] == 0
    metrics = thesis_metrics(out.summary)
    assert list(metrics) == list(NAMES)
    assert metrics["NL"] <= out.summary["jobs_run"]
