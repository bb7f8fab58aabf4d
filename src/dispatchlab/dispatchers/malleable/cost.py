"""The paper's metrics of an engine run: mean stretch, normalised mean power, their product.

- stretch of a job: ``(end − submit) / mass``, its mass being its run time on one server:
  the generator's exact value when the workload carries it (``meta["mass"]``), else
  ``runtime · units^α``;
- normalised mean power: the servers' mean power over ``[first submission, last end]``
  (:func:`~dispatchlab.energy.accounting.node_energy` with the per-state model) divided by
  the power of the same servers all idle;
- cost: their product (Mejri et al. §3.2).
"""

from __future__ import annotations

import numpy as np

from dispatchlab.arrays import FloatArray
from dispatchlab.dispatchers.malleable.config import TABLE1, state_model
from dispatchlab.energy.accounting import node_energy
from dispatchlab.engine.recorder import RECONFIGURED, Recorder
from dispatchlab.platform.node_states import OFF, SHUTTING_DOWN
from dispatchlab.platform.platform import Platform
from dispatchlab.platform.power import NodePowerSpec, delays
from dispatchlab.workload.workload import Workload


def malleable_platform(servers: int, power: NodePowerSpec = TABLE1) -> Platform:
    """``servers`` identical one-unit servers with the boot and shutdown delays of
    ``power`` (in whole seconds)."""
    base = Platform.homogeneous(servers, {"cores": 1})
    boot, shutdown = delays((power,) * servers)
    return Platform(base.resources, base.capacity, base.node_names, name=f"mejri-{servers}",
                    boot_time=boot, shutdown_time=shutdown)


def job_masses(wl: Workload) -> FloatArray:
    """Each job's mass (run time on one server): ``meta["mass"]`` when the workload holds
    one per job, else ``runtime · units^α``."""
    given = wl.meta.get("mass")
    if given is not None and len(given) == wl.n_jobs:
        return np.asarray(given, dtype=np.float64)
    return np.asarray(wl.runtime * wl.units.astype(np.float64) ** wl.alpha, dtype=np.float64)


def run_metrics(rec: Recorder, power: NodePowerSpec = TABLE1) -> dict[str, float]:
    """Cost, mean stretch, normalised mean power, reconfigurations and power-offs of a run."""
    wl = rec.workload
    mass = job_masses(wl)
    stretch = (rec.end_time - wl.submit) / mass
    energy = node_energy(rec, state_model(power))
    norm = energy.mean_power / (rec.platform.n_nodes * power.idle)
    mean_stretch = float(stretch.mean())
    log = np.frombuffer(rec.node_log, dtype=np.int64).reshape(-1, 3)
    delay = rec.platform.shutdown_time
    first_state = SHUTTING_DOWN if delay is not None and int(delay.max()) > 0 else OFF
    switched = log[:, 2] == first_state
    return {"cost": mean_stretch * norm, "mean_stretch": mean_stretch, "norm_power": norm,
            "reconfigs": float((rec.segments.outcome == RECONFIGURED).sum()),
            "poweroffs": float(switched.sum()), "energy_j": energy.total}
