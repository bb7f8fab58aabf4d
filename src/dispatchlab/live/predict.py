"""Shadow predictions: when will each pending job of a Slurm partition start?

Each cycle (on every event, as the adapter) the live state becomes the engine's state with
every pending job of the partition waiting (:func:`~dispatchlab.live.twin.build_twin`),
each job's duration is the chosen estimator's (running jobs: :func:`forward_starts`),
and the simulator runs forward from now under the chosen dispatcher until every job has
started: a job's predicted start is its simulated start.

The dispatcher may be Slurm's own scheduler, ``slurm:conf=<the cluster's slurm.conf>``
(docs/slurm_twin.md): warm-started on the snapshot it plans as slurmctld does, with the
time limits, while the simulated jobs end at the estimated run times; multifactor ages
count from each job's real submit time, running jobs free their cores when their
estimated run ends (one that outlived its estimate: at twice its age, at most its limit).

Run times come from the estimator (``--estimate``): ``walltime`` (the limits, Slurm's own
plan), or one learned from the finished jobs of ``history`` (a job completion log or a
``sacct`` export), e.g. ``user-ratio`` (each user's recent run-time/limit ratio ×
the job's limit, after Tsafrir et al.'s "average of the user's last two jobs").

The confidence comes from the estimator's error measured on the same finished jobs:
replayed in order, each job is estimated before its run time
is revealed to the estimator, and the ratio actual / estimated is kept. Two more forward
simulations scale every duration by the 10th and 90th percentile of that ratio; the
earliest and latest of the three starts make an 80 % band (``low``, ``high``). Without
history the band is the point prediction itself and ``confidence`` is empty.
Nothing is changed in Slurm.
"""

from __future__ import annotations

import csv
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from dispatchlab.atomic_output import write_failure
from dispatchlab.engine.simulator import map_requests
from dispatchlab.engine.state import SystemView
from dispatchlab.errors import ConfigError, DispatchlabError, WorkloadError
from dispatchlab.estimates.base import DurationEstimator
from dispatchlab.estimates.registry import get_estimator
from dispatchlab.live.adapter import JsonLog, live_dispatcher
from dispatchlab.live.backend import LiveClient, LiveCommandError
from dispatchlab.live.outage import OUTAGE_LIMIT, Outage
from dispatchlab.live.slurm_state import Snapshot
from dispatchlab.live.twin import Twin, build_twin
from dispatchlab.platform.platform import CORES
from dispatchlab.workload.accounting import AccountingOptions
from dispatchlab.workload.load import detect_format
from dispatchlab.workload.slurm_jobcomp import load_jobcomp, read_jobcomp
from dispatchlab.workload.slurm_sacct import load_sacct
from dispatchlab.workload.slurm_sacct_json import load_sacct_json
from dispatchlab.workload.slurm_spellings import machine_timezone
from dispatchlab.workload.workload import Workload

#: The quantiles of actual/estimated durations that bound the band (an 80 % band).
BAND = (0.10, 0.90)
COLUMNS = ("cycle_time", "job_id", "predicted_start", "low", "high", "estimate_s",
           "confidence", "dispatcher", "estimator")


@dataclass
class Estimates:
    """Durations (s) per Slurm job id and the estimator's error ratios on history."""

    seconds: dict[int, int]
    ratios: np.ndarray = field(default_factory=lambda: np.empty(0))

    def band(self) -> tuple[float, float] | None:
        if len(self.ratios) < 5:
            return None
        lo, hi = np.quantile(self.ratios, BAND)
        return float(lo), float(hi)


def live_estimator(name: str) -> DurationEstimator:
    """The estimator ``name``; unknown ones and those reading actual run times are
    refused."""
    est = get_estimator(name)
    if est.oracle:
        raise ConfigError(f"duration estimate '{name}' reads actual run times: a live "
                          "system has none to give (choose walltime, heuristic, …)",
                          field="estimate")
    return est


#: What ``history`` may be: Slurm's job completion log or a ``sacct`` export.
HISTORY_FORMATS = ("jobcomp", "sacct", "sacct-json")


def history_format(path: Path) -> str:
    """The format of a history file (refused unless one of :data:`HISTORY_FORMATS`; one
    whose format cannot be told is read as a completion log, whose reader names the bad
    line)."""
    try:
        fmt = detect_format(Path(path))
    except WorkloadError:
        return "jobcomp"
    if fmt not in HISTORY_FORMATS:
        raise ConfigError(f"--history {path}: a {fmt} file; the history is a Slurm job "
                          "completion log (jobcomp/filetxt) or a sacct export "
                          "(--parsable2 or --json)", field="history")
    return fmt


def check_history(path: Path) -> None:
    """Read ``path`` once (a malformed line: its file and line, before any cycle)."""
    fmt = history_format(path)
    if fmt == "jobcomp":
        read_jobcomp(path)
    else:
        load_history(path, None)


def load_history(path: Path, partition: str | None) -> Workload:
    """The finished jobs of ``path`` (of ``partition`` when given), local times read in
    this machine's time zone."""
    fmt = history_format(path)
    if fmt == "jobcomp":
        return load_jobcomp(path, partition=partition)
    loader = load_sacct if fmt == "sacct" else load_sacct_json
    wl = loader(path, AccountingOptions(timezone=machine_timezone()))
    if partition is None:
        return wl
    mine = [k for k, q in enumerate(wl.queues) if q.name == partition]
    rows = np.flatnonzero(np.isin(wl.queue, mine))
    if not len(rows):
        raise WorkloadError(f"no job that ran in partition {partition!r}", source=str(path))
    return wl.take(rows)


def check_partition(spec: str, partition: str) -> None:
    """A ``slurm`` family spec must know the partition (by name, or a default one)."""
    disp = live_dispatcher(spec)
    parts = getattr(disp, "settings", {}).get("partitions") if disp.name == "slurm" else None
    if parts is None or partition in parts or any(p["default"] for p in parts.values()):
        return
    raise ConfigError(f"{spec}: the slurm.conf has no partition '{partition}' and none "
                      f"with Default=YES (it has {', '.join(parts)})", field="partition")


def estimate_durations(name: str, twin: Twin, history: Workload | None) -> Estimates:
    """The estimator ``name`` applied to the twin's jobs after it has seen ``history``
    (finished jobs, in order; each estimated before its run time is observed)."""
    est = live_estimator(name)
    live = twin.workload
    k = 0 if history is None else history.n_jobs
    parts = [history, live] if history is not None else [live]
    users = [wl.users[u] for wl in parts for u in wl.user.tolist()]
    queues = [wl.queues[q].name for wl in parts for q in wl.queue.tolist()]
    n = k + live.n_jobs
    both = Workload.from_columns(
        submit=np.arange(n), walltime=np.concatenate([wl.walltime for wl in parts]),
        runtime=np.concatenate([wl.runtime for wl in parts]),
        units=np.concatenate([wl.units for wl in parts]), req={CORES: [1] * n},
        user=users, queue=queues, validate=False)
    view = SystemView(both, twin.platform, map_requests(both, twin.platform))
    view._advance(n)
    est.reset(view, np.random.default_rng(0))
    ratios = []
    for j in range(k):
        guess = est.estimate(j)
        actual = int(both.runtime[j])
        ratios.append(actual / max(guess, 1))
        est.observe(j, actual)
    seconds = {int(live.job_id[j]): int(est.estimate(k + j)) for j in range(live.n_jobs)}
    return Estimates(seconds, np.asarray(ratios, dtype=np.float64))


def forward_starts(twin: Twin, spec: str, durations: dict[int, int], scale: float = 1.0,
                   seed: int = 0) -> dict[int, int]:
    """Simulated start (Unix s) of every waiting job, each duration × ``scale``; a
    running job that has outlived its duration is expected to run as long again (the
    median remaining life of a run of that age when run times are heavy-tailed:
    Harchol-Balter and Downey, ACM TOCS 15(3), 1997), at most to its limit and at least
    1 s more. A job that never starts is left out."""
    wl = twin.workload
    runtime = wl.runtime.copy()
    now = twin.now
    started_at = {p.job: p.start for p in twin.placed}
    for j, jid in enumerate(wl.job_id.tolist()):
        wall = int(wl.walltime[j])
        d = wall if jid < 0 else max(1, round(durations.get(jid, wall) * scale))  # blockers
        if j in started_at:
            age = now - started_at[j]
            if d <= age:
                d = max(min(2 * age, wall), age + 1)
        runtime[j] = d
    # jobs larger than what stays usable (down and draining nodes out) can never start:
    # asking more than the whole machine makes the engine reject them up front
    usable = np.ones(twin.platform.n_nodes, dtype=bool)
    usable[list(twin.down) + list(twin.closed)] = False
    alive = int(twin.platform.capacity[usable, 0].sum())
    units = wl.units.copy()
    never = [j for j in twin.waiting if units[j] > alive]
    units[never] = int(twin.platform.capacity[:, 0].sum()) + 1
    shadow = replace(twin, workload=replace(wl, runtime=runtime, units=units,
                                            min_units=units, max_units=units))
    sim, _ = shadow.decide(live_dispatcher(spec), seed)
    rec = sim.run()
    out = {}
    for j in twin.waiting:
        t = int(rec.start_time[j])
        if t >= 0:
            out[twin.slurm_id(j)] = t + twin.origin
    return out


@dataclass
class Prediction:
    """One job's predicted start at one cycle (Unix s)."""

    cycle_time: int
    job_id: int
    predicted_start: int
    low: int
    high: int
    estimate_s: int
    confidence: str


def predict(snap: Snapshot, partition: str, spec: str, estimator: str,
            history: Workload | None = None, seed: int = 0) -> list[Prediction]:
    """Predicted starts of every pending job of ``partition`` in ``snap``."""
    twin = build_twin(snap, partition, every_pending=True)
    if not twin.waiting:
        return []
    est = estimate_durations(estimator, twin, history)
    point = forward_starts(twin, spec, est.seconds, 1.0, seed)
    band = est.band()
    runs = [point]
    if band is not None:
        runs += [forward_starts(twin, spec, est.seconds, s, seed) for s in band]
    conf = "" if band is None else f"{int(100 * (BAND[1] - BAND[0]))}%"
    out = []
    for jid, t in sorted(point.items()):
        seen = [r[jid] for r in runs if jid in r]
        out.append(Prediction(snap.now, jid, t, min(seen), max(seen), est.seconds[jid], conf))
    return out


class ShadowPredictor:
    """Polls Slurm and appends predictions to a CSV at each event (never acts)."""

    def __init__(self, client: LiveClient, partition: str, spec: str, *, estimate: str,
                 out: Path, history: Path | None = None, seed: int = 0,
                 log: Callable[..., None] | None = None,
                 outage_limit: float | None = OUTAGE_LIMIT):
        check_partition(spec, partition)
        live_estimator(estimate)  # refused now, not when the first job is pending
        self.client, self.partition, self.spec = client, partition, spec
        self.estimator, self.out, self.seed = estimate, Path(out), seed
        self.history_path = history
        self.log = log if log is not None else JsonLog()
        self.cycles = 0
        self.outage = Outage(self.log, outage_limit)  # failed reads in a row

    def _history(self) -> Workload | None:
        path = self.history_path
        if path is None or not path.exists() or path.stat().st_size == 0:
            return None
        try:
            return load_history(path, self.partition)
        except DispatchlabError as err:  # none of the partition yet, or a bad line
            self.log("history_unused", reason=str(err))
            return None

    def cycle(self, snap: Snapshot) -> list[Prediction]:
        preds = predict(snap, self.partition, self.spec, self.estimator, self._history(),
                        self.seed)
        size = self.out.stat().st_size if self.out.exists() else 0
        try:
            with self.out.open("a", newline="") as fh:
                w = csv.writer(fh)
                if size == 0:
                    w.writerow(COLUMNS)
                for p in preds:
                    w.writerow([p.cycle_time, p.job_id, p.predicted_start, p.low, p.high,
                                p.estimate_s, p.confidence, self.spec, self.estimator])
        except OSError as exc:  # disk full: no half-written cycle left in the file
            if self.out.is_file():
                os.truncate(self.out, size)
            raise write_failure(self.out, exc) from None
        self.cycles += 1
        self.log("predict", jobs=len(preds))
        return preds

    def run(self, poll: float = 0.5, duration: float | None = None,
            every: float = 30.0) -> None:
        """A cycle on every change of the partition's state, and at least every ``every``
        s; for ``duration`` s (default: until interrupted)."""
        end = None if duration is None else time.monotonic() + duration
        last = None
        last_cycle = 0.0
        while end is None or time.monotonic() < end:
            t0 = time.perf_counter()
            try:
                snap = self.client.read()
                self.outage.ok()
                mark = snap.fingerprint(self.partition)
                if mark != last or time.monotonic() - last_cycle >= every:
                    self.cycle(snap)
                    last, last_cycle = mark, time.monotonic()
            except LiveCommandError as err:  # controller down, restarting or busy
                self.outage.failed(str(err))
            time.sleep(max(0.0, poll - (time.perf_counter() - t0)))
        self.outage.finish()
