"""A throw-away OpenPBS (server, comm, PostgreSQL, one mom with N vnodes) in a network namespace.

PBS's TPP layer ignores 127.x addresses, so a single host needs another name: the cluster runs
inside a private network namespace whose loopback carries 198.18.0.1/32 (only addresses inside
that namespace; the namespace's own ``/etc/netns/NS/hosts`` names it ``pbshost``). No pbs_sched
runs and ``scheduling`` is False: jobs stay queued until something runs them (``qrun -H``).
Everything lives in one folder (pbs.conf, PBS_HOME with the accounting log, vnode definitions);
the daemons are stopped by the pids found in the namespace, nothing else. A never-started
PBS_HOME is kept beside the build as a template (a start from it takes ~5 s instead of ~15 s).
Needs root and a build from :mod:`dispatchlab.live.pbs_build`.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from dispatchlab.errors import DispatchlabError
from dispatchlab.live import pbs_build
from dispatchlab.live.local_cluster import _terminate
from dispatchlab.processes import pid_alive

#: The server's host name inside the namespace, and its address there.
SERVER = "pbshost"
ADDRESS = "198.18.0.1"
#: The (non-root) user jobs are submitted as (root submissions are refused).
JOB_USER = "pbsuser"


class PbsUnavailable(DispatchlabError):
    """OpenPBS is not built here, or the local cluster cannot start."""


def _run(cmd: list[str], what: str, timeout: float = 120, env: dict[str, str] | None = None,
         input_text: str = "") -> str:
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                         input=input_text)
    if out.returncode != 0:
        raise PbsUnavailable(f"{what} failed ({out.returncode}): "
                             f"{(out.stderr or out.stdout).strip()[-400:]}")
    return str(out.stdout)


@dataclass
class LocalPbs:
    """``vnodes`` vnodes ``vnode1 … vnodeN`` of ``cpus`` CPUs on one mom.

    ``root``: the state folder (default: a new temporary one, removed by :meth:`stop`
    unless ``keep``).
    """

    vnodes: int = 4
    cpus: int = 2
    root: Path | None = None
    keep: bool = False
    netns: str = field(default_factory=lambda: f"dlpbs{os.getpid()}")
    exec_prefix: Path = field(default_factory=pbs_build.prefix)
    _made_root: bool = False
    _started: bool = False

    # ---- paths and commands --------------------------------------------------------------

    @property
    def _root(self) -> Path:
        if self.root is None:
            raise PbsUnavailable("the local PBS was not started")
        return self.root

    @property
    def conf(self) -> Path:
        """The generated pbs.conf (``PBS_CONF_FILE``)."""
        return self._root / "pbs.conf"

    @property
    def home(self) -> Path:
        """PBS_HOME (server_priv/accounting holds the accounting log)."""
        return self._root / "home"

    @property
    def accounting(self) -> Path:
        """The folder of the server's accounting log (one file per day)."""
        return self.home / "server_priv" / "accounting"

    def vnode_names(self) -> list[str]:
        return [f"vnode{k}" for k in range(1, self.vnodes + 1)]

    def env(self) -> dict[str, str]:
        """The environment for PBS commands (PBS_CONF_FILE, PATH with the build first)."""
        path = f"{self.exec_prefix}/bin:{self.exec_prefix}/sbin:{pbs_build.SYSTEM_PATH}"
        return {**os.environ, "PBS_CONF_FILE": str(self.conf), "PATH": path}

    def prefix(self, keep_path: bool = False) -> list[str]:
        """The command prefix that runs a command inside the namespace with :meth:`env`
        (``keep_path``: the caller's PATH after PBS's folders, e.g. to find a venv's
        ``dispatchlab``; the daemons get the system's only, so hooks run Debian's Python)."""
        env = self.env()
        path = env["PATH"]
        if keep_path:
            path = f"{self.exec_prefix}/bin:{self.exec_prefix}/sbin:{os.environ.get('PATH', '')}"
        return ["ip", "netns", "exec", self.netns, "env", f"PBS_CONF_FILE={env['PBS_CONF_FILE']}",
                f"PATH={path}"]

    def wrap(self, command: list[str], keep_path: bool = False) -> list[str]:
        """``command`` run inside the namespace."""
        return [*self.prefix(keep_path), *command]

    def as_user(self, command: list[str], user: str = JOB_USER) -> list[str]:
        """``command`` run inside the namespace as ``user``, in its home folder."""
        return [*self.prefix(), "runuser", "-u", user, "--", "sh", "-c", 'cd && exec "$@"',
                "sh", *command]

    # ---- start and stop ------------------------------------------------------------------

    def start(self, timeout: float = 90.0) -> LocalPbs:
        """Start comm, PostgreSQL, server and mom; return when every vnode is free."""
        reason = pbs_build.unavailable_reason(self.exec_prefix.parent)
        if reason:
            raise PbsUnavailable(reason)
        if os.geteuid() != 0:
            raise PbsUnavailable("the local PBS needs root (network namespace, daemons)")
        if shutil.which("ip") is None:
            raise PbsUnavailable("the ip command (iproute2) is not installed")
        if self.root is None:
            self.root = Path(tempfile.mkdtemp(prefix="dispatchlab-pbs-"))
            self._made_root = True
        self._root.mkdir(parents=True, exist_ok=True)
        self._root.chmod(0o755)
        try:
            self._ensure_user()
            self._make_netns()
            self._started = True
            self._make_home()
            _run(self.wrap([f"{self.exec_prefix}/libexec/pbs_init.d", "start"]), "pbs_init.d start",
                 timeout=180)
            self.qmgr("set server scheduling = False", "set server job_history_enable = True")
            self.wait_free(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def _ensure_user(self) -> None:
        if subprocess.run(["id", JOB_USER], capture_output=True).returncode != 0:
            _run(["useradd", "-m", "-s", "/bin/sh", JOB_USER], f"useradd {JOB_USER}")

    def _make_netns(self) -> None:
        hosts = Path("/etc/netns") / self.netns
        if hosts.exists() or self.netns in _run(["ip", "netns", "list"], "ip netns list").split():
            raise PbsUnavailable(f"network namespace {self.netns} exists (tools/pbs-local stop)")
        _run(["ip", "netns", "add", self.netns], "ip netns add")
        (self._root / "cluster.json").write_text(json.dumps({"netns": self.netns}))
        _run(["ip", "netns", "exec", self.netns, "ip", "link", "set", "lo", "up"], "lo up")
        _run(["ip", "netns", "exec", self.netns, "ip", "addr", "add", f"{ADDRESS}/32", "dev", "lo"],
             "ip addr add")
        hosts.mkdir(parents=True)
        me = os.uname().nodename
        names = f"{SERVER} {me}" if me and me != "localhost" else SERVER
        (hosts / "hosts").write_text(f"127.0.0.1 localhost\n{ADDRESS} {names}\n")

    def _write_conf(self) -> None:
        port = _free_db_port()
        lines = {
            "PBS_EXEC": self.exec_prefix, "PBS_HOME": self.home, "PBS_SERVER": SERVER,
            "PBS_SERVER_HOST_NAME": SERVER, "PBS_LEAF_NAME": SERVER, "PBS_COMM_NAME": SERVER,
            "PBS_MOM_NODE_NAME": SERVER, "PBS_START_SERVER": 1, "PBS_START_COMM": 1,
            "PBS_START_SCHED": 0, "PBS_START_MOM": 1, "PBS_DATA_SERVICE_PORT": port,
            "PBS_CORE_LIMIT": "unlimited", "PBS_SCP": "/usr/bin/scp",
        }
        self.conf.write_text("".join(f"{k}={v}\n" for k, v in lines.items()))

    def _make_home(self) -> None:
        self._write_conf()
        template = self.exec_prefix.parent / "home-template"
        if (template / "pbs_version").is_file():
            _run(["cp", "-a", str(template), str(self.home)], "copy of the PBS_HOME template")
        else:
            version = pbs_version_of(self.exec_prefix)
            _run([f"{self.exec_prefix}/libexec/pbs_postinstall", "server", version,
                  str(self.exec_prefix), str(self.home), "postgres", "sameconf"], "pbs_postinstall",
                 env=self.env())
            with open(self.home / "mom_priv" / "config", "a") as config:
                config.write("$usecp *:/ /\n")  # no sshd: job output is copied locally
            _run(self.wrap([f"{self.exec_prefix}/libexec/pbs_habitat"]), "pbs_habitat", timeout=300)
            subprocess.run(self.wrap([f"{self.exec_prefix}/sbin/pbs_dataservice", "stop"]),
                           capture_output=True, timeout=60)
            partial = template.with_name("home-template.tmp")
            shutil.rmtree(partial, ignore_errors=True)
            if subprocess.run(["cp", "-a", str(self.home), str(partial)]).returncode == 0:
                try:
                    partial.rename(template)
                except OSError:  # another start saved one meanwhile: keep it
                    shutil.rmtree(partial, ignore_errors=True)
        definition = self._root / "vnodes.def"
        lines = ["$configversion 2", f"{SERVER}: resources_available.ncpus = 0"]
        for name in self.vnode_names():
            lines += [f"{name}: resources_available.ncpus = {self.cpus}",
                      f"{name}: sharing = default_shared"]
        definition.write_text("\n".join(lines) + "\n")
        _run([f"{self.exec_prefix}/sbin/pbs_mom", "-s", "insert", "vnodes", str(definition)],
             "pbs_mom -s insert", env=self.env())

    def qmgr(self, *commands: str) -> str:
        """Run qmgr commands (one here-document: ``qmgr -c A -c B`` applies only B)."""
        return _run(self.wrap(["qmgr"]), "qmgr", input_text="\n".join(commands) + "\n")

    def stop_server(self) -> None:
        """Stop pbs_server (``qterm -t quick``: jobs keep running on the mom; the server's
        PostgreSQL stops with it)."""
        _run(self.wrap(["qterm", "-t", "quick"]), "qterm")

    def start_server(self, timeout: float = 60.0) -> None:
        """Start pbs_server again (from its database: jobs and vnodes as it left them)."""
        _run(self.wrap([f"{self.exec_prefix}/sbin/pbs_server"]), "pbs_server", timeout=timeout)

    def wait_free(self, timeout: float = 90.0) -> None:
        """Wait until every vnode is free."""
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            out = subprocess.run(self.wrap(["pbsnodes", "-av", "-F", "json"]), capture_output=True,
                                 text=True, timeout=30)
            last = (out.stdout + out.stderr)[-300:]
            with contextlib.suppress(ValueError):
                nodes = json.loads(out.stdout).get("nodes", {})
                if all(nodes.get(n, {}).get("state") == "free" for n in self.vnode_names()):
                    return
            time.sleep(0.3)
        raise PbsUnavailable(f"vnodes not free after {timeout:.0f} s: {last!r} "
                             f"(logs in {self._root})")

    def pids(self) -> list[int]:
        """The pids of the processes inside the namespace (the daemons and their children)."""
        out = subprocess.run(["ip", "netns", "pids", self.netns], capture_output=True, text=True)
        return [int(p) for p in out.stdout.split()]

    def stop(self) -> None:
        """Stop the daemons (pbs_init.d stop, then what the namespace still holds, by pid)."""
        if self._started:
            self._started = False
            with contextlib.suppress(subprocess.TimeoutExpired):
                subprocess.run(self.wrap([f"{self.exec_prefix}/libexec/pbs_init.d", "stop"]),
                               capture_output=True, timeout=60)
            _terminate(self.pids(), timeout=5)
            postmaster = self.home / "datastore" / "postmaster.pid"
            with contextlib.suppress(OSError, ValueError, IndexError):
                pid = int(postmaster.read_text().split()[0])
                if pid_alive(pid) and "postgres" in Path(f"/proc/{pid}/comm").read_text():
                    _terminate([pid], timeout=20)
            subprocess.run(["ip", "netns", "del", self.netns], capture_output=True)
            shutil.rmtree(Path("/etc/netns") / self.netns, ignore_errors=True)
            with contextlib.suppress(OSError):
                Path("/etc/netns").rmdir()
        if self._made_root and not self.keep and self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)

    @classmethod
    def stop_folder(cls, root: Path) -> None:
        """Stop the cluster whose state folder is ``root`` (started by another process)."""
        state = json.loads((root / "cluster.json").read_text())
        cluster = cls(root=root, netns=state["netns"], keep=True)
        cluster._started = True
        cluster.stop()

    def __enter__(self) -> LocalPbs:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def pbs_version_of(exec_prefix: Path) -> str:
    """The version string pbs_postinstall expects (PBS_VERSION in libexec/pbs_db_env)."""
    with contextlib.suppress(OSError):
        for line in (exec_prefix / "libexec" / "pbs_db_env").read_text().splitlines():
            if line.startswith("PBS_VERSION="):
                return line.split("=", 1)[1].strip()
    return pbs_build.VERSION.split("-")[0]


def _free_db_port() -> int:
    """A PostgreSQL port whose unix socket (in the shared /var/run/postgresql) is unused."""
    base = 15100 + (os.getpid() * 7) % 800
    for port in range(base, base + 400):
        if not Path(f"/var/run/postgresql/.s.PGSQL.{port}").exists():
            return port
    raise PbsUnavailable("no free PostgreSQL port between 15100 and 16300")
