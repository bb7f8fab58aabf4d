"""A default platform for a workload that came without one (from its SWF header)."""

from __future__ import annotations

import numpy as np

from dispatchlab.errors import ConfigError
from dispatchlab.platform.platform import CORES, Platform, check_size
from dispatchlab.workload.load_report import header_number
from dispatchlab.workload.workload import Workload


def platform_for(workload: Workload) -> tuple[Platform, str]:
    """:func:`header_platform`, an error naming the trace file when its header gives a
    machine dispatchlab refuses."""
    try:
        return header_platform(workload)
    except ConfigError as exc:
        if exc.source is not None:
            raise
        why = str(exc).removeprefix(f"field '{exc.field}': ")
        raise ConfigError(f"the machine its SWF header gives: {why}", source=workload.source,
                          field=exc.field) from None


def header_platform(workload: Workload) -> tuple[Platform, str]:
    """The machine a trace was recorded on, as far as its header tells, and how it was chosen.

    Whole-node workloads get ``MaxNodes`` nodes of ``cores_per_node``; processor-pool ones
    ``MaxNodes`` nodes sharing ``MaxProcs`` cores. Without a header, one core per
    processor of the widest job.
    """
    if workload.meta.get("format") == "eurora":
        raise ConfigError("an Eurora batch carries no machine description: add -p eurora "
                          "(or another Eurora preset: eurora-8, eurora-32, …)", field="platform",
                          source=workload.source)
    opts = workload.meta.get("options", {})
    max_nodes = header_number(workload.meta, "MaxNodes")
    max_procs = header_number(workload.meta, "MaxProcs")
    if opts.get("units") == "nodes":
        cpn = int(workload.req_of(CORES).max()) if workload.n_jobs else 1
        nodes = max_nodes or int(workload.units.max())
        if max_procs and nodes * cpn != max_procs and opts.get("cores_per_node"):
            raise ConfigError(
                f"{nodes} nodes × {cpn} cores = {nodes * cpn:,} cores, but the SWF header "
                f"says MaxProcs {max_procs:,}; give the machine with -p/--platform",
                field="swf-cores-per-node")
        return (Platform.homogeneous(nodes, {CORES: cpn}, name=f"nodes={nodes},cores={cpn}"),
                "from the SWF header (whole nodes)")
    if max_nodes and max_procs:
        return header_machine(max_nodes, max_procs), "from the SWF header (MaxNodes, MaxProcs)"
    if max_procs or max_nodes:
        n = int(max_procs or max_nodes or 1)
        return (Platform.homogeneous(n, {CORES: 1}, name=f"nodes={n},cores=1"),
                "from the SWF header (one core per processor)")
    widest = int((workload.units * workload.req_of(CORES)).max()) if workload.n_jobs else 1
    return (Platform.homogeneous(widest, {CORES: 1}, name=f"nodes={widest},cores=1"),
            "no header: one core per processor of the widest job")


def header_machine(nodes: int, procs: int) -> Platform:
    """``nodes`` nodes holding exactly ``procs`` cores: when ``procs`` is not a multiple
    of ``nodes`` (Curie: 93,312 on 5,544), ``procs mod nodes`` nodes get one core more —
    rounding every node up would invent cores (94,248 on Curie)."""
    low, extra = divmod(procs, nodes)
    if extra == 0 or low == 0:
        cpn = max(low, 1) if extra == 0 else -(-procs // nodes)
        return Platform.homogeneous(nodes, {CORES: cpn}, name=f"nodes={nodes},cores={cpn}")
    check_size(nodes, {CORES: low + 1})
    cap = np.full((nodes, 1), low, dtype=np.int64)
    cap[:extra, 0] = low + 1
    width = len(str(nodes - 1))
    return Platform(resources=(CORES,), capacity=cap,
                    node_names=tuple(f"n{i:0{width}d}" for i in range(nodes)),
                    name=f"{extra}x{low + 1}+{nodes - extra}x{low} cores ({procs:,} cores)")
