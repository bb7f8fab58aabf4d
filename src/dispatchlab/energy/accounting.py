"""Energy of a finished run, exact to the step function, from the segment and node logs.

Each node's power at any instant depends on its state (on, off, booting, shutting down,
down) and, when on, on what the jobs running there use of each resource. Both change only
at recorded events — segment starts and ends, node state changes — so the power of every
node is a step function and its energy a finite sum. :func:`node_energy` sweeps those
events per node (all nodes at once, vectorised) and integrates a :class:`NodePowerModel`
over ``[t0, t1)``; energy per node, per state (on-idle and on-busy told apart) and the IT
power over time follow.

Energy per job: a busy node's whole power (idle included) is split among the jobs on it in
proportion to their use of the node, ``Σ_r use_r / capacity_r`` (one unit asking 4 of 16
cores and 1 of 2 GPUs uses 0.75 of the node); each job's segments (killed, aborted and
reconfigured ones included, up to the instant they stopped) are integrated that way, so the
jobs' energies add up to the busy-node energy. The energy-delay product is the run's energy
(J) × its span ``t1 − t0`` (s).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from dispatchlab.arrays import FloatArray, IntArray
from dispatchlab.engine.recorder import Recorder
from dispatchlab.platform.node_states import BOOTING, DOWN, OFF, ON, SHUTTING_DOWN, STATE_NAMES
from dispatchlab.platform.power import GENERIC

#: Joules per kWh.
J_PER_KWH = 3.6e6


class NodePowerModel(Protocol):
    """Power of nodes as a function of their state and usage (vectorised)."""

    def power(self, nodes: IntArray, state: IntArray, usage: IntArray) -> FloatArray:
        """W drawn by ``nodes[k]`` in ``state[k]`` with ``usage[k]`` (per resource) in use."""
        ...

    def describe(self) -> dict[str, object]:
        """JSON-ready parameters."""
        ...


@dataclass(frozen=True)
class StatePowerModel:
    """One power per state; an on node draws ``busy`` W when a job uses it, else ``idle``.

    Defaults: the server of Mejri et al. (2020) Table 1, SPEC §8, as the platform's generic
    node holds it (idle 95 W, computing 190.74 W, off 9.75 W, booting 125.17 W, shutting
    down 101 W).
    """

    idle: float = GENERIC.idle
    busy: float = GENERIC.idle + GENERIC.core_first
    off: float = GENERIC.off
    booting: float = GENERIC.booting
    shutting_down: float = GENERIC.shutting_down
    down: float = GENERIC.down

    def power(self, nodes: IntArray, state: IntArray, usage: IntArray) -> FloatArray:
        """Per-state power; busy when any resource is in use."""
        table = np.zeros(max(ON, OFF, BOOTING, SHUTTING_DOWN, DOWN) + 1)
        table[[ON, OFF, BOOTING, SHUTTING_DOWN, DOWN]] = (
            self.idle, self.off, self.booting, self.shutting_down, self.down)
        out = table[state]
        busy = (state == ON) & (usage > 0).any(axis=1)
        out[busy] = self.busy
        return np.asarray(out, dtype=np.float64)

    def describe(self) -> dict[str, object]:
        """The constants."""
        return {"name": "per-state", "idle": self.idle, "busy": self.busy, "off": self.off,
                "booting": self.booting, "shutting_down": self.shutting_down}


@dataclass
class Energy:
    """Energy of one run over ``[t0, t1)``."""

    t0: int
    t1: int
    per_node: FloatArray  # J
    per_state: dict[str, float]  # J, states plus "idle" / "busy" for on nodes
    times: IntArray  # IT power step series: from times[k] until times[k+1], power[k] W
    power: FloatArray
    per_job: FloatArray | None = None  # J per job (engine index), busy-node power split by use

    @property
    def total(self) -> float:
        """J over the whole window."""
        return float(self.per_node.sum())

    @property
    def kwh(self) -> float:
        """kWh over the whole window."""
        return self.total / J_PER_KWH

    @property
    def peak(self) -> float:
        """Highest IT power (W)."""
        return float(self.power.max()) if len(self.power) else 0.0

    @property
    def mean_power(self) -> float:
        """Mean IT power over the window (W)."""
        return self.total / max(self.t1 - self.t0, 1)

    @property
    def edp(self) -> float:
        """Energy-delay product: J × the window's length in s."""
        return self.total * (self.t1 - self.t0)

    def summary(self) -> dict[str, object]:
        """JSON-ready figures of the run (the ``energy`` entry of a run summary)."""
        return {"window_s": [self.t0, self.t1], "total_j": self.total, "kwh": self.kwh,
                "peak_w": self.peak, "mean_w": self.mean_power, "edp_js": self.edp,
                "per_state_j": dict(self.per_state),
                **({"jobs_j": float(self.per_job.sum())} if self.per_job is not None else {})}


def node_energy(rec: Recorder, model: NodePowerModel, t0: int | None = None,
                t1: int | None = None) -> Energy:
    """Integrate ``model`` over every node from ``t0`` (default: the first submission) to
    ``t1`` (default: the last segment end); nodes are on and idle where no log says else."""
    seg = rec.segments
    plat = rec.platform
    n_nodes, n_res = plat.capacity.shape
    if t0 is None:
        t0 = int(rec.workload.submit.min()) if rec.workload.n_jobs else 0
    if t1 is None:
        t1 = int(seg.t1.max()) if len(seg) else t0
    owner = np.repeat(np.arange(len(seg)), seg.sizes)
    pair_nodes = seg.nodes.astype(np.int64)
    use = seg.counts.astype(np.int64)[:, None] * rec.req[seg.job[owner]]  # pairs × res
    log = np.frombuffer(rec.node_log, dtype=np.int64).reshape(-1, 3)
    n_p, n_l = len(owner), len(log)
    # events per node: a start at t0 of the window for every node (so idle nodes count),
    # then pair ends, state changes, pair starts at each time
    node = np.concatenate((np.arange(n_nodes), pair_nodes, log[:, 1], pair_nodes))
    time = np.concatenate((np.full(n_nodes, t0), seg.t1[owner], log[:, 0], seg.t0[owner]))
    kind = np.concatenate((np.full(n_nodes, -1), np.zeros(n_p, np.int64),
                           np.ones(n_l, np.int64), np.full(n_p, 2)))
    delta = np.concatenate((np.zeros((n_nodes, n_res), np.int64), -use,
                            np.zeros((n_l, n_res), np.int64), use))
    new_state = np.concatenate((np.full(n_nodes, -1), np.full(n_p, -1), log[:, 2],
                                np.full(n_p, -1)))
    order = _event_order(node, time, kind)
    node, time, delta, new_state = node[order], time[order], delta[order], new_state[order]
    first = np.r_[0, np.flatnonzero(np.diff(node)) + 1]
    group = np.repeat(np.arange(len(first)), np.diff(np.r_[first, len(node)]))
    level = np.cumsum(delta, axis=0)
    level -= np.r_[np.zeros((1, n_res), np.int64), level[first[1:] - 1]][group]
    last_change = np.maximum.accumulate(np.where(new_state >= 0, np.arange(len(node)), -1))
    state = np.where(last_change >= first[group], new_state[np.maximum(last_change, 0)], ON)
    # each event's state and usage hold until the node's next event (or the window's end)
    nxt = np.r_[time[1:], t1]
    nxt[np.r_[first[1:] - 1, len(node) - 1]] = t1
    lo, hi = np.clip(time, t0, t1), np.clip(nxt, t0, t1)
    dt = (hi - lo).astype(np.float64)
    p = model.power(node, state, level)
    per_node = np.bincount(node, weights=p * dt, minlength=n_nodes).astype(np.float64)
    busy = (state == ON) & (level > 0).any(axis=1)
    per_state = {name: float((p * dt)[(state == k) & ~busy].sum())
                 for k, name in enumerate(STATE_NAMES)}
    per_state["idle"] = per_state.pop("on")
    per_state["busy"] = float((p * dt)[busy].sum())
    times, power = _it_power(node, time, p, first, t0, t1)
    # per job: f = node power / node use (busy rows); each pair takes use × ∫ f over its span
    cap = plat.capacity.astype(np.float64)
    inv_cap = np.divide(1.0, cap, out=np.zeros_like(cap), where=cap > 0)
    weight = (level * inv_cap[node]).sum(axis=1)
    f = np.divide(p, weight, out=np.zeros_like(p), where=busy & (weight > 0))
    cum = np.r_[0.0, np.cumsum(f * dt)]
    # a pair's start and end are events of its node: ∫ f from the node's first event to
    # an event is cum at the event's sorted position (the events sharing its node and time
    # have zero length, so any of them gives the same integral)
    where = np.empty(len(order), np.int64)
    where[order] = np.arange(len(order))
    pair_w = (use * inv_cap[pair_nodes]).sum(axis=1)
    pair_e = pair_w * (cum[where[n_nodes:n_nodes + n_p]]
                       - cum[where[n_nodes + n_p + n_l:]])
    per_job = np.bincount(seg.job[owner], weights=pair_e,
                          minlength=rec.workload.n_jobs).astype(np.float64)
    return Energy(t0=t0, t1=t1, per_node=per_node, per_state=per_state, times=times,
                  power=power, per_job=per_job)


def _event_order(node: IntArray, time: IntArray, kind: IntArray) -> IntArray:
    """Stable order of the events by node, then time, then kind (as ``np.lexsort``), through
    one integer key when it fits in 62 bits (one sort instead of three)."""
    if not len(node):
        return np.zeros(0, np.int64)
    t_min = int(time.min())
    n_kinds, n_times = 4, int(time.max()) - t_min + 1
    if int(node.max()) + 1 > (1 << 62) // (n_times * n_kinds):
        return np.lexsort((kind, time, node))
    key = (node * n_times + (time - t_min)) * n_kinds + (kind + 1)
    return np.argsort(key, kind="stable")


def _it_power(node: IntArray, time: IntArray, p: FloatArray, first: IntArray, t0: int,
              t1: int) -> tuple[IntArray, FloatArray]:
    """Machine power as a step series from the per-node events (sorted by node, then time):
    each event changes the machine's power by its node's change of power."""
    change = np.diff(p, prepend=0.0)
    change[first] = p[first]
    at = np.clip(time, t0, t1)
    order = np.argsort(at, kind="stable")
    at, level = at[order], np.cumsum(change[order])
    last = np.r_[at[1:] != at[:-1], True]
    times, power = at[last], level[last]
    if not len(times) or times[0] > t0:
        times, power = np.r_[t0, times], np.r_[0.0, power]
    power[np.abs(power) < 1e-9] = 0.0
    inside = times < t1
    return times[inside].astype(np.int64), power[inside]


def run_energy(rec: Recorder) -> Energy:
    """Energy of a run under its platform's node power model (from the first submission
    to the last segment end)."""
    table = rec.platform.power_table
    if table is None:
        raise ValueError(f"platform '{rec.platform.name}' has no node power model")
    return node_energy(rec, table)
