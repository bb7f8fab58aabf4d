"""Replay a trace slice onto a live Slurm with time compressed by a factor.

Each job becomes ``sbatch -n <cores> -t <minutes> --wrap "sleep <s>"`` submitted at its
scaled submit time. The twin counts time in *ticks* of ``tick`` wall seconds (1 by
default; one tick is ``compression`` trace seconds): a live system needs some time to
react to an end (0.1–0.3 s here, sometimes more than a second under load), and a tick
longer than that keeps its reactions inside the step the simulation takes as
instantaneous. Slurm's time limits are whole minutes, so the scaled wall-time is rounded
*up* to whole minutes — never below what the job asked, never a kill the trace did not
have — and the twin workload (:func:`scaled_workload`) carries exactly those minutes as
its requested times, the scaled run time (whole ticks, at least 1, at most the limit:
Slurm never has to kill) as its run time and the scaled submit time as its submission:
the simulator and Slurm see the same requests. "Scaled seconds" are seconds of the
replay's own clock (ticks × tick).
"""

from __future__ import annotations

import math
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

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
    """Where a replay went: trace job id → Slurm job id, and the replay's time zero
    (Unix s, a whole second) — twin time t (ticks) is Unix time ``t0 + t × tick``."""

    slurm_id: dict[int, int]
    t0: int
    lag_s: dict[int, float]  # trace job id → submission lateness (s)
    failed: dict[int, str] = field(default_factory=dict)  # trace job id → last sbatch error

    def check_complete(self) -> None:
        """Raise :class:`DispatchlabError` naming the jobs that could not be submitted."""
        if self.failed:
            ids = ", ".join(str(j) for j in sorted(self.failed))
            first = self.failed[min(self.failed)]
            raise DispatchlabError(f"{len(self.failed)} trace job(s) could not be submitted "
                                   f"({ids}); {first}")


#: Seconds between two attempts of a failed ``sbatch`` (the last one repeats).
SBATCH_BACKOFF = (0.5, 1.0, 2.0, 4.0, 8.0)


def sbatch(args: list[str], env: Mapping[str, str] | None, name: str, *,
           retry_for: float = 60.0, log: Callable[..., None] | None = None,
           job: int | None = None) -> int:
    """Run ``sbatch --parsable …`` (its job name ``name``) until it works, waiting
    :data:`SBATCH_BACKOFF` between attempts for at most ``retry_for`` s (a controller
    restarting or busy); the Slurm job id. An attempt that timed out may have submitted
    the job: the job of that name is looked up before trying again. Raises
    :class:`DispatchlabError` with the last error."""
    run_env = dict(env) if env else None
    deadline = time.monotonic() + retry_for
    attempt = 0
    while True:
        try:
            res = subprocess.run(args, env=run_env, capture_output=True, text=True,
                                 timeout=30)
            if res.returncode == 0:
                return int(res.stdout.strip().split(";")[0])
            error = (res.stderr or res.stdout).strip() or f"exit code {res.returncode}"
        except subprocess.TimeoutExpired:
            error = "sbatch timed out after 30 s"
            found = _job_named(name, run_env)
            if found is not None:
                return found
        except OSError as err:
            raise DispatchlabError(f"cannot run sbatch: {err}") from None
        wait = SBATCH_BACKOFF[min(attempt, len(SBATCH_BACKOFF) - 1)]
        if time.monotonic() + wait > deadline:
            raise DispatchlabError(error)
        attempt += 1
        if log is not None:
            log("submit_retry", job=job, attempt=attempt, wait_s=wait, error=error)
        time.sleep(wait)


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


#: A job script that ends ``R`` ticks after the tick of the start Slurm recorded (whole
#: seconds), plus 50 ms: Slurm then records the end on the tick grid, as the simulation has
#: it, however late in its tick the job started.
ALIGNED_SLEEP = (
    'set -e; s=$(squeue -h -j "$SLURM_JOB_ID" -o %S); t=$(date -d "$s" +%s); '
    'end=$(( {t0} + ((t - {t0}) / {tick} + {runtime}) * {tick} )); now=$(date +%s%N); '
    'ns=$(( end * 1000000000 + 50000000 - now )); '
    'if [ "$ns" -gt 0 ]; then '
    'sleep "$(( ns / 1000000000 )).$(printf %09d $(( ns % 1000000000 )))"; fi')


def job_script(runtime: int, aligned: bool, t0: int = 0, tick: int = 1) -> str:
    """``sleep runtime × tick``, or (``aligned``) a sleep to the end of the job's
    ``runtime``-th tick after the tick of its recorded start, ticks counted from ``t0``
    (:data:`ALIGNED_SLEEP`)."""
    if not aligned:
        return f"sleep {runtime * tick}"
    return ALIGNED_SLEEP.format(runtime=runtime, t0=t0, tick=tick)


#: Seconds allowed per job to submit a ``together`` replay held before its time zero.
HELD_SUBMIT_S = 0.25


def submit_replay(wl: Workload, env: Mapping[str, str] | None, partition: str, *,
                  hold: bool, aligned: bool = True, offset: float | None = None,
                  retry_for: float = 60.0, together: bool = False,
                  log: Callable[..., None] | None = None) -> Submitted:
    """Submit the scaled workload ``wl`` (:func:`scaled_workload`) job by job, ``offset``
    wall seconds (default: a quarter tick) after the start of its submit tick — after the
    ends of that tick, as the simulation orders them; ``hold``: with ``--hold`` (for the
    adapter); ``aligned``: jobs end on the tick grid (:func:`job_script`). Time zero is a
    whole second. A failed ``sbatch`` is retried for ``retry_for`` s (:func:`sbatch`); a
    job still not submitted is logged (``submit_failed``), the replay goes on, and
    :attr:`Submitted.failed` names it (:meth:`Submitted.check_complete` raises).

    ``together`` (not with ``hold``): the jobs of a tick arrive at once, as the
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
    for j in range(wl.n_jobs):
        due = t0 + int(wl.submit[j]) * tick + shift
        wait = due - time.time()
        if wait > 0 and not together:
            time.sleep(wait)
        cores = int(wl.units[j] * wl.req[j, 0])
        jid = int(wl.job_id[j])
        name = f"replay-{jid}"
        args = ["sbatch", "--parsable", "-p", partition, "-n", str(cores),
                "-t", str(int(wl.walltime[j]) * tick // 60), "-o", "/dev/null", "-J", name]
        if hold or together:
            args.append("--hold")
        args += ["--wrap", job_script(int(wl.runtime[j]), aligned, t0, tick)]
        try:
            out[jid] = sbatch(args, env, name, retry_for=retry_for, log=log, job=jid)
        except DispatchlabError as err:
            failed[jid] = f"sbatch of trace job {jid} failed: {err}"
            if log is not None:
                log("submit_failed", job=jid, error=str(err))
            continue
        if together:
            batches.setdefault(due, []).append(jid)
            continue
        lag[jid] = time.time() - due
        if log is not None:
            log("submitted", job=jid, slurm_id=out[jid], lag_s=round(lag[jid], 3))
    for due, jids in batches.items():
        _release(due, [out[jid] for jid in jids], env)
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
