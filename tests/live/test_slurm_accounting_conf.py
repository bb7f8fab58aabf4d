"""The accounting files the local cluster writes, and the message when slurmdbd or MariaDB
is missing (no daemon is started here)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from dispatchlab.live import slurm_accounting
from dispatchlab.live.local_cluster import LocalCluster, SlurmUnavailable
from dispatchlab.live.slurm_accounting import SlurmAccounting


def _accounting(tmp_path: Path) -> SlurmAccounting:
    return SlurmAccounting(LocalCluster(root=tmp_path), dbd_port=20001, db_port=20002)


def test_slurm_conf_points_at_the_private_slurmdbd_and_munge(tmp_path: Path) -> None:
    lines = dict(line.split("=", 1) for line in _accounting(tmp_path).slurm_conf_lines()
                 .splitlines())
    assert lines == {"AccountingStorageType": "accounting_storage/slurmdbd",
                     "AccountingStorageHost": "localhost", "AccountingStoragePort": "20001",
                     "AccountingStoragePass": f"{tmp_path}/munge/munge.socket"}


def test_slurmdbd_conf_is_private_and_uses_tcp_to_its_own_database(tmp_path: Path) -> None:
    acct = _accounting(tmp_path)
    acct._write_dbd_conf()
    conf = tmp_path / "slurmdbd.conf"
    assert acct.dbd_conf == conf
    assert stat.S_IMODE(conf.stat().st_mode) == 0o600
    keys = dict(line.split("=", 1) for line in conf.read_text().splitlines()
                if "=" in line and not line.startswith("#"))
    assert keys["StorageHost"] == "127.0.0.1"  # "localhost" would take the system socket
    assert keys["StoragePort"] == "20002" and keys["DbdPort"] == "20001"
    assert keys["StoragePass"] == acct.password and len(acct.password) == 24
    assert keys["PidFile"] == f"{tmp_path}/slurmdbd.pid"
    assert acct.password not in repr(acct)


def test_missing_programs_are_named_with_the_packages(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    real = slurm_accounting.find_program
    monkeypatch.setattr(slurm_accounting, "find_program",
                        lambda name: None if name.startswith("maria") else real(name))
    with pytest.raises(SlurmUnavailable, match=r"mariadbd.*apt-get install slurmdbd "
                                                r"mariadb-server"):
        _accounting(tmp_path).start()
    assert not (tmp_path / "mariadb").exists()  # nothing was created
