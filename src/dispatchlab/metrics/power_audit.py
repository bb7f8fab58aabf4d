"""Audit of the power cap from the record alone: IT power ≤ cap after every start.

The machine's IT power is rebuilt from the logs, independently of the engine's running sum:
the platform's node power model integrated over the segment and node-state logs
(:func:`~dispatchlab.energy.accounting.node_energy`), or, when jobs drew a power of their
own (a column, a prediction file), the sum of the running segments' power plus the state
power of nodes that are not on and the idle power of on nodes that host nothing. The cap in
force is the one of the run's power samples.

Wherever the engine raised the power — a segment start, a node sent booting or shutting
down — the power just after must be within the cap, or not above the power just before (a
start that lowers the power is accepted over the cap). Stretches over the cap can therefore
only begin when the cap falls or a node comes back on its own (scenario), and the summary
reports their length (``power.over_cap_seconds``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dispatchlab.arrays import FloatArray, IntArray
from dispatchlab.energy.accounting import NodePowerModel, node_energy
from dispatchlab.engine.recorder import Recorder
from dispatchlab.platform.node_states import BOOTING, ON, SHUTTING_DOWN
from dispatchlab.platform.power import NodePowerTable

EPS = 1e-6


@dataclass(frozen=True)
class _BaseOnly:
    """Node part when jobs carry their own power: state power, idle only when empty."""

    table: NodePowerTable

    def power(self, nodes: IntArray, state: IntArray, usage: IntArray) -> FloatArray:
        base = self.table.state_table()[nodes, state]
        busy = (state == ON) & (usage > 0).any(axis=1)
        return np.asarray(np.where(busy, 0.0, base), dtype=np.float64)

    def describe(self) -> dict[str, object]:
        return {"name": "node-base"}


@dataclass(frozen=True)
class _ActiveOnly:
    """Node model without idle power (``count_idle=False``): what jobs add above idle."""

    table: NodePowerTable

    def power(self, nodes: IntArray, state: IntArray, usage: IntArray) -> FloatArray:
        return np.asarray(np.where(state == ON, self.table.active(nodes, usage), 0.0),
                          dtype=np.float64)

    def describe(self) -> dict[str, object]:
        return {"name": "node-active"}


def it_power(rec: Recorder) -> tuple[IntArray, FloatArray]:
    """The run's IT power as a step series ``(times, watts)`` as the engine counted it."""
    mode = rec.power_mode or {"node_mode": False, "idle_counted": False}
    seg = rec.segments
    t0 = int(rec.workload.submit.min()) if rec.workload.n_jobs else 0
    t1 = int(seg.t1.max()) + 1 if len(seg) else t0 + 1
    table = rec.platform.power_table
    parts_t: list[IntArray] = []
    parts_w: list[FloatArray] = []
    if table is not None and (mode["node_mode"] or mode["idle_counted"]):
        model: NodePowerModel = (
            _BaseOnly(table) if not mode["node_mode"]
            else table if mode["idle_counted"] else _ActiveOnly(table))
        e = node_energy(rec, model, t0, t1)
        parts_t.append(e.times)
        parts_w.append(np.diff(np.r_[0.0, e.power]))
    if not mode["node_mode"] and seg.power is not None and len(seg):
        parts_t += [seg.t0, seg.t1]
        parts_w += [seg.power, -seg.power]
    if not parts_t:
        return np.array([t0], np.int64), np.array([0.0])
    t = np.concatenate(parts_t).astype(np.int64)
    w = np.concatenate(parts_w)
    order = np.argsort(t, kind="stable")
    t, w = t[order], np.cumsum(w[order])
    last = np.r_[t[1:] != t[:-1], True]
    return t[last], w[last]


def check_power_cap(rec: Recorder) -> None:
    """Raise :class:`AuditError` when the power was raised over the cap in force."""
    from dispatchlab.metrics.audit import AuditError

    if not len(rec.power_samples):
        return
    pw = np.frombuffer(rec.power_samples, dtype=np.float64).reshape(-1, 3)
    times, watts = it_power(rec)
    seg = rec.segments
    log = np.frombuffer(rec.node_log, dtype=np.int64).reshape(-1, 3)
    raised = log[np.isin(log[:, 2], (BOOTING, SHUTTING_DOWN)), 0]
    at = np.unique(np.concatenate((seg.t0, raised)).astype(np.int64))
    if not len(at):
        return
    k = np.searchsorted(times, at, side="right") - 1
    after = np.where(k >= 0, watts[np.maximum(k, 0)], 0.0)
    kb = np.searchsorted(times, at, side="left") - 1
    before = np.where(kb >= 0, watts[np.maximum(kb, 0)], 0.0)
    kc = np.searchsorted(pw[:, 0], at, side="right") - 1
    cap = np.where(kc >= 0, pw[np.maximum(kc, 0), 2], np.inf)
    bad = (after > cap + EPS) & (after > before + EPS)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        who = np.flatnonzero(seg.t0 == at[i])
        job = f"job {int(rec.workload.job_id[seg.job[who[0]]])} " if len(who) else ""
        raise AuditError(f"at {int(at[i])} {job}took the IT power from {before[i]:.6g} W to "
                         f"{after[i]:.6g} W, over the cap of {cap[i]:.6g} W")
