"""The slurm.conf a LocalCluster writes: extra SchedulerParameters and lines (no daemon)."""

from __future__ import annotations

from pathlib import Path

from dispatchlab.live.local_cluster import LocalCluster
from dispatchlab.platform.slurm_conf import parse_slurm_conf


def test_sched_params_and_extra_lines_reach_the_conf(tmp_path: Path):
    cluster = LocalCluster(nodes=2, cpus=8, scheduler="backfill", root=tmp_path,
                           sched_params="bf_max_job_test=20,bf_window=5",
                           extra_conf="PriorityType=priority/multifactor\n"
                                      "  PriorityWeightJobSize=1000\n\n")
    cluster._write_conf()
    conf = parse_slurm_conf(cluster.conf.read_text(), source=str(cluster.conf))
    assert conf.sched_params["bf_max_job_test"] == 20
    assert conf.sched_params["bf_window"] == 5
    assert conf.sched_params["bf_interval"] == 1  # the generated ones stay
    assert conf.settings["prioritytype"] == "priority/multifactor"
    assert conf.settings["priorityweightjobsize"] == "1000"
    assert [n.cpus for n in conf.nodes] == [8, 8]


def test_without_options_the_conf_is_unchanged(tmp_path: Path):
    cluster = LocalCluster(nodes=1, cpus=4, root=tmp_path)
    cluster._write_conf()
    text = cluster.conf.read_text()
    assert "SchedulerParameters=sched_interval=1,batch_sched_delay=0,sched_min_interval=0\n" \
        in text
    assert "Priority" not in text
