"""A throw-away Slurm cluster on localhost: a private munged, one slurmctld, N slurmd.

Everything lives in one folder (configuration, state, logs, spool, the munge socket and
the job completion log); the daemons and every client command read the generated
``slurm.conf`` through ``SLURM_CONF``, so ``/etc/slurm`` is never needed or touched. Nodes
declare more CPUs than the host has (``SlurmdParameters=config_overrides``). The daemons
are stopped by the pids this object started, nothing else.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from dispatchlab.errors import DispatchlabError
from dispatchlab.processes import pid_alive

if TYPE_CHECKING:
    from dispatchlab.live.slurm_accounting import SlurmAccounting

#: Daemons and commands the local cluster needs (Debian: slurmctld slurmd slurm-client munge).
REQUIRED = ("munged", "slurmctld", "slurmd", "sinfo", "squeue", "sbatch", "scontrol")
_SBIN = ("/usr/sbin", "/sbin", "/usr/local/sbin")


class SlurmUnavailable(DispatchlabError):
    """The Slurm daemons or munge are not installed (or cannot start here)."""


def find_program(name: str) -> str | None:
    """The path of ``name`` on PATH or in the sbin folders (daemons live there)."""
    found = shutil.which(name)
    if found:
        return found
    for folder in _SBIN:
        path = Path(folder) / name
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    return None


def missing_programs() -> list[str]:
    """The required programs that are not installed."""
    return [p for p in REQUIRED if find_program(p) is None]


def _free_port_block(count: int, start: int = 17000, stop: int = 40000) -> int:
    """The first port of ``count`` consecutive ports free on localhost."""
    base = start + (os.getpid() * 7) % 5000  # spread concurrent clusters apart
    port = base
    while port + count < stop:
        ok = True
        for p in range(port, port + count):
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                try:
                    s.bind(("127.0.0.1", p))
                except OSError:
                    ok = False
                    break
        if ok:
            return port
        port += count + 1
    raise SlurmUnavailable(f"no block of {count} free TCP ports between {start} and {stop}")


@dataclass
class LocalCluster:
    """``nodes`` slurmd named ``n1 … nN`` with ``cpus`` CPUs each in partition ``partition``.

    ``scheduler``: Slurm's own scheduler plugin (``builtin`` or ``backfill``); ``root``:
    the folder (default: a new temporary one, removed by :meth:`stop` unless ``keep``);
    ``message_timeout``: Slurm's ``MessageTimeout`` in s (default: Slurm's, 10 s; a
    client command waits about that long for a controller that is down);
    ``sched_params``: more ``SchedulerParameters`` entries (comma-separated, e.g.
    ``bf_window=2,bf_max_job_test=20``), after the generated ones; ``extra_conf``: more
    slurm.conf lines (e.g. ``PriorityType=priority/multifactor``), before the nodes;
    ``accounting``: run slurmdbd on a private MariaDB (:mod:`.slurm_accounting`, set
    as ``dbd`` by :meth:`start`) so ``sacct``, ``sacctmgr`` and ``sshare`` work.
    """

    nodes: int = 4
    cpus: int = 4
    partition: str = "main"
    scheduler: str = "builtin"
    root: Path | None = None
    keep: bool = False
    message_timeout: int | None = None
    sched_params: str = ""
    extra_conf: str = ""
    accounting: bool = False
    pids: dict[str, int] = field(default_factory=dict)
    _made_root: bool = False
    dbd: SlurmAccounting | None = field(default=None, repr=False)

    # ---- paths ---------------------------------------------------------------------------

    @property
    def conf(self) -> Path:
        """The generated slurm.conf."""
        return self._root / "slurm.conf"

    @property
    def jobcomp(self) -> Path:
        """The job completion log (``jobcomp/filetxt``)."""
        return self._root / "jobcomp.log"

    @property
    def _root(self) -> Path:
        if self.root is None:
            raise SlurmUnavailable("the local cluster was not started")
        return self.root

    def env(self) -> dict[str, str]:
        """The environment for client commands (``SLURM_CONF`` set)."""
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def node_names(self) -> list[str]:
        return [f"n{k}" for k in range(1, self.nodes + 1)]

    # ---- start and stop ------------------------------------------------------------------

    def start(self, timeout: float = 30.0) -> LocalCluster:
        """Start munged, slurmctld and the slurmd; return when every node is idle."""
        missing = missing_programs()
        if missing:
            raise SlurmUnavailable(
                f"not installed: {', '.join(missing)} (Debian: apt-get install slurmctld "
                "slurmd slurm-client munge; or run .ci/setup-slurm.sh)")
        if self.scheduler not in ("builtin", "backfill"):
            raise SlurmUnavailable(f"scheduler must be builtin or backfill, not {self.scheduler!r}")
        if self.root is None:
            self.root = Path(tempfile.mkdtemp(prefix="dispatchlab-slurm-"))
            self._made_root = True
        root = self._root
        for sub in ("state", "munge"):
            (root / sub).mkdir(parents=True, exist_ok=True)
        os.chmod(root / "munge", 0o700)
        try:
            self._start_munge()
            self._write_conf()
            if self.dbd is not None:
                self.dbd.start()
            self._start_daemons()
            self.wait_idle(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def _start_munge(self) -> None:
        root = self._root / "munge"
        key = Path("/etc/munge/munge.key")
        if not key.exists():
            raise SlurmUnavailable(f"{key} is missing (the munge package creates it)")
        cmd = [str(find_program("munged")), "--force", f"--socket={root}/munge.socket",
               f"--pid-file={root}/munged.pid", f"--log-file={root}/munged.log",
               f"--seed-file={root}/munged.seed", f"--key-file={key}"]
        self._run_daemon("munged", cmd, root / "munged.pid")

    def _write_conf(self) -> None:
        root = self._root
        ctl_port = _free_port_block(self.nodes + 3)  # controller, nodes, slurmdbd, MariaDB
        first, last = ctl_port + 1, ctl_port + self.nodes
        storage = "AccountingStorageType=accounting_storage/none"
        if self.accounting:
            from dispatchlab.live.slurm_accounting import SlurmAccounting

            self.dbd = SlurmAccounting(self, dbd_port=last + 1, db_port=last + 2)
            storage = self.dbd.slurm_conf_lines()
        # react at once: no batch scheduling delay, no throttling of event-driven passes
        quick = "sched_interval=1,batch_sched_delay=0,sched_min_interval=0"
        sched = (f"SchedulerType=sched/backfill\nSchedulerParameters={quick},"
                 "bf_interval=1,bf_resolution=1,bf_continue"
                 if self.scheduler == "backfill"
                 else f"SchedulerType=sched/builtin\nSchedulerParameters={quick}")
        if self.sched_params:
            sched += f",{self.sched_params.strip(',')}"
        extra = "".join(f"{line.strip()}\n" for line in self.extra_conf.splitlines()
                        if line.strip())
        names = f"n[1-{self.nodes}]" if self.nodes > 1 else "n1"
        ports = f"{first}-{last}" if self.nodes > 1 else str(first)
        timeout = ("" if self.message_timeout is None
                   else f"MessageTimeout={self.message_timeout}\n")
        self.conf.write_text(f"""# generated by dispatchlab.live.local_cluster
ClusterName=dl
SlurmctldHost=localhost
SlurmctldPort={ctl_port}
AuthType=auth/munge
AuthInfo=socket={root}/munge/munge.socket
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
{storage}
JobCompType=jobcomp/filetxt
JobCompLoc={self.jobcomp}
{sched}
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
MinJobAge=600
SlurmUser=root
SlurmdUser=root
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool-%n
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd-%n.pid
SlurmctldLogFile={root}/slurmctld.log
SlurmdLogFile={root}/slurmd-%n.log
MailProg=/bin/true
{timeout}{extra}NodeName={names} NodeHostname=localhost Port={ports} CPUs={self.cpus} State=UNKNOWN
PartitionName={self.partition} Nodes={names} Default=YES MaxTime=INFINITE State=UP
""")

    def _start_daemons(self) -> None:
        root = self._root
        env = self.env()
        self._run_daemon("slurmctld", [str(find_program("slurmctld")), "-c", "-i"],
                         root / "slurmctld.pid", env)
        for name in self.node_names():
            self._run_daemon(f"slurmd-{name}", [str(find_program("slurmd")), "-N", name],
                             root / f"slurmd-{name}.pid", env)

    def _run_daemon(self, key: str, cmd: list[str], pid_file: Path,
                    env: dict[str, str] | None = None) -> None:
        """Run a daemon (it forks); record its pid from its pid file."""
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=30)
        if out.returncode != 0:
            raise SlurmUnavailable(f"{' '.join(cmd)} failed ({out.returncode}): "
                                   f"{(out.stderr or out.stdout).strip()[-500:]}")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                self.pids[key] = int(pid_file.read_text().split()[0])
                return
            except (OSError, ValueError, IndexError):
                time.sleep(0.05)
        raise SlurmUnavailable(f"{key} wrote no pid file {pid_file}")

    def stop_controller(self) -> None:
        """Stop slurmctld (it saves its state; the slurmd and the jobs keep running)."""
        if "slurmctld" in self.pids:
            _terminate([self.pids.pop("slurmctld")])

    def start_controller(self) -> None:
        """Start slurmctld again from its saved state (jobs and nodes as it left them),
        unless it runs."""
        if "slurmctld" in self.pids and pid_alive(self.pids["slurmctld"]):
            return
        pid_file = self._root / "slurmctld.pid"
        pid_file.unlink(missing_ok=True)
        self._run_daemon("slurmctld", [str(find_program("slurmctld")), "-i"], pid_file,
                         self.env())

    def wait_idle(self, timeout: float = 30.0) -> None:
        """Wait until every node reports idle."""
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            out = subprocess.run(["sinfo", "-h", "-N", "-o", "%N %t"], env=self.env(),
                                 capture_output=True, text=True, timeout=10)
            last = (out.stdout + out.stderr).strip()
            states = dict(line.split()[:2] for line in out.stdout.splitlines()
                          if len(line.split()) >= 2)
            if out.returncode == 0 and all(states.get(n) == "idle" for n in self.node_names()):
                return
            time.sleep(0.2)
        raise SlurmUnavailable(f"nodes not idle after {timeout:.0f} s: {last[-300:]!r} "
                               f"(logs in {self._root})")

    def stop(self) -> None:
        """Stop the daemons this object started (by pid); remove the folder it made."""
        slurmds = [self.pids.pop(k) for k in list(self.pids) if k.startswith("slurmd-")]
        _terminate(slurmds)  # all at once: each takes seconds to exit
        # slurmctld sends its last records to slurmdbd, which writes them to MariaDB
        for keys in (("slurmctld",), ("slurmdbd",), ("mariadbd", "munged")):
            _terminate([self.pids.pop(k) for k in keys if k in self.pids])
        if self._made_root and not self.keep and self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> LocalCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _terminate(pids: list[int], timeout: float = 10.0) -> None:
    """SIGTERM ``pids``; SIGKILL those still there after ``timeout`` seconds."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    left = [p for p in pids if pid_alive(p)]
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = [p for p in left if pid_alive(p)]
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
