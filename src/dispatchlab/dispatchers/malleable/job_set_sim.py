"""A dedicated simulation of the greedy scheduler on one job set, for parameter searches.

It runs Algorithm 1 (:mod:`~dispatchlab.dispatchers.malleable.algorithm1`) on counts of servers —
servers are identical, so which ones a job gets never matters — with one event heap, in
either clock of :class:`~dispatchlab.dispatchers.malleable.config.Semantics`:

- ``engine``: the engine's whole seconds and its work model (durations and reconfiguration
  pauses rounded up as :mod:`dispatchlab.engine.work` does), energy integrated over node
  states from the first submission to the last job end as
  :func:`~dispatchlab.energy.accounting.node_energy` does. It reproduces the general loop
  running :class:`~dispatchlab.dispatchers.malleable.greedy.MalleableGreedy` exactly (same
  ends, counts and random draws; energy equal to rounding); ``tests/malleable`` compares them.
- ``float``: continuous times as in the authors' code; with :data:`CODE` semantics it follows
  ``Scheduler.update_schedule`` and ``Scheduler.stats`` (its reconfiguration arithmetic, its
  energy accounting, its random stream when the set carries it).

A decision point is every event time (``poll = 0``) or the first multiple of ``poll`` at or
after it; decision points where nothing changed are skipped (the greedy rules decide the
same on the same state and draw no random number then).
"""

from __future__ import annotations

import heapq
import math
import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dispatchlab.dispatchers.malleable.algorithm1 import (
    code_reconfiguration_time,
    paper_reconfiguration_time,
    power_off_duration,
    wants_power_off,
    wants_reconfiguration,
)
from dispatchlab.dispatchers.malleable.config import GreedyConfig
from dispatchlab.platform.power import NodePowerSpec, delays
from dispatchlab.workload.generators.mejri import JobSet
from dispatchlab.workload.workload import Workload

_END, _BACK = 0, 1


@dataclass(frozen=True)
class JobSetJobs:
    """Per-job inputs of the job-set simulation (Python lists: read per event).

    ``left0``: the work to do — reference seconds on ``units`` (engine clock) or the mass
    (float clock); ``mass``: the stretch denominator.
    """

    submit: list[float]
    left0: list[float]
    units: list[int]
    mass: list[float]
    alpha: list[float]
    data: list[float]
    lo: list[int]
    hi: list[int]
    servers: int
    code_random_state: object = None

    @classmethod
    def from_workload(cls, wl: Workload, servers: int) -> JobSetJobs:
        """An engine workload (whole seconds)."""
        from dispatchlab.dispatchers.malleable.cost import job_masses

        mass = job_masses(wl).tolist()
        return cls(wl.submit.tolist(), wl.runtime.astype(np.float64).tolist(),
                   wl.units.tolist(), mass, wl.alpha.tolist(), wl.data.tolist(),
                   wl.min_units.tolist(), wl.max_units.tolist(), servers)

    @classmethod
    def from_jobset(cls, js: JobSet) -> JobSetJobs:
        """A generated set in continuous time."""
        mass = js.mass.tolist()
        return cls(js.submit.tolist(), mass, [1] * len(js), mass, js.alpha.tolist(),
                   js.data.tolist(), js.min_servers.tolist(), js.max_servers.tolist(),
                   js.servers, js.code_random_state)


@dataclass(frozen=True)
class JobSetResult:
    """The paper's metrics of one run."""

    mean_stretch: float
    norm_power: float
    cost: float
    reconfigs: int
    poweroffs: int
    energy: float
    t0: float
    t1: float
    ends: list[float]

    def metrics(self) -> dict[str, float]:
        """The per-set metrics of the paper's tables."""
        return {"cost": self.cost, "mean_stretch": self.mean_stretch,
                "norm_power": self.norm_power, "reconfigs": float(self.reconfigs),
                "poweroffs": float(self.poweroffs)}


def run_job_set(jobs: JobSetJobs, cfg: GreedyConfig, *, seed: int = 0,
               code_random: random.Random | None = None) -> JobSetResult:
    """Simulate ``jobs`` on ``jobs.servers`` servers under ``cfg``.

    Random draws (power-off durations): ``np.random.default_rng(seed)`` as the engine gives
    the dispatcher, or — with ``code_random`` (code semantics) — the authors' stream, which
    server sampling also consumes.
    """
    sem = cfg.semantics
    engine_clock = sem.clock == "engine"
    power = sem.power
    n_srv = jobs.servers
    poll = sem.poll
    if code_random is not None:
        draw: Callable[[], float] = code_random.random
    else:
        draw = np.random.default_rng(seed).random
    sample = code_random.sample if code_random is not None else None
    boot_i, sd_i = delays((power,))
    boot = float(boot_i[0]) if engine_clock else power.boot_time
    sd = float(sd_i[0]) if engine_clock else power.shutdown_time
    code_arith = sem.reconfig_time == "code"
    rtime = code_reconfiguration_time if code_arith else paper_reconfiguration_time
    largest_first = sem.order == "largest-first"
    queue_empty_only = sem.poweroff_when == "queue-empty"
    all_scope = sem.poweroff_scope == "all"
    code_acc = sem.accounting == "code"

    submit, left0, units, alpha, data = jobs.submit, jobs.left0, jobs.units, jobs.alpha, \
        jobs.data
    lo, hi = jobs.lo, jobs.hi
    n_jobs = len(submit)
    upow = [units[j] ** alpha[j] for j in range(n_jobs)] if engine_clock else []
    # running job state: servers, work start, work left at work start, end, segment start,
    # live end-entry sequence, activation order
    n_of = [0] * n_jobs
    wf = [0.0] * n_jobs
    left = [0.0] * n_jobs
    end = [0.0] * n_jobs
    seg0 = [0.0] * n_jobs
    live = [-1] * n_jobs
    act = [0] * n_jobs
    final_end = [0.0] * n_jobs
    running: dict[int, None] = {}
    queue: deque[int] = deque()
    heap: list[tuple[float, int, int, int]] = []
    seq = 0
    idle = n_srv
    busy_area = 0.0  # server-seconds of job segments (engine/states accounting)
    cycles: list[tuple[float, float]] = []  # (start, duration) per server power-off
    pieces_energy = 0.0  # code accounting: job and reconfiguration pieces
    pieces_area = 0.0
    first_piece = math.inf
    reconfigs = 0
    nxt = 0
    now = 0.0

    def duration(j: int, work: float, n: int) -> float:
        if engine_clock:
            u = units[j]
            if n == u:
                return float(math.ceil(work))
            return float(math.ceil(work * (u / n) ** alpha[j] - 1e-9))
        return work / n ** alpha[j]

    def remaining_key(j: int, t: float) -> float:
        n = n_of[j]
        if engine_clock:
            u = units[j]
            factor = 1.0 if n == u else (u / n) ** alpha[j]
            return (left[j] - max(0.0, t - wf[j]) / factor) * upow[j]
        return left[j] - (min(max(t, wf[j]), end[j]) - wf[j]) * n ** alpha[j]

    def piece(start: float, stop: float, n: int) -> None:
        nonlocal pieces_energy, pieces_area, first_piece
        pieces_energy += power.busy(1) * (stop - start) * n
        pieces_area += (stop - start) * n
        if start < first_piece:
            first_piece = start

    def run_until(j: int, t_end: float) -> None:
        """Job ``j`` (re)enters the running jobs, last, ending at ``t_end``."""
        nonlocal seq
        end[j] = t_end
        running.pop(j, None)
        running[j] = None
        act[j] = live[j] = seq
        heapq.heappush(heap, (t_end, _END, seq, j))
        seq += 1

    def start_job(j: int, t: float, n: int) -> None:
        nonlocal idle
        idle -= n
        n_of[j] = n
        wf[j] = seg0[j] = t
        left[j] = left0[j]
        run_until(j, t + duration(j, left0[j], n))

    def reconfigure(j: int, t: float, m: int) -> None:
        nonlocal idle, busy_area, reconfigs
        n = n_of[j]
        idle -= m - n
        reconfigs += 1
        if engine_clock:
            busy_area += (t - seg0[j]) * n
            u = units[j]
            factor = 1.0 if n == u else (u / n) ** alpha[j]
            left[j] = max(0.0, left[j] - max(0.0, t - wf[j]) / factor)
            d = data[j]
            pause = 0.0 if d <= 0 else float(math.ceil(rtime(d, n, m) - 1e-9))
        else:
            done = (t - wf[j]) if code_arith else max(0.0, t - wf[j])
            left[j] = left[j] - done * n ** alpha[j]
            if code_acc:
                piece(seg0[j], t, n)
            else:
                busy_area += (t - seg0[j]) * n
            pause = rtime(data[j], n, m)
            if code_acc:
                piece(t, t + pause, m)
        seg0[j] = t + pause if code_acc else t
        wf[j] = t + pause
        n_of[j] = m
        run_until(j, wf[j] + duration(j, left[j], m))

    def power_off(t: float, count: int, length: float) -> None:
        nonlocal seq, idle
        idle -= count
        back = t + (max(float(math.ceil(length - 1e-9)), boot + max(sd, 1.0)) if engine_clock
                    else length)
        for _ in range(count):
            cycles.append((t, back - t))
        heapq.heappush(heap, (back, _BACK, seq, count))
        seq += 1

    def decide(t: float) -> None:
        nonlocal idle
        # 1. FIFO starts
        while queue and idle > 0:
            j = queue[0]
            n = min(hi[j], idle)
            if n < lo[j]:
                break
            if sample is not None:
                sample(range(idle), n)
            queue.popleft()
            start_job(j, t, n)
        # 2. reconfigurations
        if cfg.reconfigure and idle > 0 and running:
            keys = {j: remaining_key(j, t) for j in running}
            order = sorted(running, key=lambda j: (-keys[j] if largest_first else keys[j],
                                                   act[j]))
            for j in order:
                if idle <= 0:
                    break
                n = n_of[j]
                if n >= hi[j]:
                    continue
                k = min(hi[j] - n, idle)
                if wants_reconfiguration(cfg, n + k, hi[j], alpha[j], data[j]):
                    if sample is not None:
                        sample(range(idle), k)
                    reconfigure(j, t, n + k)
        # 3. power-offs
        if not cfg.power_off or idle <= 0:
            return
        if queue and (queue_empty_only or idle <= sum(lo[j] for j in queue)):
            return
        if all_scope:
            if wants_power_off(cfg, idle, n_srv):
                power_off(t, idle, power_off_duration(cfg, draw))
            return
        while idle > 0 and wants_power_off(cfg, idle, n_srv):
            if queue and idle <= sum(lo[j] for j in queue):
                break
            power_off(t, 1, power_off_duration(cfg, draw))

    def grid(e: float) -> float:
        if poll <= 0:
            return e
        k = math.ceil(e / poll)
        if (k - 1) * poll >= e:
            k -= 1
        elif k * poll < e:
            k += 1
        return float(k * poll)

    if sem.decide_at_zero:
        decide(0.0)
    while True:
        while heap and heap[0][1] == _END and live[heap[0][3]] != heap[0][2]:
            heapq.heappop(heap)
        if nxt >= n_jobs and not queue and not running:
            break
        e = heap[0][0] if heap else math.inf
        if nxt < n_jobs and submit[nxt] < e:
            e = submit[nxt]
        now = grid(e)
        while heap and heap[0][0] <= now:
            _, kind, s, payload = heapq.heappop(heap)
            if kind == _BACK:
                idle += payload
            elif live[payload] == s:
                j = payload
                del running[j]
                idle += n_of[j]
                final_end[j] = end[j]
                if code_acc:
                    piece(seg0[j], end[j], n_of[j])
                else:
                    busy_area += (end[j] - seg0[j]) * n_of[j]
        while nxt < n_jobs and submit[nxt] <= now:
            queue.append(nxt)
            nxt += 1
        if not code_acc and nxt >= n_jobs and not queue and not running \
                and now != max(final_end):
            break  # the engine's run ends with the last job, before this polled decision
        decide(now)

    stretch = [(final_end[j] - submit[j]) / jobs.mass[j] for j in range(n_jobs)]
    mean_stretch = math.fsum(stretch) / n_jobs
    if code_acc:
        return _code_result(jobs, power, cycles, pieces_energy, pieces_area, first_piece,
                            now, now + poll, final_end, mean_stretch, reconfigs)
    t0 = min(submit)
    t1 = max(final_end)
    span = t1 - t0
    energy = power.busy(1) * busy_area
    dark = 0.0
    for c0, length in cycles:
        for a, b, p in ((c0, c0 + sd, power.shutting_down),
                        (c0 + sd, c0 + length - boot, power.off),
                        (c0 + length - boot, c0 + length, power.booting)):
            lo_t, hi_t = max(a, t0), min(b, t1)
            if hi_t > lo_t:
                energy += p * (hi_t - lo_t)
                dark += hi_t - lo_t
    energy += power.idle * (n_srv * span - busy_area - dark)
    norm = energy / (max(span, 1.0) if engine_clock else span) / (n_srv * power.idle)
    return JobSetResult(mean_stretch, norm, mean_stretch * norm, reconfigs, len(cycles),
                        energy, t0, t1, final_end)


def _code_result(jobs: JobSetJobs, power: NodePowerSpec, cycles: list[tuple[float, float]],
                 pieces_energy: float, pieces_area: float, first_piece: float, last: float,
                 stop: float, final_end: list[float], mean_stretch: float, reconfigs: int
                 ) -> JobSetResult:
    """``Scheduler.stats`` after ``Scheduler.stop``: the power-offs still on at the last
    decision ``last`` end at ``stop``; each costs ``Consumption.reboot`` of its length; the
    energy runs from the first piece's start to the last piece's end."""
    energy = pieces_energy
    area = pieces_area
    first, latest = first_piece, max(final_end)
    sd_s, boot_s = power.shutdown_time, power.boot_time
    for c0, length in cycles:
        c1 = c0 + length
        if c1 > last:
            c1 = stop
        duration = c1 - c0
        off = duration - (sd_s + boot_s)
        energy += sd_s * power.shutting_down + off * power.off + boot_s * power.booting
        area += duration
        first = min(first, c0)
        latest = max(latest, c1)
    span = latest - first
    energy += power.idle * (span * jobs.servers - area)
    norm = energy / (power.idle * span * jobs.servers)
    return JobSetResult(mean_stretch, norm, mean_stretch * norm, reconfigs, len(cycles),
                        energy, first, latest, final_end)
