"""The inputs of the compiled loop for jobs whose units ask different resource vectors.

Beyond the workload and the policy's plan, that loop needs each job's per-unit vector, the
nodes' capacity and, under a power budget, the engine's power meter as arrays: which
figures the meter uses (``mode``: 0 jobs draw their own power only, 1 the platform's node
model, 2 the workload's power column with idle nodes counted), per node its idle,
first-core, further-core, GPU and MIC figures, the columns of cores, GPUs and MICs, each
node's starting power and their sum as the engine starts it, what each node draws down
(nodes leaving), each job's own power. The
loop then computes every figure with the meter's own operations
(:mod:`dispatchlab.dispatchers.rule_based.compiled.vector_parts`).
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
class VectorPower:
    """A power budget as the vector loop reads it (see the module docstring)."""

    cap: float
    used: float
    mode: int
    tab: FloatArray  # nodes × (idle, first core, core, GPU, MIC)
    cols: IntArray  # cores, GPUs, MICs columns (-1: none)
    count_idle: bool
    node_w: FloatArray  # each node's power at the start
    job_w: FloatArray  # each job's own power
    node_mode: bool
    idle_counted: bool
    down_w: FloatArray  # what each node draws down (nodes leaving)


@dataclass(frozen=True)
class EnergyRanking:
    """The ``energy-model`` allocator's inputs: the platform's node model (per node idle,
    first-core, further-core, GPU and MIC W), its columns of cores, GPUs and MICs, and
    each resource's weight in a node's load (1 / its largest capacity)."""

    tab: FloatArray
    cols: IntArray
    scale: FloatArray


@dataclass(frozen=True)
class VectorInputs:
    """Per-job unit vectors, the nodes' capacity, the power budget (if any) and the
    ``energy-model`` allocator's inputs (``None``: first-fit)."""

    req: IntArray
    capacity: IntArray
    power: VectorPower | None
    energy: EnergyRanking | None = None


def vector_inputs(sim: Simulator, allocator: str = "first-fit") -> VectorInputs | str:
    """The vector loop's inputs for ``sim`` placing with ``allocator``, or why it cannot
    take them."""
    req = np.ascontiguousarray(sim.req, dtype=np.int64)
    if not (req > 0).any(axis=1).all():
        return "a job's unit asks no resource"
    capacity = np.ascontiguousarray(sim.platform.capacity, dtype=np.int64)
    power: VectorPower | None = None
    if {"power-fixed-cap", "power"} & sim.features():
        found = vector_power(sim)
        if isinstance(found, str):
            return found
        power = found
    energy: EnergyRanking | None = None
    if allocator == "energy-model":
        ranked = energy_ranking(sim)
        if isinstance(ranked, str):
            return ranked
        energy = ranked
    return VectorInputs(req=req, capacity=capacity, power=power, energy=energy)


def energy_ranking(sim: Simulator) -> EnergyRanking | str:
    """The ``energy-model`` allocator's inputs, or why the loop cannot rank as it does: it
    needs the platform's node model, and each resource's largest capacity a power of two —
    then every node's load (free capacity × weights, summed) is exact whatever the order
    of the sum, as numpy's matrix product gives it."""
    plat = sim.platform
    table = plat.power_table
    if table is None:
        return "allocator 'energy-model' without a node power model (general loop)"
    top = plat.capacity.max(axis=0)
    if any(int(x) <= 0 or int(x) & (int(x) - 1) for x in top):
        return ("allocator 'energy-model': a resource's largest capacity is not a power of "
                "two (its load sums would depend on their order; general loop)")
    tab = np.zeros((plat.n_nodes, 5))
    for k, name in enumerate(("idle", "core_first", "core", "gpu", "mic")):
        tab[:, k] = table[name]
    res = list(table.resources)
    cols = np.array([res.index(r) if r in res else -1 for r in ("cores", "gpu", "mic")],
                    dtype=np.int64)
    scale = 1.0 / np.where(top > 0, top, 1).astype(np.float64)
    return EnergyRanking(tab=tab, cols=cols, scale=np.ascontiguousarray(scale))


def vector_power(sim: Simulator) -> VectorPower | str:
    """The engine's meter for ``sim`` as arrays (its cap: the fixed one, else none until a
    scenario row sets it), or why the loop cannot reproduce it."""
    wl, plat = sim.workload, sim.platform
    view = SystemView(wl, plat, sim.req)
    if not (view.node_state == ON).all():  # pragma: no cover - nodes start on
        return "power: some node does not start on"
    jobs = sim.power_model
    if jobs is None and plat.power_table is None:
        jobs = JobColumnPower(wl)  # the engine's default (its errors too)
    meter = MachinePower(view, sim.req, plat.power_table, jobs, sim.count_idle)
    table = meter.table
    n = plat.n_nodes
    tab = np.zeros((n, 5))
    cols = np.full(3, -1, np.int64)
    if table is None:
        mode = 0
    else:
        mode = 1 if meter.node_mode else 2
        for k, name in enumerate(("idle", "core_first", "core", "gpu", "mic")):
            tab[:, k] = table[name]
        res = list(plat.resources)
        cols[:] = [res.index(r) if r in res else -1 for r in ("cores", "gpu", "mic")]
        if tuple(table.resources) != tuple(plat.resources):  # pragma: no cover - one source
            return "power: the node power table's resources are not the platform's"
    if jobs is None:
        job_w = np.zeros(wl.n_jobs)
    else:
        assert isinstance(jobs, JobColumnPower)
        one = np.zeros(1, np.int64)
        job_w = np.array([meter.job_part(j, one, one) for j in range(wl.n_jobs)],
                         dtype=np.float64)
    cap = float("inf") if sim.power_cap is None else float(sim.power_cap)  # as the engine
    none = np.zeros(len(plat.resources), np.int64)
    down_w = np.array([meter._w(nd, DOWN, none) for nd in range(n)], dtype=np.float64)
    return VectorPower(cap=cap, used=meter.nodes_total, mode=mode, tab=tab, cols=cols,
                       count_idle=bool(sim.count_idle), node_w=np.array(meter.node_w),
                       job_w=job_w, node_mode=meter.node_mode,
                       idle_counted=table is not None and bool(sim.count_idle), down_w=down_w)
