"""Replay a trace slice onto a live Slurm with time compressed by a factor.

Each job becomes ``sbatch -n <cores> -t <minutes> --wrap "sleep <s>"`` submitted at its
scaled submit time. Slurm's time limits are whole minutes, so the scaled wall-time
``walltime / compression`` is rounded *up* to whole minutes — never below what the job
asked, never a kill the trace did not have — and the twin workload
(:func:`scaled_workload`) carries exactly those minutes × 60 as its requested times, the
scaled run time (whole seconds, at least 1, at most the limit: Slurm never has to kill)
as its run time and the scaled submit time (whole seconds) as its submission: the
simulator and Slurm see the same requests. Times of the scaled workload are "scaled
seconds": seconds of the replay's own clock.
"""

from __future__ import annotations

import math
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from dispatchlab.errors import ConfigError, DispatchlabError
from dispatchlab.workload.workload import Workload


def scaled_workload(wl: Workload, compression: float) -> Workload:
    """The twin of a replay: submit and run times divided by ``compression`` (whole
    seconds; run ≥ 1 s), wall-times rounded up to whole minutes after scaling; run times
    capped by the wall-time."""
    if not compression > 0:
        raise ConfigError(f"compression must be > 0, got {compression}", field="compression")
    submit = np.rint((wl.submit - wl.submit.min()) / compression).astype(np.int64)
    minutes = np.maximum(np.ceil(wl.walltime / compression / 60.0), 1).astype(np.int64)
    walltime = minutes * 60
    runtime = np.minimum(np.maximum(np.rint(wl.runtime / compression), 1), walltime
                         ).astype(np.int64)
    return Workload.from_columns(
        submit=submit, walltime=walltime, runtime=runtime, units=wl.units,
        req={r: wl.req[:, k] for k, r in enumerate(wl.resources)}, job_id=wl.job_id,
        user=[wl.users[u] for u in wl.user.tolist()], origin_unix=None,
        source=f"{wl.source} (compressed ×{compression:g})",
        meta={"compression": compression, "walltime_rounding": "up to whole minutes"})


@dataclass
class Submitted:
    """Where a replay went: trace job id → Slurm job id, and the replay's time zero
    (Unix s, a whole second) — scaled time t is Unix time ``t0 + t``."""

    slurm_id: dict[int, int]
    t0: int
    lag_s: dict[int, float]  # trace job id → submission lateness (s)


#: A job script that ends ``R`` s after the whole second Slurm recorded as its start (plus
#: 50 ms): the end Slurm records is then exactly start + R, as in the simulation.
ALIGNED_SLEEP = (
    'set -e; s=$(squeue -h -j "$SLURM_JOB_ID" -o %S); '
    'end=$(( $(date -d "$s" +%s) + {runtime} )); now=$(date +%s%N); '
    'ns=$(( end * 1000000000 + 50000000 - now )); '
    'if [ "$ns" -gt 0 ]; then sleep "$(( ns / 1000000000 )).$(printf %09d $(( ns % 1000000000 )))"; fi')


def job_script(runtime: int, aligned: bool) -> str:
    """``sleep runtime``, or (``aligned``) a sleep to the whole-second grid of Slurm's
    recorded start (:data:`ALIGNED_SLEEP`)."""
    return ALIGNED_SLEEP.format(runtime=runtime) if aligned else f"sleep {runtime}"


def submit_replay(wl: Workload, env: Mapping[str, str] | None, partition: str, *,
                  hold: bool, aligned: bool = True,
                  log: Callable[..., None] | None = None) -> Submitted:
    """Submit the scaled workload ``wl`` (:func:`scaled_workload`) job by job at its
    submit time; ``hold``: with ``--hold`` (for the adapter); ``aligned``: jobs end on the
    whole-second grid of their recorded start (:func:`job_script`). Starts on a whole
    second."""
    if wl.resources != ("cores",):
        raise ConfigError("a replay submits core counts only (pool units of 1 core)",
                          field="workload")
    t0 = math.floor(time.time()) + 1
    time.sleep(max(0.0, t0 - time.time()))
    out: dict[int, int] = {}
    lag: dict[int, float] = {}
    for j in range(wl.n_jobs):
        due = t0 + int(wl.submit[j])
        wait = due - time.time()
        if wait > 0:
            time.sleep(wait)
        cores = int(wl.units[j] * wl.req[j, 0])
        args = ["sbatch", "--parsable", "-p", partition, "-n", str(cores),
                "-t", str(int(wl.walltime[j]) // 60), "-o", "/dev/null",
                "-J", f"replay-{int(wl.job_id[j])}"]
        if hold:
            args.append("--hold")
        args += ["--wrap", job_script(int(wl.runtime[j]), aligned)]
        res = subprocess.run(args, env=dict(env) if env else None, capture_output=True,
                             text=True, timeout=30)
        if res.returncode != 0:
            raise DispatchlabError(f"sbatch of trace job {int(wl.job_id[j])} failed: "
                                   f"{res.stderr.strip()}")
        jid = int(wl.job_id[j])
        out[jid] = int(res.stdout.strip().split(";")[0])
        lag[jid] = time.time() - due
        if log is not None:
            log("submitted", job=jid, slurm_id=out[jid], lag_s=round(lag[jid], 3))
    return Submitted(out, t0, lag)
