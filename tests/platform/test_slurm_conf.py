"""slurm.conf reading: nodes, partitions, settings, and every unsupported setting named."""

from __future__ import annotations

from pathlib import Path

import pytest

from dispatchlab.errors import ConfigError
from dispatchlab.platform.hostlist import expand_hostlist
from dispatchlab.platform.resolve import resolve_platform
from dispatchlab.platform.slurm_conf import (
    SlurmConfWarning,
    parse_slurm_conf,
    parse_slurm_time,
    read_slurm_conf,
)

CONF = """\
# a small cluster
ClusterName=dl
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=10,bf_window=60,\\
bf_resolution=30,bf_continue,default_queue_depth=7
PriorityType=priority/multifactor
PriorityWeightAge=1000
PriorityMaxAge=1-0
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
NodeName=DEFAULT CPUs=4 RealMemory=8000
NodeName=n[01-03] NodeHostname=localhost State=UNKNOWN
NodeName=big Sockets=2 CoresPerSocket=8
PartitionName=main Nodes=n[01-03] Default=YES MaxTime=1-00:00:00 PriorityJobFactor=10
PartitionName=all Nodes=ALL MaxTime=INFINITE PriorityTier=2 MaxNodes=2
"""


def test_hostlist_ranges_keep_padding():
    assert expand_hostlist("n[01-03,7],m[1-2]x,z") == ["n01", "n02", "n03", "n7", "m1x",
                                                       "m2x", "z"]
    with pytest.raises(ValueError, match="decreasing"):
        expand_hostlist("n[3-1]")


@pytest.mark.parametrize(("text", "seconds"), [
    ("30", 1800), ("30:15", 1815), ("2:00:05", 7205), ("1-2", 93600),
    ("1-2:30", 95400), ("1-00:00:10", 86410), ("INFINITE", None), ("unlimited", None)])
def test_slurm_times(text, seconds):
    assert parse_slurm_time(text) == seconds


def test_nodes_partitions_and_settings():
    conf = parse_slurm_conf(CONF, source="x.conf")
    assert [(n.name, n.cpus, n.real_memory) for n in conf.nodes] == [
        ("n01", 4, 8000), ("n02", 4, 8000), ("n03", 4, 8000), ("big", 16, 8000)]
    main, every = conf.partitions
    assert (main.max_time, main.priority_job_factor, main.priority_tier, main.default) == (
        86400, 10, 1, True)
    assert (every.nodes, every.max_time, every.max_nodes, every.priority_tier) == (
        ("ALL",), None, 2, 2)
    assert conf.sched_params["bf_interval"] == 10
    assert conf.sched_params["bf_window"] == 60
    assert conf.sched_params["bf_resolution"] == 30
    assert conf.sched_params["default_queue_depth"] == 7
    assert conf.sched_params["bf_max_job_test"] == 500  # Slurm's default
    assert conf.bf_continue
    assert conf.seconds("prioritymaxage") == 86400
    assert conf.seconds("prioritydecayhalflife") == 7 * 86400  # default 7-0
    assert conf.memory
    assert [w.split(": ")[1].split()[0] for w in conf.warnings] == ["ClusterName", "NodeName",
                                                                    ]


def test_platform_from_file(tmp_path: Path):
    path = tmp_path / "slurm.conf"
    path.write_text(CONF)
    with pytest.warns(SlurmConfWarning):
        plat = resolve_platform(str(path))
    assert plat.node_names == ("n01", "n02", "n03", "big")
    assert plat.resources == ("cores", "mem")
    assert plat.capacity[:, 0].tolist() == [4, 4, 4, 16]
    assert plat.groups["all"].tolist() == [0, 1, 2, 3]
    assert plat.queues["main"].max_walltime == 86400
    assert plat.queues["all"].max_nodes == 2


@pytest.mark.parametrize(("line", "where", "key"), [
    ("PreemptType=preempt/qos", "x.conf:2", "PreemptType"),
    ("SchedulerType=sched/hold", "x.conf:2", "SchedulerType"),
    ("SelectTypeParameters=CR_CPU", "x.conf:2", "SelectTypeParameters"),
    ("SchedulerParameters=bf_busy_nodes", "x.conf:2", "SchedulerParameters"),
    ("SchedulerParameters=batch_sched_delay=3", "x.conf:2", "SchedulerParameters"),
    ("SchedulerParameters=sched_min_interval=2", "x.conf:2", "SchedulerParameters"),
    ("PriorityFlags=SMALL_RELATIVE_TO_TIME", "x.conf:2", "PriorityFlags"),
    ("NodeName=q1 CPUs=2 Weight=5", "x.conf:2", "weight"),
    ("NodeName=q1 CPUs=2 ThreadsPerCore=2", "x.conf:2", "ThreadsPerCore"),
    ("PartitionName=p Nodes=n01 OverSubscribe=FORCE", "x.conf:2", "oversubscribe"),
    ("PartitionName=p Nodes=n09", "x.conf:2", "Nodes"),
])
def test_unsupported_settings_name_file_line_and_key(line, where, key):
    text = "NodeName=n01 CPUs=4\n" + line + "\nPartitionName=q Nodes=n01\n"
    with pytest.raises(ConfigError) as err:
        parse_slurm_conf(text, source="x.conf")
    assert str(err.value).startswith(f"{where}: field '{key}'")


def test_zero_scheduling_delays_are_the_modelled_behaviour():
    """The local test cluster's slurm.conf sets batch_sched_delay=0,sched_min_interval=0:
    event-triggered passes at the event, which is what the family simulates."""
    text = ("NodeName=n01 CPUs=4\nSchedulerParameters=sched_interval=1,batch_sched_delay=0,"
            "sched_min_interval=0,bf_interval=1\nPartitionName=q Nodes=n01\n")
    conf = parse_slurm_conf(text, source="x.conf")
    assert conf.sched_params["sched_interval"] == 1 and conf.sched_params["bf_interval"] == 1


def test_settings_without_effect_are_listed_as_a_warning(tmp_path: Path):
    path = tmp_path / "slurm.conf"
    path.write_text(CONF)
    with pytest.warns(SlurmConfWarning, match=r"ClusterName \(line 2\); NodeName nodehostname"):
        read_slurm_conf(path)
