"""The machine's IT power, kept exact at every event: what the power cap is checked against.

IT power = Σ over nodes of the node part + Σ over running jobs of the job part:

- **node model** (the platform's :class:`~dispatchlab.platform.power.NodePowerTable`, jobs
  draw through it): node part = the model's power for the node's state and what is in use
  on it (idle, first core, further cores, GPUs, MICs; off, booting, shutting down); job part
  0. A start raises the power of its nodes by their marginal increase (a job that lands on
  an idle node pays the costlier first core).
- **job power** (a per-job column or a prediction file, :class:`PowerModel`): job part = the
  job's power; node part = the state power of nodes that are not on, and the idle power of
  on nodes that host no job (``count_idle``; a busy node's power is in its jobs' figures).
  Without a platform model or with ``count_idle=False`` the node part is 0 (PA-HPC-SIM).

``count_idle=False`` with the node model counts the active part only (what jobs add above
idle), every node state drawing 0.

Both count idle power as Borghesi et al. (2015) §3 do: "the sum of all the power consumed by
the running jobs plus the sum of power values related to idle resources must never exceed
the given limit". :meth:`start_delta` is what a start adds; the engine refuses it when the
result exceeds the cap, and :meth:`refresh` re-reads nodes after any change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from dispatchlab.arrays import IntArray
from dispatchlab.platform.node_states import ON
from dispatchlab.platform.power import NodePowerTable

if TYPE_CHECKING:
    from dispatchlab.engine.budget import PowerModel
    from dispatchlab.engine.state import SystemView


#: Placements on more nodes than this are costed with numpy, smaller ones node by node.
_VECTOR_FROM = 8


class MachinePower:
    """Per-node power of the live machine plus the running jobs' own power."""

    def __init__(self, view: SystemView, req: npt.NDArray[np.int64],
                 table: NodePowerTable | None, jobs: PowerModel | None,
                 count_idle: bool = True):
        self.view, self.req, self.jobs = view, req, jobs
        self.table = table if (jobs is None or count_idle) else None
        self.node_mode = jobs is None
        self.count_idle = count_idle
        if self.table is not None:
            st = self.table.state_table()
            self._state_w: list[list[float]] = st.tolist()
            self._idle: list[float] = st[:, ON].tolist()
            self._first: list[float] = self.table["core_first"].tolist()
            self._core: list[float] = self.table["core"].tolist()
            self._gpu: list[float] = self.table["gpu"].tolist()
            self._mic: list[float] = self.table["mic"].tolist()
            res = list(view.platform.resources)
            self._cols = tuple(res.index(r) if r in res else -1 for r in ("cores", "gpu", "mic"))
        n = view.platform.n_nodes
        self.node_w: list[float] = [self._node_w(k) for k in range(n)]
        self.nodes_total = float(sum(self.node_w))

    def _w(self, node: int, state: int, used: IntArray) -> float:
        """W of ``node`` in ``state`` with ``used`` in use (node part only)."""
        if self.table is None:
            return 0.0
        if state != ON:
            return self._state_w[node][state] if self.count_idle else 0.0
        if not self.node_mode:
            return self._idle[node] if not used.any() else 0.0
        c, g, m = self._cols
        return self._on_w(node, int(used[c]) if c >= 0 else 0, int(used[g]) if g >= 0 else 0,
                          int(used[m]) if m >= 0 else 0)

    def _on_w(self, node: int, cores: int, gpus: int, mics: int) -> float:
        """W of ``node``, on, with ``cores``, ``gpus`` and ``mics`` in use (node model)."""
        c, g, m = self._cols
        w = self._idle[node] if self.count_idle else 0.0
        if c >= 0 and cores > 0:
            w += self._first[node] + (cores - 1) * self._core[node]
        if g >= 0:
            w += gpus * self._gpu[node]
        if m >= 0:
            w += mics * self._mic[node]
        return w

    def _used(self, node: int, free: IntArray) -> tuple[int, int, int]:
        """Cores, GPUs and MICs in use on ``node`` given ``free`` (Python ints: a node's
        figures without numpy's per-row arrays)."""
        cap = self.view.capacity
        c, g, m = self._cols
        return (int(cap[node, c]) - int(free[node, c]) if c >= 0 else 0,
                int(cap[node, g]) - int(free[node, g]) if g >= 0 else 0,
                int(cap[node, m]) - int(free[node, m]) if m >= 0 else 0)

    def _node_w(self, node: int) -> float:
        view = self.view
        state = int(view.node_state[node])
        if state == ON and self.node_mode and self.table is not None:
            return self._on_w(node, *self._used(node, view.free))
        return self._w(node, state, view.capacity[node] - view.free[node])

    def job_part(self, job: int, nodes: IntArray, counts: IntArray) -> float:
        """The job's own power (job-power mode), 0 in node mode."""
        return 0.0 if self.jobs is None else float(self.jobs.job_power(job, nodes, counts))

    def start_delta(self, job: int, nodes: IntArray, counts: IntArray,
                    free: IntArray | None = None) -> float:
        """How much the IT power rises if ``job`` starts now on ``nodes`` × ``counts``, from
        the live free capacity or from ``free`` (other starts planned first)."""
        out = self.job_part(job, nodes, counts)
        if self.table is None:
            return out
        view, req = self.view, self.req[job]
        cap, now = view.capacity, view.free if free is None else free
        state = view.node_state
        if len(nodes) > _VECTOR_FROM and (state[nodes] == ON).all():
            nodes = np.asarray(nodes, dtype=np.int64)
            used = cap[nodes] - now[nodes]
            if self.node_mode:
                new = used + np.asarray(counts, dtype=np.int64)[:, None] * req
                return out + float((self.table.active(nodes, new)
                                    - self.table.active(nodes, used)).sum())
            empty = ~used.any(axis=1)
            return out - float(self.table["idle"][nodes[empty]].sum())
        if self.node_mode:  # on nodes: integer usage, the same float operations as _w
            c, g, m = self._cols
            rc, rg, rm = (int(req[c]) if c >= 0 else 0, int(req[g]) if g >= 0 else 0,
                          int(req[m]) if m >= 0 else 0)
        for node, k in zip(np.asarray(nodes).tolist(), np.asarray(counts).tolist(),
                           strict=True):
            s = int(state[node])
            if s == ON and self.node_mode:
                uc, ug, um = self._used(node, now)
                out += (self._on_w(node, uc + k * rc, ug + k * rg, um + k * rm)
                        - self._on_w(node, uc, ug, um))
                continue
            used = cap[node] - now[node]
            out += self._w(node, s, used + k * req) - self._w(node, s, used)
        return out

    def unit_floor(self, req: IntArray) -> float:
        """A lower bound of what each unit asking ``req`` adds to the IT power wherever it
        starts (a job of ``u`` such units adds at least ``u`` times it); 0 when jobs draw
        their own power (their start may lift a node's idle power off the total).

        On a node of ``C`` cores, ``k`` units of ``c`` cores each landing on it idle add
        ``first + (k·c − 1)·core`` (per unit the least at ``k = 1`` or ``k = C // c``); on
        a node already in use (possible only when ``C > c``) ``c·core`` each; GPUs and MICs
        add their own power per unit."""
        if self.table is None or not self.node_mode:
            return 0.0
        c, g, m = self._cols
        cores = int(req[c]) if c >= 0 else 0
        gpus = int(req[g]) if g >= 0 else 0
        mics = int(req[m]) if m >= 0 else 0
        capacity = self.view.capacity
        best = float("inf")
        for node in range(len(self._idle)):
            w = gpus * self._gpu[node] + mics * self._mic[node]
            if cores:
                first, core = self._first[node], self._core[node]
                most = max(int(capacity[node, c]) // cores, 1)
                per_unit = min(first + (cores - 1) * core,
                               (first + (most * cores - 1) * core) / most)
                if capacity[node, c] > cores:
                    per_unit = min(per_unit, cores * core)
                w += per_unit
            best = min(best, w)
        return best if best < float("inf") else 0.0

    def nodes_power(self, free: IntArray) -> float:
        """The node part of the IT power if the nodes had ``free`` capacity (states as now)."""
        if self.table is None:
            return 0.0
        view = self.view
        n = np.arange(len(free))
        used = view.capacity - free
        state = view.node_state.astype(np.int64)
        if self.node_mode:
            if not self.count_idle:
                return float(np.where(state == ON, self.table.active(n, used), 0.0).sum())
            return float(self.table.power(n, state, used).sum())
        base = self.table.state_table()[n, state]
        busy = (state == ON) & (used > 0).any(axis=1)
        return float(np.where(busy, 0.0, base).sum())

    def state_delta(self, node: int, state: int) -> float:
        """How much the IT power rises if idle ``node`` enters ``state`` now (a node that is
        not on hosts nothing: its zero free capacity is not usage)."""
        view = self.view
        used = (view.capacity[node] - view.free[node] if view.node_state[node] == ON
                else np.zeros_like(view.capacity[node]))
        return self._w(node, state, used) - self.node_w[node]

    def job_power(self, job: int, nodes: IntArray, counts: IntArray) -> float:
        """What a start would add (``view.power_of``: the dispatchers' question)."""
        return self.start_delta(job, nodes, counts)

    def refresh(self, nodes: object) -> float:
        """Re-read ``nodes`` after their state or usage changed; the change of the total."""
        if self.table is None:
            return 0.0
        delta = 0.0
        for node in np.asarray(nodes, dtype=np.int64).reshape(-1).tolist():
            w = self._node_w(node)
            delta += w - self.node_w[node]
            self.node_w[node] = w
        self.nodes_total += delta
        return delta

    def describe(self) -> dict[str, object]:
        """Where job power comes from and whether idle power counts."""
        src: dict[str, object] = ({"name": "node-model"} if self.jobs is None
                                  else dict(self.jobs.describe()))
        return {**src, "idle_counted": self.table is not None and self.count_idle}
