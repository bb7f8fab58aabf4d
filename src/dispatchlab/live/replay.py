"""Replay a trace slice onto a live Slurm or OpenPBS with time compressed by a factor.

Each job is submitted at its scaled submit time, to Slurm as ``sbatch -n <cores> -t
<minutes> --wrap "<sleep>"`` (:class:`SlurmTarget`), to PBS as ``qsub -l
select=<cores>:ncpus=1 -l walltime=<minutes> -- /bin/sh -c "<sleep>"``
(:class:`~dispatchlab.live.pbs_submit.PbsTarget`): one submission loop
(:func:`submit_replay`) and one job script (:func:`job_script`) for both, the target
supplying the command and how a job reads its recorded start. The twin counts time in
*ticks* of ``tick`` wall seconds (1 by default; one tick is ``compression`` trace
seconds): a live system needs some time to react to an end (0.1–0.3 s here, sometimes
more than a second under load), and a tick longer than that keeps its reactions inside
the step the simulation takes as instantaneous. Slurm's time limits are whole minutes
(PBS takes the same ones), so the scaled wall-time is rounded *up* to whole minutes —
never below what the job asked, never a kill the trace did not have — and the twin
workload (:func:`scaled_workload`) carries exactly those minutes as its requested times,
the scaled run time (whole ticks, at least 1, at most the limit: the system never has to
kill) as its run time and the scaled submit time as its submission: the simulator and
the system see the same requests. "Scaled seconds" are seconds of the replay's own clock
(ticks × tick).
"""

from __future__ import annotations

import math
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from dispatchlab.errors import ConfigError, DispatchlabError
from dispatchlab.workload.workload import Workload


def scaled_workload(wl: Workload, compression: float, tick: int = 1) -> Workload:
    """The twin of a replay, in *ticks* of ``tick`` wall seconds (``tick`` divides 60):
    one tick is ``compression`` trace seconds. Submit and run times become whole ticks
    (run ≥ 1); wall-times are rounded up to whole minutes of wall time, i.e. to multiples
    of ``60 / tick`` ticks; run times are capped by the wall-time."""
    if not compression > 0:
        raise ConfigError(f"compression must be > 0, got {compression}", field="compression")
    if tick < 1 or 60 % tick:
        raise ConfigError(f"tick must divide 60 s, got {tick}", field="tick")
    per_minute = 60 // tick
    submit = np.rint((wl.submit - wl.submit.min()) / compression).astype(np.int64)
    minutes = np.maximum(np.ceil(wl.walltime / compression / per_minute), 1).astype(np.int64)
    walltime = minutes * per_minute
    runtime = np.minimum(np.maximum(np.rint(wl.runtime / compression), 1), walltime
                         ).astype(np.int64)
    return Workload.from_columns(
        submit=submit, walltime=walltime, runtime=runtime, units=wl.units,
        req={r: wl.req[:, k] for k, r in enumerate(wl.resources)}, job_id=wl.job_id,
        user=[wl.users[u] for u in wl.user.tolist()], origin_unix=None,
        source=f"{wl.source} (compressed ×{compression:g})",
        meta={"compression": compression, "tick": tick,
              "walltime_rounding": "up to whole minutes"})


@dataclass
class Submitted:
    """Where a replay went: trace job id → the system's job id (``slurm_id``, named so
    before PBS; :attr:`ids` too), and the replay's time zero (Unix s, a whole second) —
    twin time t (ticks) is Unix time ``t0 + t × tick``."""

    slurm_id: dict[int, int]
    t0: int
    lag_s: dict[int, float]  # trace job id → submission lateness (s)
    failed: dict[int, str] = field(default_factory=dict)  # trace job id → last submit error

    @property
    def ids(self) -> dict[int, int]:
        """Trace job id → the batch system's job id."""
        return self.slurm_id

    def check_complete(self) -> None:
        """Raise :class:`DispatchlabError` naming the jobs that could not be submitted."""
        if self.failed:
            ids = ", ".join(str(j) for j in sorted(self.failed))
            first = self.failed[min(self.failed)]
            raise DispatchlabError(f"{len(self.failed)} trace job(s) could not be submitted "
                                   f"({ids}); {first}")


@dataclass(frozen=True)
class Realized:
    """What the batch system recorded of one finished job (Unix s): submit, start, end,
    where it ran, how often it was started."""

    submit: int
    start: int
    end: int
    nodes: str
    state: str
    runs: int = 1


#: Seconds between two attempts of a failed submission (the last one repeats).
SBATCH_BACKOFF = (0.5, 1.0, 2.0, 4.0, 8.0)
SUBMIT_BACKOFF = SBATCH_BACKOFF


def run_submit(args: list[str], env: Mapping[str, str] | None, parse: Callable[[str], int],
               lookup: Callable[[], int | None], *, program: str, retry_for: float = 60.0,
               log: Callable[..., None] | None = None, job: int | None = None) -> int:
    """Run the submission command ``args`` until it works, waiting :data:`SUBMIT_BACKOFF`
    between attempts for at most ``retry_for`` s (a controller restarting or busy); the
    job id ``parse`` reads from its output. An attempt that timed out may have submitted
    the job: ``lookup()`` finds it before trying again. Raises :class:`DispatchlabError`
    with the last error."""
    run_env = dict(env) if env else None
    deadline = time.monotonic() + retry_for
    attempt = 0
    while True:
        try:
            res = subprocess.run(args, env=run_env, capture_output=True, text=True,
                                 timeout=30)
            if res.returncode == 0:
                try:
                    return parse(res.stdout)
                except ValueError:
                    raise DispatchlabError(f"{program} answered {res.stdout.strip()!r}, not "
                                           "a job id") from None
            error = (res.stderr or res.stdout).strip() or f"exit code {res.returncode}"
        except subprocess.TimeoutExpired:
            error = f"{program} timed out after 30 s"
            found = lookup()
            if found is not None:
                return found
        except OSError as err:
            raise DispatchlabError(f"cannot run {program}: {err}") from None
        wait = SUBMIT_BACKOFF[min(attempt, len(SUBMIT_BACKOFF) - 1)]
        if time.monotonic() + wait > deadline:
            raise DispatchlabError(error)
        attempt += 1
        if log is not None:
            log("submit_retry", job=job, attempt=attempt, wait_s=wait, error=error)
        time.sleep(wait)


def sbatch(args: list[str], env: Mapping[str, str] | None, name: str, *,
           retry_for: float = 60.0, log: Callable[..., None] | None = None,
           job: int | None = None) -> int:
    """Run ``sbatch --parsable …`` (its job name ``name``) with :func:`run_submit` (a
    timed-out attempt: the job of that name is looked up); the Slurm job id."""
    run_env = dict(env) if env else None
    return run_submit(args, env, lambda out: int(out.strip().split(";")[0]),
                      lambda: _job_named(name, run_env), program="sbatch",
                      retry_for=retry_for, log=log, job=job)


def _job_named(name: str, env: dict[str, str] | None) -> int | None:
    """The pending or running job called ``name`` (None if none, or if Slurm does not
    answer)."""
    try:
        res = subprocess.run(["squeue", "-h", "-n", name, "-t", "PD,R", "-o", "%i"], env=env,
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    ids = res.stdout.split() if res.returncode == 0 else []
    return int(ids[0]) if len(ids) == 1 and ids[0].isdigit() else None


#: How a Slurm job reads the start Slurm recorded for it (into ``s``, a date).
SLURM_START = 's=$(squeue -h -j "$SLURM_JOB_ID" -o %S)'

#: After ``{start}`` has set ``s`` to the job's recorded start, a sleep to ``R`` ticks after
#: that start's tick (whole seconds), plus 50 ms: the system then records the end on the
#: tick grid, as the simulation has it, however late in its tick the job started.
ALIGNED_TEMPLATE = (
    'set -e; {start}; t=$(date -d "$s" +%s); '
    'end=$(( {t0} + ((t - {t0}) / {tick} + {runtime}) * {tick} )); now=$(date +%s%N); '
    'ns=$(( end * 1000000000 + 50000000 - now )); '
    'if [ "$ns" -gt 0 ]; then '
    'sleep "$(( ns / 1000000000 )).$(printf %09d $(( ns % 1000000000 )))"; fi')

#: The Slurm job script (:data:`ALIGNED_TEMPLATE` with :data:`SLURM_START`).
ALIGNED_SLEEP = ALIGNED_TEMPLATE.replace("{start}", SLURM_START)


def job_script(runtime: int, aligned: bool, t0: int = 0, tick: int = 1,
               start: str = SLURM_START) -> str:
    """``sleep runtime × tick``, or (``aligned``) a sleep to the end of the job's
    ``runtime``-th tick after the tick of its recorded start, ticks counted from ``t0``
    (:data:`ALIGNED_TEMPLATE`; ``start``: the shell that sets ``s`` to that start)."""
    if not aligned:
        return f"sleep {runtime * tick}"
    return ALIGNED_TEMPLATE.format(start=start, runtime=runtime, t0=t0, tick=tick)


@dataclass(frozen=True)
class ReplayJob:
    """One job to submit: its trace id, name, CPUs, limit (minutes) and script."""

    job: int
    name: str
    cores: int
    minutes: int
    script: str


class ReplayTarget(Protocol):
    """A batch system a replay submits to."""

    #: whether the live adapter needs the jobs submitted held (Slurm: its own scheduler
    #: would start them otherwise; PBS: ``scheduling`` is False, jobs wait unheld)
    adapter_holds: bool
    #: the shell that sets ``s`` to a running job's recorded start (:func:`job_script`)
    start_shell: str

    def submit_tick(self, jobs: Sequence[ReplayJob], hold: bool, *, retry_for: float,
                    log: Callable[..., None] | None
                    ) -> Iterator[tuple[ReplayJob, int | DispatchlabError]]:
        """Submit the jobs of one tick in order (``hold``: held for the adapter); each
        job with its id or the error that stopped it, as soon as it is known."""

    def realized(self) -> dict[int, Realized]:
        """Every finished job the system recorded: job id → what it recorded."""


@dataclass
class SlurmTarget:
    """``sbatch`` to ``partition`` (with ``env``), one job after the other; finished jobs
    from the job completion log ``jobcomp`` (jobcomp/filetxt)."""

    env: Mapping[str, str] | None
    partition: str
    jobcomp: Path | None = None
    adapter_holds: bool = True
    start_shell: str = SLURM_START

    def submit_tick(self, jobs: Sequence[ReplayJob], hold: bool, *, retry_for: float,
                    log: Callable[..., None] | None
                    ) -> Iterator[tuple[ReplayJob, int | DispatchlabError]]:
        for j in jobs:
            args = ["sbatch", "--parsable", "-p", self.partition, "-n", str(j.cores),
                    "-t", str(j.minutes), "-o", "/dev/null", "-J", j.name]
            if hold:
                args.append("--hold")
            args += ["--wrap", j.script]
            try:
                yield j, sbatch(args, self.env, j.name, retry_for=retry_for, log=log,
                                job=j.job)
            except DispatchlabError as err:
                yield j, err

    def realized(self) -> dict[int, Realized]:
        from dispatchlab.workload.slurm_jobcomp import read_jobcomp

        if self.jobcomp is None or not self.jobcomp.exists():
            return {}
        return {r.job_id: Realized(r.submit, r.start, r.end, r.node_list, r.state)
                for r in read_jobcomp(self.jobcomp) if r.start and r.end}


#: Seconds allowed per job to submit a ``together`` replay held before its time zero.
HELD_SUBMIT_S = 0.25


def submit_replay(wl: Workload, env: Mapping[str, str] | None, partition: str, *,
                  hold: bool, aligned: bool = True, offset: float | None = None,
                  retry_for: float = 60.0, together: bool = False,
                  log: Callable[..., None] | None = None,
                  target: ReplayTarget | None = None) -> Submitted:
    """Submit the scaled workload ``wl`` (:func:`scaled_workload`) job by job to
    ``target`` (default: Slurm's ``partition`` with ``env``), ``offset`` wall seconds
    (default: a quarter tick) after the start of its submit tick — after the ends of that
    tick, as the simulation orders them (a tick's jobs go to
    :meth:`ReplayTarget.submit_tick` together); ``hold``: held (Slurm's ``--hold``, for the
    adapter); ``aligned``: jobs end on the tick grid (:func:`job_script`). Time zero is a
    whole second. A failed submission is retried for ``retry_for`` s (:func:`run_submit`);
    a job still not submitted is logged (``submit_failed``), the replay goes on, and
    :attr:`Submitted.failed` names it (:meth:`Submitted.check_complete` raises).

    ``together`` (Slurm, not with ``hold``): the jobs of a tick arrive at once, as the
    simulation has them. ``sbatch`` takes 30–200 ms a job (more under load), and a
    scheduling pass in the middle of a burst would see only part of it; so every job is
    submitted held before time zero (:data:`HELD_SUBMIT_S` a job is allowed; held jobs
    are not scheduled) and each tick's jobs are released, in trace order, with one
    ``scontrol release`` at their time (a few ms a job); the lag is the release's."""
    if wl.resources != ("cores",):
        raise ConfigError("a replay submits core counts only (pool units of 1 core)",
                          field="workload")
    if together and hold:
        raise ConfigError("together releases the jobs itself: not with hold", field="hold")
    to = target if target is not None else SlurmTarget(env, partition)
    if together and not isinstance(to, SlurmTarget):
        raise ConfigError("together is for Slurm replays (a PBS replay releases each "
                          "tick's jobs together itself)", field="together")
    tick = int(wl.meta.get("tick", 1))
    lead = math.ceil(HELD_SUBMIT_S * wl.n_jobs) + tick if together else 0
    t0 = math.floor(time.time()) + 1 + lead
    if not together:
        time.sleep(max(0.0, t0 - time.time()))
    out: dict[int, int] = {}
    lag: dict[int, float] = {}
    failed: dict[int, str] = {}
    shift = 0.25 * tick if offset is None else offset
    batches: dict[float, list[int]] = {}  # release time → trace job ids (together)
    ticks = wl.submit.tolist()
    k = 0
    while k < wl.n_jobs:
        group = [k]
        while k + len(group) < wl.n_jobs and ticks[k + len(group)] == ticks[k]:
            group.append(k + len(group))
        k += len(group)
        due = t0 + int(ticks[group[0]]) * tick + shift
        wait = due - time.time()
        if wait > 0 and not together:
            time.sleep(wait)
        jobs = [ReplayJob(int(wl.job_id[j]), f"replay-{int(wl.job_id[j])}",
                          int(wl.units[j] * wl.req[j, 0]), int(wl.walltime[j]) * tick // 60,
                          job_script(int(wl.runtime[j]), aligned, t0, tick, to.start_shell))
                for j in group]
        for job, got in to.submit_tick(jobs, hold or together, retry_for=retry_for, log=log):
            jid = job.job
            if isinstance(got, DispatchlabError):
                failed[jid] = f"submission of trace job {jid} failed: {got}"
                if log is not None:
                    log("submit_failed", job=jid, error=str(got))
                continue
            out[jid] = got
            if together:
                batches.setdefault(due, []).append(jid)
                continue
            lag[jid] = time.time() - due
            if log is not None:
                log("submitted", job=jid, slurm_id=got, lag_s=round(lag[jid], 3))
    for due, jids in batches.items():
        _release(due, [out[jid] for jid in jids],
                 to.env if isinstance(to, SlurmTarget) else env)
        done = time.time()
        for jid in jids:
            lag[jid] = done - due
            if log is not None:
                log("submitted", job=jid, slurm_id=out[jid], lag_s=round(lag[jid], 3))
    if failed and log is not None:
        log("replay_incomplete", failed=sorted(failed), submitted=len(out))
    return Submitted(out, t0, lag, failed)


def _release(due: float, ids: list[int], env: Mapping[str, str] | None) -> None:
    """At ``due`` (Unix s), ``scontrol release`` the held Slurm jobs ``ids``."""
    wait = due - time.time()
    if wait > 0:
        time.sleep(wait)
    text = ",".join(str(i) for i in ids)
    try:
        res = subprocess.run(["scontrol", "release", text], env=dict(env) if env else None,
                             capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise DispatchlabError(f"scontrol release {text}: {err}") from None
    if res.returncode != 0:
        raise DispatchlabError(f"scontrol release {text} failed: "
                               f"{(res.stderr or res.stdout).strip()}")


def difference_stats(values: npt.NDArray[np.floating[Any]]) -> dict[str, float]:
    """How close a replay came to its simulation: the median, p95 and largest absolute
    difference (realized − simulated, in wall seconds), the shares within 1 and 2 s, and the
    mean signed difference."""
    a = np.abs(values)
    return {"median": float(np.median(a)), "p95": float(np.quantile(a, 0.95)),
            "max": float(a.max()), "within_2s": float((a <= 2).mean()),
            "within_1s": float((a <= 1).mean()), "mean_signed": float(values.mean())}
