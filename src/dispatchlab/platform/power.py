"""Node power model: what each node draws in each state and, when on, for what it runs.

A powered-on node draws ``idle`` W plus, for what jobs use on it::

    core_first + (cores − 1) · core      when at least one core is in use (else 0)
    + gpus · gpu + mics · mic

so the first active core costs more than the next ones (the non-linear shape of Borghesi et
al. 2015, §3: "the first activation of a core in a node causes greater power consumption").
A node that is off, booting, shutting down or down draws ``off``, ``booting``,
``shutting_down`` or ``down`` W; booting takes ``boot_time`` s and shutting down
``shutdown_time`` s.

Defaults and their sources (see docs/power.md):

- :data:`GENERIC` — SPEC §8 (Mejri et al. 2020, Table 1): idle 95 W, busy 190.74 W (the
  first core brings the node to busy: ``core_first`` = 95.74 W, ``core`` = 0), off 9.75 W,
  booting 125.17 W for 151.52 s, shutting down 101 W for 6.10 s.
- :data:`EURORA` — the Eurora constants of the paper authors' simulator PA-HPC-SIM
  (``CPU_IDLE`` 20 W per socket, ``GPU_IDLE`` 12 W per GPU, ``CPU_21`` 20 W when a socket
  becomes active plus ``COEFF_ANG`` 6.25 W per active core, ``GPU_ACTIVE`` 50 W, ``MIC``
  115 W); the paper states the shape, not the figures. Idle node: 2 × 20 W + 12 W per
  installed GPU. States other than on: the generic values (Eurora's are not published).

Platform TOML files set any value per node group (``[nodes.power_model]``); times are
rounded up to whole seconds on the platform (``boot_time`` / ``shutdown_time``), and the
energy of a transition is its state power × that whole-second delay.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

import numpy as np

from dispatchlab.arrays import FloatArray, IntArray
from dispatchlab.errors import ConfigError
from dispatchlab.platform.node_states import BOOTING, DOWN, OFF, ON, SHUTTING_DOWN
from dispatchlab.platform.tables import checked_table

#: Longest boot or shutdown delay (s): one year (1e30 s overflowed the engine's clock).
MAX_DELAY_S = 365 * 86400


@dataclass(frozen=True)
class NodePowerSpec:
    """The power figures of one kind of node (W, and s for the delays)."""

    idle: float = 95.0
    core_first: float = 95.74
    core: float = 0.0
    gpu: float = 0.0
    mic: float = 0.0
    off: float = 9.75
    booting: float = 125.17
    shutting_down: float = 101.0
    down: float = 0.0
    boot_time: float = 151.52
    shutdown_time: float = 6.10
    source: str = "SPEC §8 (Mejri et al. 2020, Table 1)"

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name != "source" and not (isinstance(v, int | float) and math.isfinite(v)
                                           and v >= 0):
                raise ConfigError(f"must be a finite number ≥ 0, got {v!r}", field=f.name)
        for name in ("boot_time", "shutdown_time"):
            if getattr(self, name) > MAX_DELAY_S:
                raise ConfigError(f"must be at most {MAX_DELAY_S:,} s (one year), got "
                                  f"{getattr(self, name):g}", field=name)

    def busy(self, cores: int, gpus: int = 0, mics: int = 0) -> float:
        """W of an on node with this much in use."""
        core_w = (self.core_first + (cores - 1) * self.core) if cores > 0 else 0.0
        return self.idle + core_w + gpus * self.gpu + mics * self.mic


#: SPEC §8 generic node.
GENERIC = NodePowerSpec()


def eurora_spec(gpus: int) -> NodePowerSpec:
    """A Eurora node (2 octa-core sockets) with ``gpus`` installed GPUs (PA-HPC-SIM figures).

    The first active core wakes a socket (``CPU_21`` 20 W) on top of its own 6.25 W; the
    model is per node, so the second socket's 20 W is folded into the per-core slope by
    neither the paper nor this model (documented simplification).
    """
    return NodePowerSpec(idle=2 * 20.0 + 12.0 * gpus, core_first=20.0 + 6.25, core=6.25,
                         gpu=50.0, mic=115.0,
                         source="PA-HPC-SIM Eurora constants (CPU_IDLE, GPU_IDLE, CPU_21, "
                                "COEFF_ANG, GPU_ACTIVE, MIC); other states SPEC §8")


#: Keys of a ``[nodes.power_model]`` table.
SPEC_KEYS = tuple(f.name for f in fields(NodePowerSpec) if f.name != "source")


def parse_spec(doc: object, where: str, source: str | None,
               base: NodePowerSpec = GENERIC) -> NodePowerSpec:
    """A spec from a TOML table: ``base`` with the given values replaced."""
    if isinstance(doc, str):
        if doc == "generic":
            return GENERIC
        raise ConfigError(f"unknown power model '{doc}' (a table of values, or 'generic')",
                          field=where, source=source)
    table = checked_table(doc, SPEC_KEYS, where=where, source=source,
                          what="a table of power values")
    values: dict[str, Any] = {}
    for k, v in table.items():
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) \
                or v < 0:
            raise ConfigError(f"must be a finite number ≥ 0, got {v!r}",
                              field=f"{where}.{k}", source=source)
        if k in ("boot_time", "shutdown_time") and v > MAX_DELAY_S:
            raise ConfigError(f"must be at most {MAX_DELAY_S:,} s (one year), got {v:g}",
                              field=f"{where}.{k}", source=source)
        values[k] = float(v)
    return replace(base, **values, source=f"{source or 'file'}: {where}")


@dataclass(frozen=True, eq=False)
class NodePowerTable:
    """One :class:`NodePowerSpec` per node as arrays, with the platform's resource columns.

    ``power(nodes, state, usage)`` is the vectorised model the energy accounting integrates;
    ``node_power(node, state, usage_row)`` the scalar one the engine keeps up to date.
    """

    specs: tuple[NodePowerSpec, ...]
    resources: tuple[str, ...]

    def __post_init__(self) -> None:
        arr = {name: np.array([getattr(s, name) for s in self.specs], dtype=np.float64)
               for name in SPEC_KEYS}
        object.__setattr__(self, "_arr", arr)
        col = {r: i for i, r in enumerate(self.resources)}
        object.__setattr__(self, "_cols", (col.get("cores"), col.get("gpu"), col.get("mic")))

    def __getitem__(self, name: str) -> FloatArray:
        """Per-node array of one figure (``idle``, ``booting``, ...)."""
        return self._arr[name]  # type: ignore[attr-defined]

    @property
    def n_nodes(self) -> int:
        """Number of nodes."""
        return len(self.specs)

    def state_table(self) -> FloatArray:
        """nodes × 5 array: W per node in states ON (idle), OFF, BOOTING, SHUTTING_DOWN, DOWN
        (the column order of :mod:`dispatchlab.platform.node_states`)."""
        out = np.zeros((self.n_nodes, max(ON, OFF, BOOTING, SHUTTING_DOWN, DOWN) + 1))
        for k, name in ((ON, "idle"), (OFF, "off"), (BOOTING, "booting"),
                        (SHUTTING_DOWN, "shutting_down"), (DOWN, "down")):
            out[:, k] = self[name]
        return out

    def active(self, nodes: IntArray, usage: IntArray) -> FloatArray:
        """W above idle of ``nodes[k]`` with ``usage[k]`` in use (vectorised)."""
        c, g, m = self._cols  # type: ignore[attr-defined]
        out = np.zeros(len(nodes))
        if c is not None:
            cores = usage[:, c].astype(np.float64)
            out += np.where(cores > 0, self["core_first"][nodes]
                            + (cores - 1) * self["core"][nodes], 0.0)
        if g is not None:
            out += usage[:, g] * self["gpu"][nodes]
        if m is not None:
            out += usage[:, m] * self["mic"][nodes]
        return out

    def power(self, nodes: IntArray, state: IntArray, usage: IntArray) -> FloatArray:
        """W drawn by ``nodes[k]`` in ``state[k]`` with ``usage[k]`` in use."""
        base = self.state_table()[nodes, state]
        return np.asarray(np.where(state == ON, base + self.active(nodes, usage), base),
                          dtype=np.float64)

    def node_power(self, node: int, state: int, usage: IntArray) -> float:
        """W of one node (scalar twin of :meth:`power`)."""
        return float(self.power(np.array([node]), np.array([state]),
                                np.asarray(usage).reshape(1, -1))[0])

    def describe(self) -> dict[str, object]:
        """The distinct specs and how many nodes use each."""
        distinct: dict[NodePowerSpec, int] = {}
        for s in self.specs:
            distinct[s] = distinct.get(s, 0) + 1
        return {"name": "node-model",
                "kinds": [{"count": c, **asdict(s)} for s, c in distinct.items()]}


def delays(specs: tuple[NodePowerSpec, ...]) -> tuple[IntArray, IntArray]:
    """Boot and shutdown delays per node, rounded up to whole seconds."""
    boot = np.array([math.ceil(s.boot_time - 1e-9) for s in specs], dtype=np.int64)
    down = np.array([math.ceil(s.shutdown_time - 1e-9) for s in specs], dtype=np.int64)
    return boot, down
