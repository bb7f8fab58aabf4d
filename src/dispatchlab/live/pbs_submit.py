"""A replay's side of OpenPBS: ``qsub`` a job, and read back what the server recorded.

A job of C CPUs is ``qsub -q QUEUE -l select=C:ncpus=1 -l place=free -l walltime=…`` (one
CPU per chunk, so any spread over vnodes and hosts is a valid ``qrun -H``), unheld: with
``scheduling`` False nothing but the adapter starts it. The job script reads its recorded
start (``stime``) from ``qstat -f``, with the client's absolute path and ``PBS_CONF_FILE``
(a job's environment has neither).

Finished jobs come from the accounting log (``server_priv/accounting/*``): the first ``S``
record's ``start`` (a restarted server writes ``S`` again for the jobs it finds running,
with the recovery time), the ``E`` record's ``end``, ``exec_vnode`` and ``run_count``.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dispatchlab.errors import ConfigError, DispatchlabError
from dispatchlab.live.pbs_state import job_number
from dispatchlab.live.replay import Realized, ReplayJob, run_submit
from dispatchlab.workload.pbs_accounting import pbs_records


def pbs_start_shell(qstat: str, conf: str) -> str:
    """The shell that sets ``s`` to the running job's ``stime`` (a date ``date -d``
    reads), asking the server with ``qstat`` under configuration ``conf``."""
    return (f's=$(PBS_CONF_FILE={shlex.quote(conf)} {shlex.quote(qstat)} -f "$PBS_JOBID" '
            "| sed -n 's/^ *stime = //p')")


def walltime_text(minutes: int) -> str:
    """``HH:MM:SS`` of a whole number of minutes."""
    return f"{minutes // 60:02d}:{minutes % 60:02d}:00"


@dataclass
class PbsTarget:
    """Submits to queue ``queue`` with ``env`` (``PBS_CONF_FILE``, ``PATH`` with PBS's
    ``bin``), each command after ``prefix`` (e.g. the namespace and ``runuser`` of the
    local cluster: jobs are submitted as a non-root user); ``accounting``: the server's
    accounting folder (where :meth:`realized` reads); ``together``: a tick's jobs arrive
    together (:meth:`submit_tick`), else one ``qsub`` after the other."""

    env: Mapping[str, str]
    queue: str = "workq"
    prefix: Sequence[str] = ()
    accounting: Path | None = None
    adapter_holds: bool = False
    together: bool = True
    start_shell: str = field(init=False, default="")

    def __post_init__(self) -> None:
        conf = self.env.get("PBS_CONF_FILE", "")
        qstat = shutil.which("qstat", path=self.env.get("PATH", ""))
        if not conf or qstat is None:
            raise ConfigError("a PBS replay needs PBS_CONF_FILE and qstat on PATH in its "
                              "environment", field="system")
        self.start_shell = pbs_start_shell(qstat, conf)

    def _qsub_args(self, job: ReplayJob, hold: bool) -> list[str]:
        args = ["qsub", "-q", self.queue, "-N", job.name, "-l", f"select={job.cores}:ncpus=1",
                "-l", "place=free", "-l", f"walltime={walltime_text(job.minutes)}",
                "-j", "oe", "-o", "/dev/null"]
        if hold:
            args.append("-h")
        return [*args, "--", "/bin/sh", "-c", job.script]

    def submit(self, job: ReplayJob, hold: bool, *, retry_for: float = 60.0,
               log: Callable[..., None] | None = None) -> int:
        """``qsub`` one job (``hold``: with a user hold, ``-h``), retried
        (:func:`run_submit`); its number."""
        return run_submit([*self.prefix, *self._qsub_args(job, hold)], self.env,
                          lambda out: job_number(out.strip()),
                          lambda: self._job_named(job.name), program="qsub",
                          retry_for=retry_for, log=log, job=job.job)

    def submit_tick(self, jobs: Sequence[ReplayJob], hold: bool, *, retry_for: float,
                    log: Callable[..., None] | None
                    ) -> Iterator[tuple[ReplayJob, int | DispatchlabError]]:
        """One job: ``qsub``. Several: all ``qsub -h`` in one shell, then one ``qrls``
        (unless ``hold``), so that the adapter sees the tick's jobs arrive together, as
        the simulation does (one by one, ~70 ms each, a burst of ten would be decided on
        while still arriving, and spill into the next tick)."""
        if len(jobs) == 1 or not self.together:
            for job in jobs:
                try:
                    yield job, self.submit(job, hold, retry_for=retry_for, log=log)
                except DispatchlabError as err:
                    yield job, err
            return
        got: list[int | DispatchlabError] = []
        for job, first in zip(jobs, self._batch(jobs), strict=True):
            try:
                got.append(first if first is not None else
                           self.submit(job, True, retry_for=retry_for, log=log))
            except DispatchlabError as err:
                got.append(err)
        ids = [g for g in got if isinstance(g, int)]
        if ids and not hold:
            try:
                run_submit([*self.prefix, "qrls", "-h", "u", *map(str, ids)], self.env,
                           lambda _: 0, lambda: None, program="qrls", retry_for=retry_for,
                           log=log, job=jobs[0].job)
            except DispatchlabError as err:
                got = [DispatchlabError(f"submitted held as {g}, not released: {err}")
                       if isinstance(g, int) else g for g in got]
        yield from zip(jobs, got, strict=True)

    def _batch(self, jobs: Sequence[ReplayJob]) -> list[int | None]:
        """``qsub -h`` every job in one shell (one namespace entry and user switch); each
        job's number, None where its ``qsub`` failed (or the shell did)."""
        script = "\n".join(f"{shlex.join(self._qsub_args(j, True))} || echo -" for j in jobs)
        try:
            res = subprocess.run([*self.prefix, "sh", "-c", script], env=dict(self.env),
                                 capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            return [None] * len(jobs)
        lines = res.stdout.split()
        if len(lines) != len(jobs):
            return [None] * len(jobs)
        return [job_number(x) if x[:1].isdigit() else None for x in lines]

    def _job_named(self, name: str) -> int | None:
        """The queued, held or running job called ``name`` (None if none, or no answer)."""
        try:
            res = subprocess.run([*self.prefix, "qselect", "-N", name, "-s", "QHR"],
                                 env=dict(self.env), capture_output=True, text=True,
                                 timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return None
        ids = res.stdout.split() if res.returncode == 0 else []
        return job_number(ids[0]) if len(ids) == 1 else None

    def realized(self) -> dict[int, Realized]:
        """Every ended job of the accounting log (:func:`accounting_runs`)."""
        return accounting_runs(self.accounting) if self.accounting is not None else {}


def accounting_runs(folder: Path) -> dict[int, Realized]:
    """Job number → what the server recorded, for each job with an ``E`` record after an
    ``S`` record in the accounting files of ``folder`` (oldest first): submit (``qtime``),
    the first ``S`` record's ``start``, the ``E`` record's ``end``, ``exec_vnode``,
    ``Exit_status`` and ``run_count``."""
    first: dict[int, int] = {}
    out: dict[int, Realized] = {}
    for path in sorted(p for p in folder.glob("*") if p.is_file()):
        for _, kind, ident, attrs in pbs_records(path.read_text(errors="replace")):
            if kind not in ("S", "E") or not ident[:1].isdigit():
                continue
            job = job_number(ident)
            if kind == "S" and "start" in attrs:
                first.setdefault(job, int(attrs["start"]))
            elif kind == "E" and job in first and "end" in attrs:
                out[job] = Realized(
                    submit=int(attrs.get("qtime") or attrs.get("ctime") or 0),
                    start=first[job], end=int(attrs["end"]),
                    nodes=attrs.get("exec_vnode", ""),
                    state=f"exit {attrs.get('Exit_status', '?')}",
                    runs=int(attrs.get("run_count", 1)))
    return out
