"""The power inputs of the compiled slot loop under a cap (node model or job column).

With one resource vector per unit, a node's power depends only on how many of its unit
slots are in use, so the engine's meter is tabulated once: ``node_w[n, k]`` is exactly what
:class:`~dispatchlab.engine.power_meter.MachinePower` computes for node ``n`` with ``k``
units in use (idle power counted or not, as the run says), ``job_w[j]`` is job ``j``'s own
power (its ``power`` column in job-power mode, 0 with the node model) and ``used`` the
machine's power with every node idle — the engine's starting sum. The loop then adds and
subtracts those figures in the engine's order, so it makes the same cap decisions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dispatchlab.arrays import FloatArray, IntArray
from dispatchlab.engine.budget import JobColumnPower
from dispatchlab.engine.power_meter import MachinePower
from dispatchlab.engine.simulator import Simulator
from dispatchlab.engine.state import SystemView
from dispatchlab.platform.node_states import DOWN, ON


@dataclass(frozen=True)
class SlotPower:
    """A fixed cap and the tabulated power model (see the module docstring)."""

    cap: float
    used: float
    node_w: FloatArray  # nodes × (max slots + 1)
    down_w: FloatArray  # what each node draws down (nodes leaving: the scenario loop)
    job_w: FloatArray
    unit_w: float  # a lower bound of what one more unit adds to any node
    node_mode: bool
    idle_counted: bool


def slot_power(sim: Simulator, slots: IntArray) -> SlotPower | str:
    """The compiled loop's power inputs for ``sim`` (its cap: the fixed one, or the
    starting one of a varying cap), or why it cannot take them."""
    wl, plat = sim.workload, sim.platform
    view = SystemView(wl, plat, sim.req)
    if not (view.node_state == ON).all():  # pragma: no cover - nodes start on
        return "power: some node does not start on"
    jobs = sim.power_model
    if jobs is None and plat.power_table is None:
        jobs = JobColumnPower(wl)  # the engine's default (its errors too)
    meter = MachinePower(view, sim.req, plat.power_table, jobs, sim.count_idle)
    unit = sim.req[0]
    width = int(slots.max()) + 1
    node_w = np.full((plat.n_nodes, width), np.inf)
    for nd in range(plat.n_nodes):
        for k in range(int(slots[nd]) + 1):
            node_w[nd, k] = meter._w(nd, ON, k * unit)
    down_w = np.array([meter._w(nd, DOWN, 0 * unit) for nd in range(plat.n_nodes)],
                      dtype=np.float64)
    steps = [node_w[nd, k + 1] - node_w[nd, k]
             for nd in range(plat.n_nodes) for k in range(int(slots[nd]))]
    if jobs is None:
        job_w = np.zeros(wl.n_jobs)
    else:
        assert isinstance(jobs, JobColumnPower)
        job_w = np.array([jobs.job_power(j, unit, unit) for j in range(wl.n_jobs)],
                         dtype=np.float64)
    cap = float("inf") if sim.power_cap is None else float(sim.power_cap)  # as the engine
    return SlotPower(cap=cap, used=meter.nodes_total, node_w=node_w, down_w=down_w,
                     job_w=job_w, unit_w=float(min(steps)) if steps else 0.0,
                     node_mode=meter.node_mode,
                     idle_counted=meter.table is not None and sim.count_idle)
