"""PA-HPC-SIM's job power (``OnlineDispatcher::addJob`` with ``Predictor.hpp``).

The peer looks a job up in its prediction file by the job file's exact id string (``498605``
against the file's ``498605.node129``: on the shared Eurora batches none matches), and a job
without a prediction gets ``40 W × nodes + 62 W × GPUs + 115 W × MICs``. The figure is
rounded up (at least 1 W), split into whole W per node (at least 1, at most 400 W: the
node's maximum) and multiplied back. Its accounting counts these figures only (no idle
power): ``--job-power pa-hpc-sim --no-idle-power``.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from dispatchlab.workload.workload import Workload

#: The peer's fallback formula (W per node, per GPU, per MIC) and per-node maximum.
PER_NODE, PER_GPU, PER_MIC, NODE_MAX = 40.0, 62.0, 115.0, 400


def peer_job_watts(workload: Workload,
                   predictions: dict[str, float] | None = None
                   ) -> npt.NDArray[np.float64]:
    """Each job's power as the peer computes it (``predictions``: the peer's exact-string
    table, job id text → W; none by default, as on the shared batches)."""
    res = list(workload.resources)
    gpu = workload.req[:, res.index("gpu")] if "gpu" in res else None
    mic = workload.req[:, res.index("mic")] if "mic" in res else None
    out = np.empty(workload.n_jobs, dtype=np.float64)
    table = predictions or {}
    for j, (job_id, units) in enumerate(zip(workload.job_id.tolist(),
                                            workload.units.tolist(), strict=True)):
        n = int(units)
        watts = table.get(str(job_id))
        if watts is None:
            gpus = n * int(gpu[j]) if gpu is not None else 0
            mics = n * int(mic[j]) if mic is not None else 0
            watts = PER_NODE * n + PER_GPU * gpus + PER_MIC * mics
        total = max(math.ceil(watts), 1)
        per_node = min(max(math.ceil(total / n), 1), NODE_MAX)
        out[j] = float(per_node * n)
    return out
