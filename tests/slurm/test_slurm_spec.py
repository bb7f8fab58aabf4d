"""The slurm family's specs: ``slurm``, ``slurm:conf=<file>``, one spelling, errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from dispatchlab.dispatchers.registry import canonical_spec, get_dispatcher
from dispatchlab.errors import ConfigError

CONF = "NodeName=n[1-2] CPUs=4\nPartitionName=p Nodes=ALL Default=YES\n"


def test_preset_and_conf_spec(tmp_path: Path):
    path = tmp_path / "slurm.conf"
    path.write_text(CONF)
    default = get_dispatcher("slurm").describe()
    assert (default["name"], default["conf"]) == ("slurm", "")
    assert default["settings"]["SchedulerType"] == "sched/backfill"  # Slurm's default
    assert default["settings"]["SchedulerParameters"]["bf_window"] == 1440
    described = get_dispatcher(f"slurm:conf={path}").describe()
    assert described["conf"] == str(path)
    assert described["settings"]["partitions"]["p"]["default"] is True
    assert canonical_spec(f"slurm={path}") == f"slurm:conf={path}"
    assert get_dispatcher(f"slurm:conf={path}").run_stats()["settings_not_used"] == []


def test_unknown_key_is_named(tmp_path: Path):
    path = tmp_path / "slurm.conf"
    path.write_text(CONF)
    with pytest.raises(ConfigError, match="unknown key 'bf_window'"):
        get_dispatcher(f"slurm:conf={path},bf_window=10")


def test_missing_file_is_named():
    with pytest.raises(ConfigError, match=r"nope\.conf: file not found"):
        get_dispatcher("slurm:conf=nope.conf")
