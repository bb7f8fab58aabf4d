"""Algorithm 1 of Mejri et al. (2020) as an engine dispatcher: FIFO starts on as many
servers as a job takes, reconfigurations of running jobs onto idle servers, power-offs.

Each decision point (every event, or every ``poll`` seconds) it

1. starts queued jobs in submission order, each on ``min(max servers, idle servers)``
   servers, stopping at the first that does not get its minimum;
2. if reconfigurations are on, tries the running jobs by remaining mass (largest first in
   the paper, smallest first in the authors' code) and grows each onto
   ``min(max − n, idle)`` more idle servers when the configured condition holds;
3. if power-offs are on and the queue is empty (or, in the code's rule, spare servers
   remain), switches idle servers off when the power-off condition holds, for ``t1`` s with
   probability ``p_t1`` else ``t2`` (all together, or one by one as the code does), and
   switches them on again so that they are usable exactly ``t`` s later.

The dispatcher estimates a job's remaining mass from its request (``walltime`` on
``units`` units, as the paper's scheduler knows the mass) with the engine's work model; it
never reads actual run times. Node choice: the lowest-indexed idle servers (servers are
identical). :mod:`~dispatchlab.dispatchers.malleable.job_set_sim` reproduces its runs exactly.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from dispatchlab.dispatchers.base import BaseDispatcher
from dispatchlab.dispatchers.malleable.algorithm1 import (
    paper_reconfiguration_time,
    power_off_duration,
    wants_power_off,
    wants_reconfiguration,
)
from dispatchlab.dispatchers.malleable.config import GreedyConfig
from dispatchlab.engine.capabilities import Capabilities
from dispatchlab.engine.decisions import (
    Decision,
    PowerOff,
    PowerOn,
    Reconfigure,
    Start,
    WakeAt,
)
from dispatchlab.engine.events import Events
from dispatchlab.engine.state import SystemView
from dispatchlab.errors import ConfigError
from dispatchlab.platform.node_states import OFF, ON

if TYPE_CHECKING:
    from dispatchlab.engine.recorder import Recorder


class MalleableGreedy(BaseDispatcher):
    """The greedy scheduler with reconfigurations and power-offs (see the module doc)."""

    @property
    def capabilities(self) -> Capabilities:
        """No power cap (the greedy rules ignore it); power states when its setup switches
        servers off."""
        return Capabilities(family="malleable", fixed_power_cap=False,
                            varying_power_cap=False,
                            switches_power_states=self.config.power_off,
                            reshapes_malleable_jobs=self.config.reconfigure)

    name = "mejri-greedy"
    #: described as the configuration's entries
    merged_params = ("config",)

    def __init__(self, config: GreedyConfig | None = None, name: str | None = None):
        self.config = config or GreedyConfig()
        if config is not None and config.semantics.clock != "engine":
            raise ConfigError("the engine runs the 'engine' clock; the float clock runs in "
                              "the job-set simulation (dispatchers.malleable.job_set_sim)",
                              field="semantics")
        if name:
            self.name = name

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """Per-run state: idle servers, each running job's servers and work estimate."""
        self.rng = rng
        jobs = view.jobs
        self._lo = jobs.ints("min_units")
        self._hi = jobs.ints("max_units")
        self._alpha = jobs.ints("alpha")
        self._data = jobs.ints("data")
        self._wall = jobs.ints("walltime")
        self._units = jobs.ints("units")
        plat = view.platform
        self._n_srv = plat.n_nodes
        boot = plat.boot_time
        shut = plat.shutdown_time
        self._boot = int(boot.max()) if boot is not None and len(boot) else 0
        self._boot_of = [0] * plat.n_nodes if boot is None else boot.tolist()
        self._shutdown = int(shut.max()) if shut is not None and len(shut) else 0
        self._idle: list[int] = [n for n in range(plat.n_nodes) if view.node_state[n] == ON]
        self._nodes: dict[int, list[int]] = {}
        self._n: dict[int, int] = {}
        self._work_from: dict[int, int] = {}
        self._left: dict[int, float] = {}
        self._power_on: dict[int, list[int]] = {}
        self._wakes: set[int] = set()
        self.reconfigs = 0
        self.poweroffs = 0

    def decide(self, view: SystemView, events: Events) -> Sequence[Decision]:
        """Bookkeeping of what changed, then Algorithm 1 at a decision point."""
        t = view.now
        for j in events.left_running:
            del self._nodes[j], self._n[j], self._work_from[j], self._left[j]
        # idle servers from the view: on and unused (a server that left the machine is
        # DOWN, one switched back on within a decision is on without a node event)
        state = view.node_state
        idle = self._idle = np.flatnonzero(
            (state == ON) & (view.free == view.capacity).all(axis=1)).tolist()
        out: list[Decision] = []
        due = self._power_on.pop(t, None)
        if due:
            off = [n for n in due if state[n] == OFF]  # one that left stays down
            if off:
                out.append(PowerOn(tuple(off)))
                # without a boot delay they are on once this PowerOn is applied: usable by
                # the starts that follow it (no later node event would announce them)
                instant = [n for n in off if not self._boot_of[n]]
                if instant:
                    idle[:] = sorted(idle + instant)
        self._wakes.discard(t)
        poll = self.config.semantics.poll
        if poll > 0 and t % poll:
            self._wake(out, t + poll - t % poll)
            return out
        if idle:
            self._greedy(view, t, out)
        return out

    def _greedy(self, view: SystemView, t: int, out: list[Decision]) -> None:
        cfg = self.config
        idle = self._idle
        lo, hi = self._lo, self._hi
        queued = list(view.queue)
        started = 0
        for j in queued:
            n = min(hi[j], len(idle))
            if n < lo[j]:
                break
            nodes = idle[:n]
            del idle[:n]
            out.append(Start(j, np.array(nodes, dtype=np.int64), np.ones(n, dtype=np.int64)))
            self._nodes[j] = nodes
            self._n[j] = n
            self._work_from[j] = t
            self._left[j] = float(self._wall[j])
            started += 1
            if not idle:
                break
        if cfg.reconfigure and idle and self._n:
            self._reconfigure(t, out)
        if cfg.power_off and idle:
            self._power_off(t, queued[started:], out)

    def _remaining_mass(self, j: int, t: int) -> float:
        u, n = self._units[j], self._n[j]
        factor = 1.0 if n == u else (u / n) ** self._alpha[j]
        return (self._left[j] - max(0, t - self._work_from[j]) / factor) * u ** self._alpha[j]

    def _reconfigure(self, t: int, out: list[Decision]) -> None:
        cfg = self.config
        idle = self._idle
        keys = {j: self._remaining_mass(j, t) for j in self._n}
        if cfg.semantics.order == "largest-first":
            order = sorted(keys, key=lambda j: -keys[j])
        else:
            order = sorted(keys, key=lambda j: keys[j])
        for j in order:
            if not idle:
                break
            n, m_max = self._n[j], self._hi[j]
            if n >= m_max:
                continue
            k = min(m_max - n, len(idle))
            if not wants_reconfiguration(cfg, n + k, m_max, self._alpha[j], self._data[j]):
                continue
            new = idle[:k]
            del idle[:k]
            nodes = sorted(self._nodes.pop(j) + new)
            out.append(Reconfigure(j, np.array(nodes, dtype=np.int64),
                                   np.ones(len(nodes), dtype=np.int64)))
            self._bank(j, t, n + k)
            del self._n[j]  # re-inserted last: the order the engine's running jobs keep
            self._n[j] = n + k
            self._nodes[j] = nodes
            self.reconfigs += 1

    def _bank(self, j: int, t: int, m: int) -> None:
        """The engine's work model: work done so far banked, the pause charged."""
        n, u, a = self._n[j], self._units[j], self._alpha[j]
        factor = 1.0 if n == u else (u / n) ** a
        self._left[j] = max(0.0, self._left[j] - max(0, t - self._work_from[j]) / factor)
        d = self._data[j]
        pause = 0 if d <= 0 else math.ceil(paper_reconfiguration_time(d, n, m) - 1e-9)
        self._work_from[j] = t + pause

    def _power_off(self, t: int, queued: list[int], out: list[Decision]) -> None:
        cfg = self.config
        sem = cfg.semantics
        idle = self._idle
        need = sum(self._lo[j] for j in queued) if queued else 0
        if queued and (sem.poweroff_when == "queue-empty" or len(idle) <= need):
            return
        if sem.poweroff_scope == "all":
            if wants_power_off(cfg, len(idle), self._n_srv):
                self._switch_off(t, list(idle), power_off_duration(cfg, self.rng.random), out)
                idle.clear()
            return
        while idle and wants_power_off(cfg, len(idle), self._n_srv):
            if queued and len(idle) <= need:
                break
            node = idle.pop(0)
            self._switch_off(t, [node], power_off_duration(cfg, self.rng.random), out)

    def _switch_off(self, t: int, nodes: list[int], length: float, out: list[Decision]
                    ) -> None:
        """Off now, on again ``length`` s from now (rounded up to whole seconds, at least a
        shutdown, which takes 1 s or more here, and a boot)."""
        whole = max(math.ceil(length - 1e-9), self._boot + max(self._shutdown, 1))
        out.append(PowerOff(tuple(nodes)))
        self.poweroffs += len(nodes)
        on_at = t + whole - self._boot
        self._power_on.setdefault(on_at, []).extend(nodes)
        self._wake(out, on_at)

    def _wake(self, out: list[Decision], at: int) -> None:
        if at not in self._wakes:
            self._wakes.add(at)
            out.append(WakeAt(at))

    def run_stats(self) -> dict[str, Any]:
        """Reconfigurations and server power-offs of the run."""
        return {"reconfigurations": self.reconfigs, "power_offs": self.poweroffs}

    def run_summary(self, recorder: Recorder) -> dict[str, Any]:
        """The paper's ``malleable`` entry: cost, mean stretch, normalised power."""
        from dispatchlab.dispatchers.malleable.cost import run_metrics

        return {"malleable": run_metrics(recorder)}
