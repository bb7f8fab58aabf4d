"""The machine being simulated: nodes × named resource types, held as arrays."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from dispatchlab.arrays import IntArray
from dispatchlab.errors import ConfigError
from dispatchlab.platform.power import NodePowerSpec, NodePowerTable, delays
from dispatchlab.platform.queues import QueueConfig
from dispatchlab.platform.reservations import Reservation

#: The resource every platform has; SWF processors map onto it.
CORES = "cores"
#: Largest machine accepted (the largest systems have ~160,000 nodes): a typo such as
#: ``nodes=2000000000`` would otherwise allocate tens of GB before failing.
MAX_NODES = 1_000_000
#: Largest per-node amount of one resource (MB of memory included): far beyond any
#: machine, far below int64 (sums over nodes and time must not overflow).
MAX_AMOUNT = 10**12


@dataclass(frozen=True, eq=False)
class Platform:
    """Nodes with a capacity per resource type, grouped into named partitions.

    ``capacity[n, r]`` is node ``n``'s amount of resource ``resources[r]``; a resource a
    node lacks has capacity 0. ``groups`` maps a group/partition name to node indices.
    ``node_power`` is each node's nominal busy power in W (used by energy-aware allocators).
    ``queues`` and ``reservations`` are what the operators configure (see
    :mod:`~dispatchlab.platform.queues`, :mod:`~dispatchlab.platform.reservations`); the
    engine enforces them for every dispatcher. ``boot_time`` / ``shutdown_time`` are each
    node's transition delays in whole seconds (0 when not given): a node switched on is
    usable that long after, one switched off is off that long after.
    """

    resources: tuple[str, ...]
    capacity: IntArray
    node_names: tuple[str, ...]
    groups: Mapping[str, IntArray] = field(default_factory=dict)
    node_power: npt.NDArray[np.float64] | None = None
    name: str = "platform"
    queues: Mapping[str, QueueConfig] = field(default_factory=dict)
    reservations: tuple[Reservation, ...] = ()
    boot_time: IntArray | None = None
    shutdown_time: IntArray | None = None
    node_model: tuple[NodePowerSpec, ...] | None = None

    def __post_init__(self) -> None:
        cap = np.asarray(self.capacity, dtype=np.int64)
        if cap.ndim != 2:
            raise ConfigError("capacity must be a nodes × resources matrix", field="capacity")
        if cap.shape[0] == 0:
            raise ConfigError("a platform needs at least one node", field="nodes")
        if cap.shape[1] != len(self.resources):
            raise ConfigError(
                f"{cap.shape[1]} capacity columns for {len(self.resources)} resources",
                field="resources",
            )
        if len(set(self.resources)) != len(self.resources):
            raise ConfigError(f"duplicate resource names {self.resources}", field="resources")
        if CORES not in self.resources:
            raise ConfigError("every platform needs a 'cores' resource", field="resources")
        if (cap < 0).any():
            n, r = np.argwhere(cap < 0)[0]
            raise ConfigError(
                f"node {self.node_names[n]} has negative capacity {cap[n, r]}",
                field=self.resources[r],
            )
        if len(self.node_names) != cap.shape[0]:
            raise ConfigError("one name per node is needed", field="node_names")
        if len(set(self.node_names)) != len(self.node_names):
            raise ConfigError("node names must be unique", field="node_names")
        groups: dict[str, IntArray] = {}
        for gname, members in self.groups.items():
            idx = np.asarray(members, dtype=np.int64)
            if idx.size and (idx.min() < 0 or idx.max() >= cap.shape[0]):
                raise ConfigError(f"group '{gname}' names a node that does not exist", field=gname)
            groups[gname] = idx
        cap.setflags(write=False)
        object.__setattr__(self, "capacity", cap)
        object.__setattr__(self, "groups", groups)
        if self.node_power is not None:
            power = np.asarray(self.node_power, dtype=np.float64)
            if power.shape != (cap.shape[0],):
                raise ConfigError("one power rating per node is needed", field="node_power")
            object.__setattr__(self, "node_power", power)
        table = None
        if self.node_model is not None:
            specs = tuple(self.node_model)
            if len(specs) != cap.shape[0]:
                raise ConfigError("one power model per node is needed", field="node_model")
            object.__setattr__(self, "node_model", specs)
            table = NodePowerTable(specs, tuple(self.resources))
            boot, down = delays(specs)
            if self.boot_time is None:
                object.__setattr__(self, "boot_time", boot)
            if self.shutdown_time is None:
                object.__setattr__(self, "shutdown_time", down)
        object.__setattr__(self, "_power_table", table)
        for name in ("boot_time", "shutdown_time"):
            value = getattr(self, name)
            delay = (np.zeros(cap.shape[0], np.int64) if value is None
                     else np.asarray(np.broadcast_to(value, (cap.shape[0],)), dtype=np.int64))
            if (delay < 0).any():
                raise ConfigError(f"{name} must be ≥ 0 s", field=name)
            delay.setflags(write=False)
            object.__setattr__(self, name, delay)
        object.__setattr__(self, "queues", dict(self.queues))
        object.__setattr__(self, "reservations", tuple(self.reservations))
        for qname, q in self.queues.items():
            self.node_set(q.nodes, f"queues.{qname}.nodes")
            for res in q.max_total:
                self.resource_index(res)
        for k, r in enumerate(self.reservations):
            self.node_set(r.nodes, f"reservations[{k}].nodes")
            if r.queue_name in self.queues and self.queues[r.queue_name].has_time_rules:
                raise ConfigError(f"queue '{r.queue_name}' of reservation '{r.name}' must not "
                                  "have start windows or stops of its own",
                                  field=f"reservations[{k}].queue")

    def node_set(self, names: Sequence[str], where: str = "nodes") -> IntArray:
        """Node indices named by node names and/or group labels (sorted, distinct)."""
        index = {n: i for i, n in enumerate(self.node_names)}
        out: set[int] = set()
        for name in names:
            if name in self.groups:
                out.update(self.groups[name].tolist())
            elif name in index:
                out.add(index[name])
            else:
                raise ConfigError(f"'{name}' is neither a node nor a group of platform "
                                  f"'{self.name}'", field=where)
        return np.array(sorted(out), dtype=np.int64)

    @property
    def has_rules(self) -> bool:
        """True when queues with rules or reservations are configured."""
        return bool(self.reservations) or any(
            q.has_time_rules or q.nodes or q.max_units is not None or q.max_nodes is not None
            or q.max_walltime is not None or q.max_total for q in self.queues.values())

    def with_rules(
        self,
        queues: Mapping[str, QueueConfig] | None = None,
        reservations: Sequence[Reservation] | None = None,
    ) -> Platform:
        """A copy with these queue definitions and/or reservations (others kept)."""
        from dataclasses import replace

        return replace(self, queues=dict(self.queues if queues is None else queues),
                       reservations=tuple(self.reservations if reservations is None
                                          else reservations))

    @property
    def power_table(self) -> NodePowerTable | None:
        """The node power model as arrays (``None`` when the platform has none)."""
        return self._power_table  # type: ignore[attr-defined]

    def with_node_model(self, specs: NodePowerSpec | tuple[NodePowerSpec, ...]) -> Platform:
        """A copy with this node power model (one spec for all nodes, or one per node); the
        transition delays come from it."""
        from dataclasses import replace

        per_node = (specs,) * self.n_nodes if isinstance(specs, NodePowerSpec) else specs
        return replace(self, node_model=per_node, boot_time=None, shutdown_time=None)

    @property
    def n_nodes(self) -> int:
        """Number of nodes."""
        return int(self.capacity.shape[0])

    @property
    def total(self) -> IntArray:
        """Summed capacity per resource type."""
        return np.asarray(self.capacity.sum(axis=0), dtype=np.int64)

    def resource_index(self, name: str) -> int:
        """Column of resource ``name``; a ConfigError when the platform lacks it."""
        try:
            return self.resources.index(name)
        except ValueError:
            raise ConfigError(
                f"unknown resource '{name}' (platform has {', '.join(self.resources)})",
                field="resources",
            ) from None

    @classmethod
    def homogeneous(
        cls, nodes: int, resources: Mapping[str, int], *, name: str = "platform"
    ) -> Platform:
        """``nodes`` identical nodes with the given per-node capacities."""
        if nodes <= 0:
            raise ConfigError(f"must be positive, got {nodes}", field="nodes")
        check_size(nodes, resources)
        names = tuple(resources)
        row = np.array([int(resources[r]) for r in names], dtype=np.int64)
        cap = np.tile(row, (nodes, 1))
        width = len(str(nodes - 1))
        node_names = tuple(f"n{i:0{width}d}" for i in range(nodes))
        return cls(resources=names, capacity=cap, node_names=node_names, name=name)

    def describe(self) -> dict[str, Any]:
        """A JSON-ready description (recorded in every result's configuration)."""
        distinct, counts = np.unique(self.capacity, axis=0, return_counts=True)
        return {
            "name": self.name,
            "nodes": self.n_nodes,
            "resources": list(self.resources),
            "total": dict(zip(self.resources, self.total.tolist(), strict=True)),
            "node_types": [
                {"count": int(c), **dict(zip(self.resources, row.tolist(), strict=True))}
                for row, c in zip(distinct, counts, strict=True)
            ],
            "groups": {g: len(v) for g, v in self.groups.items()},
            **({"queues": {k: q.describe() for k, q in self.queues.items()}}
               if self.queues else {}),
            **({"reservations": [r.describe() for r in self.reservations]}
               if self.reservations else {}),
            **({"power_model": self.power_table.describe()}
               if self.power_table is not None else {}),
        }

    def can_ever_host(self, req: Sequence[int] | IntArray) -> bool:
        """True when at least one node could host one unit asking ``req`` when empty."""
        r = np.asarray(req, dtype=np.int64)
        return bool((self.capacity >= r).all(axis=1).any())

    def max_units(self, req: Sequence[int] | IntArray) -> int:
        """How many units asking ``req`` the empty machine can host at once."""
        return int(units_fitting(self.capacity, np.asarray(req, dtype=np.int64)).sum())


def units_fitting(free: IntArray, req: IntArray) -> IntArray:
    """Per node, how many units asking ``req`` fit into ``free`` (nodes × resources).

    A single-resource request is answered from that column alone (a view when the
    request is 1), since it is asked on every placement attempt.
    """
    mask = req > 0
    n_asked = int(mask.sum())
    if n_asked == 0:
        raise ConfigError("a job unit must request at least one resource", field="req")
    if n_asked == 1:
        r = int(mask.argmax())
        q = int(req[r])
        return free[:, r] if q == 1 else free[:, r] // q
    return np.asarray((free[:, mask] // req[mask]).min(axis=1), dtype=np.int64)


def check_size(nodes: int, amounts: Mapping[str, int], where: str = "") -> None:
    """Refuse platforms beyond :data:`MAX_NODES` nodes or :data:`MAX_AMOUNT` per node."""
    if nodes > MAX_NODES:
        raise ConfigError(f"{nodes:,} nodes is more than the {MAX_NODES:,} this simulator "
                          "accepts", field=f"{where}nodes")
    for name, amount in amounts.items():
        if amount > MAX_AMOUNT:
            raise ConfigError(f"{amount:,} per node is more than the {MAX_AMOUNT:,} accepted",
                              field=f"{where}{name}")
