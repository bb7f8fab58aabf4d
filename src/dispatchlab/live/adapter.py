"""The live cycle: a dispatchlab dispatcher makes the decisions of a Slurm partition or a
PBS queue (``dispatchlab live slurm`` / ``dispatchlab live pbs``).

One cycle for both systems; the backend (:mod:`dispatchlab.live.backend`) reads the state and
starts a job. On PBS (:class:`~dispatchlab.live.pbs_client.PbsClient`) the adapter's jobs are
the queue's queued jobs (the server's ``scheduling`` is False, so nothing else starts them)
and a start is ``qrun -H`` with the vnodes and CPUs chosen, checked against the free CPUs the
last read showed (``qrun -H`` does not check). The rest of this text is about Slurm.

The adapter's jobs are the partition's pending jobs held by their user (``sbatch --hold``;
with ``hold_new`` the adapter also puts a user hold on every new pending job of the
partition). Each poll reads Slurm's state; when it changed (a submission, a start, an end,
a node state change) a scheduling cycle runs: the state becomes the engine's
(:mod:`dispatchlab.live.twin`), the dispatcher is called once exactly as the simulator calls
it, and each ``Start(job, nodes)`` becomes ``scontrol update JobId=J NodeList=…`` +
``scontrol release J``. Nothing is remembered between cycles but the jobs this process
released and when (to take back, by a user hold, one Slurm has not started within
``release_timeout`` s — a refused decision); a restart rebuilds everything from Slurm.

It never touches a running job, a job of another partition, or a pending job it does not
control; decisions other than starts (power, kills, reconfigurations, requeues) are logged
as refused. ``dry_run`` decides and logs but changes nothing in Slurm.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, TextIO

import numpy as np

from dispatchlab.dispatchers.base import Dispatcher
from dispatchlab.dispatchers.registry import get_dispatcher
from dispatchlab.engine.decisions import Decision, Plan, Start, WakeAt
from dispatchlab.errors import ConfigError, DispatchlabError
from dispatchlab.live.backend import LiveClient, LiveCommandError
from dispatchlab.live.outage import OUTAGE_LIMIT, Outage
from dispatchlab.live.slurm_state import Snapshot, no_gc, snapshot
from dispatchlab.live.synthetic_state import synthetic_docs
from dispatchlab.live.twin import Twin, build_twin
from dispatchlab.seeds import check_seed


def live_dispatcher(spec: str) -> Dispatcher:
    """A dispatcher that can run live: one that reads the future (``oracle``) is refused."""
    disp = get_dispatcher(spec)
    if getattr(disp, "oracle", False):
        raise ConfigError(
            f"dispatcher '{spec}' reads the future (actual run times, oracle = True); a live "
            "system has no future to read: choose one with a non-oracle duration estimate "
            "(e.g. estimate=walltime or heuristic)", field="dispatcher")
    return disp


@dataclass
class Cycle:
    """What one scheduling cycle did (times in s; ``started``: Slurm id → node names)."""

    time: int
    waiting: int
    running: int
    started: dict[int, list[str]] = field(default_factory=dict)
    refused: dict[int, str] = field(default_factory=dict)
    held: list[int] = field(default_factory=list)
    taken_back: list[int] = field(default_factory=list)
    dry_run: bool = False
    read_s: float = 0.0
    convert_s: float = 0.0
    decide_s: float = 0.0
    apply_s: float = 0.0


class JsonLog:
    """One JSON object per line (to a file or stderr)."""

    def __init__(self, stream: TextIO | None = None):
        self.stream = stream if stream is not None else sys.stderr

    def __call__(self, event: str, **fields: Any) -> None:
        try:
            self.stream.write(json.dumps({"t": round(time.time(), 3), "event": event,
                                          **fields}, default=str) + "\n")
            self.stream.flush()
        except OSError as exc:  # a full disk under --log: one line, not a traceback
            from dispatchlab.atomic_output import write_failure

            raise write_failure(getattr(self.stream, "name", "the log"), exc) from None


class LiveAdapter:
    """Drives ``partition`` (a Slurm partition, a PBS queue) of the system ``client`` talks
    to with dispatcher ``spec``."""

    def __init__(self, client: LiveClient, partition: str, spec: str, *,
                 dry_run: bool = False, hold_new: bool = False, release_timeout: float = 10.0,
                 seed: int = 0, log: Callable[..., None] | None = None,
                 outage_limit: float | None = OUTAGE_LIMIT):
        live_dispatcher(spec)  # refuse an oracle at once
        self.client = client
        self.partition = partition
        self.spec = spec
        self.dry_run = dry_run
        self.hold_new = hold_new
        self.release_timeout = release_timeout
        self.seed = check_seed(seed)
        self.log = log if log is not None else JsonLog()
        self.released: dict[int, float] = {}  # Slurm id → when this process released it
        self.cycles: list[Cycle] = []
        self.outage = Outage(self.log, outage_limit)  # failed reads in a row

    # ---- one cycle -----------------------------------------------------------------------

    def cycle(self, snap: Snapshot | None = None, read_s: float = 0.0) -> Cycle:
        """Read (unless given), take back stale releases, hold new jobs, decide, apply."""
        if snap is None:
            t0 = time.perf_counter()
            snap = self.client.read()
            read_s = time.perf_counter() - t0
        taken, held = self._take_back(snap), self._hold_new(snap)
        if (taken or held) and not self.dry_run:
            t0 = time.perf_counter()
            snap = self.client.read()
            read_s += time.perf_counter() - t0
        t0 = time.perf_counter()
        with no_gc():
            twin = build_twin(snap, self.partition)
            constrain = getattr(self.client, "constrain", None)
            if constrain is not None:  # a backend's queue rules and reservations (PBS)
                twin = constrain(twin, snap)
        t1 = time.perf_counter()
        cyc = Cycle(snap.now, len(twin.waiting), len(twin.placed), held=held,
                    taken_back=taken, dry_run=self.dry_run, read_s=read_s,
                    convert_s=t1 - t0)
        if twin.waiting:
            decisions: Sequence[Decision] = []
            try:
                sim, decisions = twin.decide(live_dispatcher(self.spec), self.seed)
                for job, why in sim.rec.rejected.items():  # larger than the partition
                    cyc.refused[twin.slurm_id(job)] = why
            except DispatchlabError as err:  # the dispatcher's own mistake: log, go on
                self.log("dispatcher_error", error=str(err))
            cyc.decide_s = time.perf_counter() - t1
            t2 = time.perf_counter()
            for d in decisions:
                self._apply(d, twin, snap, cyc)
            cyc.apply_s = time.perf_counter() - t2
        self.cycles.append(cyc)
        self.log("cycle", **{k: v for k, v in asdict(cyc).items()
                             if v or k in ("time", "waiting", "running")})
        return cyc

    def _apply(self, d: object, twin: Twin, snap: Snapshot, cyc: Cycle) -> None:
        if isinstance(d, (WakeAt, Plan)):
            return  # polling sees the time pass; plans are the dispatcher's own
        if not isinstance(d, Start):
            what = type(d).__name__
            job = getattr(d, "job", None)
            key = twin.slurm_id(job) if isinstance(job, int) else -1
            cyc.refused[key] = f"{what}: the adapter only starts pending jobs"
            self.log("refused", decision=repr(d), reason=cyc.refused[key])
            return
        jid = twin.slurm_id(d.job)
        nodes = twin.node_names(d.nodes)
        jobs = snap.jobs
        mine = bool(((jobs.job_id == jid) & jobs.user_held
                     & jobs.in_partition(self.partition)).any())
        if not mine:  # never happens with the twin's queue; a guard all the same
            cyc.refused[jid] = "not a held job of the partition"
            self.log("refused", job=jid, nodes=nodes, reason=cyc.refused[jid])
            return
        if self.dry_run:
            cyc.started[jid] = nodes
            self.log("would_start", job=jid, nodes=nodes)
            return
        try:
            self.client.start(jid, nodes, [int(c) for c in d.counts])
        except LiveCommandError as err:  # cancelled or node gone meanwhile: go on
            cyc.refused[jid] = str(err)
            self.log("refused", job=jid, nodes=nodes, reason=str(err))
            return
        self.released[jid] = time.monotonic()
        cyc.started[jid] = nodes
        self.log("start", job=jid, nodes=nodes)

    def _take_back(self, snap: Snapshot) -> list[int]:
        """Released jobs Slurm has not started in time get a user hold again (their start
        was refused: node drained, down or taken meanwhile)."""
        now = time.monotonic()
        jobs = snap.jobs
        mine = np.isin(jobs.job_id, np.fromiter(self.released, np.int64, len(self.released)))
        pending = {j.job_id: j for j in jobs.select(mine & jobs.pending & ~jobs.user_held
                                                    & jobs.in_partition(self.partition))}
        out = []
        for jid, when in list(self.released.items()):
            if jid not in pending:
                del self.released[jid]  # started, ended or cancelled: no longer ours to watch
                continue
            if now - when >= self.release_timeout:
                out.append(jid)
                del self.released[jid]
                self.log("taken_back", job=jid, reason=pending[jid].reason,
                         nodes=pending[jid].required_nodes)
                if not self.dry_run:
                    self._hold(jid)
        return out

    def _hold_new(self, snap: Snapshot) -> list[int]:
        """With ``hold_new``: a user hold on the partition's new pending jobs."""
        if not self.hold_new:
            return []
        out = []
        jobs = snap.jobs
        for j in jobs.select(jobs.pending & jobs.in_partition(self.partition)
                             & ~jobs.user_held & ~jobs.required_nodes.where(bool)):
            if j.job_id not in self.released:
                out.append(j.job_id)
                if not self.dry_run:
                    self._hold(j.job_id)
        return out

    def _hold(self, jid: int) -> None:
        try:
            self.client.user_hold(jid)
        except LiveCommandError as err:  # it started or left meanwhile
            self.log("hold_failed", job=jid, reason=str(err))

    # ---- the loop ------------------------------------------------------------------------

    def warm_up(self) -> None:
        """One decision on a made-up one-node state, so the first real event does not pay
        for imports and compiled kernels (~2 s)."""
        squeue, sinfo = synthetic_docs(1, 0, 1, cpus=1, partition=self.partition)
        twin = build_twin(snapshot(int(time.time()), squeue, sinfo), self.partition)
        twin.decide(live_dispatcher(self.spec), self.seed)

    def run(self, poll: float = 0.5, duration: float | None = None,
            every: float = 30.0, stop: Callable[[], bool] | None = None,
            wake: Callable[[float], bool] | None = None) -> None:
        """Poll every ``poll`` s (≤ 1 s); a cycle when the state changed, and at least
        every ``every`` s; for ``duration`` s or until ``stop()`` is true. Failed reads
        go to :attr:`outage` (:class:`SlurmUnreachable` when they last too long, or
        when the run ends during one). ``wake(seconds)``, when given, replaces the sleep
        between polls and returns early on an event of the system (a PBS hook)."""
        self.warm_up()
        end = None if duration is None else time.monotonic() + duration
        last: tuple[Any, ...] | None = None
        last_cycle = 0.0
        while (end is None or time.monotonic() < end) and not (stop and stop()):
            t0 = time.perf_counter()
            try:
                snap = self.client.read()
                self.outage.ok()
                read_s = time.perf_counter() - t0
                mark = (snap.fingerprint(self.partition), _rules_mark(self.client))
                stale = any(time.monotonic() - w >= self.release_timeout
                            for w in self.released.values())
                if mark != last or stale or time.monotonic() - last_cycle >= every:
                    cyc = self.cycle(snap, read_s)
                    last, last_cycle = mark, time.monotonic()
                    if (cyc.started or cyc.held) and not self.dry_run:
                        last = None  # look again at once: the starts change the state
                        continue
            except LiveCommandError as err:  # controller down, restarting or busy
                self.outage.failed(str(err))
                last = None  # a full cycle on the first read that works
            pause = max(0.0, poll - (time.perf_counter() - t0))
            if wake is not None:
                wake(pause)
            else:
                time.sleep(pause)
        self.outage.finish()


def _rules_mark(client: LiveClient) -> object:
    """The backend's queue rules and reservations as last read, when it has them."""
    mark = getattr(client, "mark", None)
    return mark() if mark is not None else None


#: The name the Slurm tests and callers know.
SlurmAdapter = LiveAdapter
