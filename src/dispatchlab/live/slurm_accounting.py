"""Real accounting for the local Slurm cluster: a private MariaDB and slurmdbd.

The database is throw-away: ``mariadb-install-db`` creates a data folder inside the
cluster's folder, and ``mariadbd`` runs on it with its own socket and TCP port
(``--no-defaults``: no file under ``/etc/mysql`` is read, and the system's MariaDB, if
any, is never contacted). ``slurmdbd`` reads a ``slurmdbd.conf`` written beside the
cluster's ``slurm.conf`` (Slurm looks for it in ``SLURM_CONF``'s folder) and talks to
the database over TCP on 127.0.0.1 (a client given ``localhost`` would use the system's
default socket). Client commands reach slurmdbd through the private munged:
``AccountingStoragePass`` names its socket (slurm.conf(5)). The cluster ``dl``, the
accounts and the invoking user's associations are created with ``sacctmgr -i`` before
slurmctld starts. Daemons are started detached and stopped by the pids they write.

Debian packages: ``slurmdbd`` and ``mariadb-server`` (``.ci/setup-slurm.sh``).
"""

from __future__ import annotations

import os
import pwd
import secrets
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from dispatchlab.live.local_cluster import LocalCluster, SlurmUnavailable, find_program

#: Programs accounting needs (Debian: slurmdbd, mariadb-server; sacct, sacctmgr and
#: sshare come with slurm-client).
REQUIRED = ("slurmdbd", "mariadbd", "mariadb-install-db", "mariadb", "sacctmgr", "sacct",
            "sshare")
DATABASE = "slurm_acct_db"


class AccountingUnavailable(SlurmUnavailable):
    """slurmdbd or MariaDB is not installed, or the database did not come up."""


def missing_accounting_programs() -> list[str]:
    """The programs accounting needs that are not installed."""
    return [p for p in REQUIRED if find_program(p) is None]


@dataclass
class SlurmAccounting:
    """MariaDB on ``db_port`` and slurmdbd on ``dbd_port`` for ``cluster``.

    ``accounts``: the accounts created under the root account (the invoking user gets an
    association in each, and keeps its default ``root`` one).
    """

    cluster: LocalCluster = field(repr=False)
    dbd_port: int
    db_port: int
    accounts: tuple[str, ...] = ("alpha", "beta")
    password: str = field(default_factory=lambda: secrets.token_hex(12), repr=False)
    #: seconds each start-up step took (database, slurmdbd, sacctmgr)
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def folder(self) -> Path:
        """Where the database's files, socket and logs live."""
        return self.cluster._root / "mariadb"

    @property
    def socket(self) -> Path:
        return self.folder / "mysqld.sock"

    @property
    def dbd_conf(self) -> Path:
        """slurmdbd.conf, beside slurm.conf (where slurmdbd looks for it)."""
        return self.cluster.conf.parent / "slurmdbd.conf"

    def slurm_conf_lines(self) -> str:
        """The ``AccountingStorage*`` lines for slurm.conf."""
        munge = self.cluster._root / "munge" / "munge.socket"
        return ("AccountingStorageType=accounting_storage/slurmdbd\n"
                "AccountingStorageHost=localhost\n"
                f"AccountingStoragePort={self.dbd_port}\n"
                f"AccountingStoragePass={munge}")

    # ---- start -------------------------------------------------------------------------

    def start(self, timeout: float = 60.0) -> None:
        """Create and start the database, start slurmdbd, register cluster and accounts
        (slurm.conf must already be written; slurmctld starts after this)."""
        missing = missing_accounting_programs()
        if missing:
            raise AccountingUnavailable(
                f"not installed: {', '.join(missing)} (Debian: apt-get install slurmdbd "
                "mariadb-server; or run .ci/setup-slurm.sh)")
        steps = (("database", lambda: self._start_database(timeout)),
                 ("slurmdbd", self._start_slurmdbd),
                 ("sacctmgr", lambda: self._register(timeout)))
        for name, step in steps:
            began = time.monotonic()
            step()
            self.timings[name] = round(time.monotonic() - began, 2)

    def _start_database(self, timeout: float) -> None:
        data = self.folder / "data"
        data.mkdir(parents=True, exist_ok=True)
        install = [str(find_program("mariadb-install-db")), "--no-defaults",
                   f"--datadir={data}", "--user=root", "--skip-test-db",
                   "--auth-root-authentication-method=socket"]
        self._run(install, "mariadb-install-db", timeout)
        log = self.folder / "mariadbd.log"
        server = [str(find_program("mariadbd")), "--no-defaults", f"--datadir={data}",
                  "--user=root", f"--socket={self.socket}", f"--port={self.db_port}",
                  "--bind-address=127.0.0.1", "--skip-name-resolve", "--skip-log-bin",
                  f"--pid-file={self.folder / 'mariadbd.pid'}", f"--log-error={log}",
                  # slurmdbd's recommended settings (it warns otherwise)
                  "--innodb-buffer-pool-size=128M", "--innodb-lock-wait-timeout=900",
                  # a throw-away database: no flush to disk at each commit
                  "--innodb-flush-log-at-trx-commit=0", "--innodb-doublewrite=0"]
        # mariadbd stays in the foreground: a shell puts it in the background and exits,
        # so the server is nobody's child here and its pid file names it
        detach = ["sh", "-c", 'exec "$0" "$@" </dev/null >/dev/null 2>&1 &', *server]
        self.cluster._run_daemon("mariadbd", detach, self.folder / "mariadbd.pid")
        deadline = time.monotonic() + timeout
        while not self._sql("SELECT 1", check=False):
            if time.monotonic() > deadline:
                raise AccountingUnavailable(f"MariaDB did not answer on {self.socket} "
                                            f"within {timeout:.0f} s (log {log})")
            time.sleep(0.1)

    def _sql(self, statement: str, *, check: bool = True) -> bool:
        """Run ``statement`` as the database's root over its own socket."""
        cmd = [str(find_program("mariadb")), "--no-defaults", f"--socket={self.socket}",
               "-u", "root", "-e", statement]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        if check and out.returncode != 0:
            raise AccountingUnavailable(f"MariaDB refused {statement.split()[0]}: "
                                        f"{out.stderr.strip()[-300:]}")
        return out.returncode == 0

    def _create_user(self) -> None:
        self._sql(f"CREATE OR REPLACE USER 'slurm'@'127.0.0.1' IDENTIFIED BY '{self.password}'; "
                  f"GRANT ALL ON {DATABASE}.* TO 'slurm'@'127.0.0.1';")

    def _write_dbd_conf(self) -> None:
        root = self.cluster._root
        self.dbd_conf.write_text(f"""# generated by dispatchlab.live.slurm_accounting
AuthType=auth/munge
AuthInfo=socket={root}/munge/munge.socket
DbdHost=localhost
DbdPort={self.dbd_port}
SlurmUser=root
PidFile={root}/slurmdbd.pid
LogFile={root}/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort={self.db_port}
StorageUser=slurm
StoragePass={self.password}
StorageLoc={DATABASE}
""")
        self.dbd_conf.chmod(0o600)  # slurmdbd refuses a readable file holding a password

    def _start_slurmdbd(self) -> None:
        """Its database user, its configuration, then the daemon."""
        self._create_user()
        self._write_dbd_conf()
        self.cluster._run_daemon("slurmdbd", [str(find_program("slurmdbd"))],
                                 self.cluster._root / "slurmdbd.pid", self.cluster.env())

    def _register(self, timeout: float) -> None:
        """Cluster, accounts and the user's associations (``sacctmgr -i``); the first
        call waits for slurmdbd to listen."""
        user = pwd.getpwuid(os.geteuid()).pw_name
        deadline = time.monotonic() + timeout
        while True:
            out = self._sacctmgr("add", "cluster", "dl")
            if _done(out):
                break
            if time.monotonic() > deadline:
                raise AccountingUnavailable(
                    f"sacctmgr could not reach slurmdbd within {timeout:.0f} s: "
                    f"{out.stderr.strip()[-300:]} (log {self.cluster._root / 'slurmdbd.log'})")
            time.sleep(0.2)
        for cmd in (("add", "account", ",".join(self.accounts), "cluster=dl"),
                    ("add", "user", user, f"account={','.join(self.accounts)}",
                     "cluster=dl")):
            out = self._sacctmgr(*cmd)
            if not _done(out):
                raise AccountingUnavailable(f"sacctmgr -i {' '.join(cmd)} failed: "
                                            f"{(out.stderr or out.stdout).strip()[-300:]}")

    def _sacctmgr(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["sacctmgr", "-i", *args], env=self.cluster.env(),
                              capture_output=True, text=True, timeout=60)

    def _run(self, cmd: list[str], what: str, timeout: float) -> None:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        if out.returncode != 0:
            raise AccountingUnavailable(f"{what} failed ({out.returncode}): "
                                        f"{(out.stderr or out.stdout).strip()[-500:]}")


def _done(out: subprocess.CompletedProcess[str]) -> bool:
    """A ``sacctmgr -i add`` that worked, or found everything there (a reused ``root``)."""
    text = out.stdout + out.stderr
    return out.returncode == 0 or "already exists" in text or "Nothing new added" in text
