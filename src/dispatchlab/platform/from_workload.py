"""A default platform for a workload that came without one (from its SWF header)."""

from __future__ import annotations

from dispatchlab.platform.platform import CORES, Platform
from dispatchlab.workload.workload import Workload


def platform_for(workload: Workload) -> tuple[Platform, str]:
    """The machine a trace was recorded on, as far as its header tells, and how it was chosen.

    Whole-node workloads get ``MaxNodes`` nodes of ``cores_per_node``; processor-pool ones
    ``MaxNodes`` nodes sharing ``MaxProcs`` cores. Without a header, one core per
    processor of the widest job.
    """
    header = workload.meta.get("load_report", {}).get("header", {})
    opts = workload.meta.get("options", {})

    def num(key: str) -> int | None:
        try:
            return int(str(header.get(key, "")).split()[0])
        except (ValueError, IndexError):
            return None

    max_nodes, max_procs = num("MaxNodes"), num("MaxProcs")
    if opts.get("units") == "nodes":
        cpn = int(workload.req_of(CORES).max()) if workload.n_jobs else 1
        nodes = max_nodes or int(workload.units.max())
        return (Platform.homogeneous(nodes, {CORES: cpn}, name=f"nodes={nodes},cores={cpn}"),
                "from the SWF header (whole nodes)")
    if max_nodes and max_procs:
        cpn = -(-max_procs // max_nodes)
        return (Platform.homogeneous(max_nodes, {CORES: cpn},
                                     name=f"nodes={max_nodes},cores={cpn}"),
                "from the SWF header (MaxNodes, MaxProcs)")
    if max_procs or max_nodes:
        n = int(max_procs or max_nodes or 1)
        return (Platform.homogeneous(n, {CORES: 1}, name=f"nodes={n},cores=1"),
                "from the SWF header (one core per processor)")
    widest = int((workload.units * workload.req_of(CORES)).max()) if workload.n_jobs else 1
    return (Platform.homogeneous(widest, {CORES: 1}, name=f"nodes={widest},cores=1"),
            "no header: one core per processor of the widest job")
