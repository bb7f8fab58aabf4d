"""Idle-node power-off around any dispatcher (``<dispatcher>+poweroff[:TIMEOUT]``).

The wrapped dispatcher decides as usual on the nodes that are on. Then, at each decision
point:

1. **Power on** — when jobs are still queued after its decisions, nodes that are off are
   switched on, cheapest boot first (lowest index on ties), until the nodes that are on and
   free, booting, or being switched on could host the first queued job that did not start
   (its units, node by node), first in the wrapped dispatcher's priority order (its
   ``waiting``; arrival order when it has none: powering on for a job its order does not
   start next could leave the queue waiting with nothing left to happen). They become
   usable after the platform's ``boot_time`` (a node with no boot delay is on at once,
   and the dispatcher is called again 1 s later); under a power cap a node is switched on
   only if its booting power fits on top of what the wrapped dispatcher's starts of this
   round add (the engine applies them first).
2. **Power off** — when nothing is queued, every node idle (on, hosting nothing, not
   given a job in this round) for at least ``timeout`` seconds (and at least 1 s, so never
   at the instant a job left it) is switched off (its ``shutdown_time``, then off); under a
   cap only if its shutting-down power fits.
3. A timer wakes the dispatcher when the next idle node reaches the timeout.

Nodes are never switched off while jobs wait, so a queued job (or an EASY reservation)
never loses nodes it waits for. Energy of transitions is the platform's booting and
shutting-down power over those delays (:mod:`dispatchlab.energy.accounting`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from dispatchlab.dispatchers.base import Dispatcher
from dispatchlab.engine.budget import EPS
from dispatchlab.engine.capabilities import Capabilities, capabilities_of
from dispatchlab.engine.compiled.plan import CompiledPlan, OffersCompiledPlan
from dispatchlab.engine.decisions import Decision, PowerOff, PowerOn, Start, WakeAt
from dispatchlab.engine.events import Events
from dispatchlab.engine.state import SystemView
from dispatchlab.errors import ConfigError
from dispatchlab.params import Parametrized
from dispatchlab.platform.node_states import BOOTING, OFF, ON, SHUTTING_DOWN
from dispatchlab.platform.platform import units_fitting
from dispatchlab.workload.workload import Workload

#: Default idle time before a node is switched off (s): 900 s, the FIFO-Poff setup of
#: Mejri et al. (2020) (a switch-off pays only after 362 s with SPEC §8's figures).
DEFAULT_TIMEOUT = 900


class IdlePowerOff(Parametrized):
    """``inner`` plus the power-off / power-on policy of this module."""

    def __init__(self, inner: Dispatcher, timeout: int = DEFAULT_TIMEOUT):
        if timeout < 0:
            raise ConfigError(f"power-off timeout must be ≥ 0 s, got {timeout}",
                              field="poweroff")
        if capabilities_of(inner).switches_power_states:
            raise ConfigError(f"'{inner.name}' already switches nodes off and on: "
                              "+poweroff cannot be added to it", field="dispatcher")
        self.inner, self.timeout = inner, int(timeout)
        self.name = f"{inner.name}+poweroff:{self.timeout}"
        self.oracle = bool(getattr(inner, "oracle", False))
        self.power_offs = self.power_ons = 0
        self._changed: list[int] = []

    @property
    def capabilities(self) -> Capabilities:
        """The inner dispatcher's, plus switching power states."""
        return replace(capabilities_of(self.inner), switches_power_states=True)

    @property
    def reads_pricing(self) -> bool:
        """As the inner dispatcher."""
        return capabilities_of(self.inner).reads_pricing

    def compiled_plan(self, workload: Workload, view: SystemView) -> CompiledPlan | str:
        """The inner dispatcher's compiled plan (strict, EASY or ``easy-power``; a static or
        dynamic ordering) carrying this timeout, run by the power-off loop
        (:mod:`~dispatchlab.dispatchers.rule_based.compiled.poweroff_loop`), or why there is
        none."""
        inner = self.inner
        if not isinstance(inner, OffersCompiledPlan):
            return f"dispatcher '{inner.name}' offers no compiled plan"
        plan = inner.compiled_plan(workload, view)
        if isinstance(plan, str):
            return plan
        if plan.selection not in ("strict", "easy", "easy-power"):
            return (f"+poweroff: the compiled loop takes strict and EASY selection only, not "
                    f"{plan.selection}")
        from dispatchlab.dispatchers.rule_based.compiled.poweroff_run import run_poweroff

        return replace(plan, power_off=self.timeout, run=run_poweroff)

    @property
    def engine_node_choice(self) -> bool:
        """Whether :meth:`choose_nodes` is the engine's default choice (the inner
        dispatcher chooses none): the compiled loops may then pick the nodes themselves."""
        return getattr(self.inner, "choose_nodes", None) is None

    def choose_nodes(self, view: SystemView, candidates: np.ndarray, count: int,
                     leaving: bool) -> list[int]:
        """The inner dispatcher's choice of the nodes that leave or come back (its risk
        order), else the engine's default: the highest indices leave, the lowest return."""
        hook = getattr(self.inner, "choose_nodes", None)
        if hook is not None:
            return [int(x) for x in hook(view, candidates, count, leaving)]
        return [int(x) for x in (candidates[-count:] if leaving else candidates[:count])]

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """Every node idle from the start."""
        self.inner.reset(view, rng)
        self._idle_since = np.full(view.platform.n_nodes, view.now, dtype=np.int64)
        self._was_idle = np.ones(view.platform.n_nodes, dtype=bool)
        self._changed = []
        self.power_offs = self.power_ons = 0

    def decide(self, view: SystemView, events: Events) -> Sequence[Decision]:
        """The inner decisions, then switch-ons, switch-offs and the next timer."""
        if self._changed:  # nodes this policy switched after the inner dispatcher decided
            events.nodes.extend(n for n in self._changed if n not in events.nodes)
            self._changed = []
        out = list(self.inner.decide(view, events))
        now = view.now
        taken = np.zeros(view.platform.n_nodes, dtype=bool)
        started: set[int] = set()
        starts: list[Start] = []
        for d in out:
            if type(d) is Start:
                taken[np.asarray(d.nodes)] = True
                started.add(d.job)
                starts.append(d)
        adds = self._starts_power(view, starts)
        state = view.node_state
        idle = (state == ON) & (view.free == view.capacity).all(axis=1) & ~taken
        self._idle_since[idle & ~self._was_idle] = now
        waiting = [j for j in self._order(view) if j not in started]
        if waiting:
            self._was_idle = idle
            out += self._power_on(view, waiting[0], taken, adds)
        else:
            wait = max(self.timeout, 1)  # never at the instant a job left the node
            due = np.flatnonzero(idle & (now - self._idle_since >= wait))
            off = self._fitting(view, due, SHUTTING_DOWN, adds)
            if off:
                out.append(PowerOff(tuple(off)))
                self.power_offs += len(off)
                self._changed += off
            idle[off] = False
            self._was_idle = idle
            pending = idle & (self._idle_since + wait > now)
            if pending.any():
                out.append(WakeAt(int((self._idle_since[pending] + wait).min())))
        return out

    def _power_on(self, view: SystemView, job: int, taken: np.ndarray,
                  adds: float) -> list[Decision]:
        """Switch on off nodes until the first waiting job could be hosted."""
        state = view.node_state
        off = np.flatnonzero(state == OFF)
        if not len(off):
            return []
        req = view.req[job]
        units = int(view.jobs.units[job])
        usable = np.where(taken[:, None], 0, view.free)
        coming = np.isin(state, (BOOTING,))
        have = int(units_fitting(usable, req).sum())
        have += int(units_fitting(view.capacity[coming], req).sum()) if coming.any() else 0
        if have >= units:
            return []
        boot = view.platform.boot_time
        order = off[np.lexsort((off, boot[off]))]  # type: ignore[index]
        fit = units_fitting(view.capacity[order], req)
        chosen = []
        for node, k in zip(order.tolist(), fit.tolist(), strict=True):
            if have >= units:
                break
            if k > 0:
                chosen.append(node)
                have += k
        chosen = self._fitting(view, np.array(chosen, dtype=np.int64), BOOTING, adds)
        if not chosen:
            return []
        self.power_ons += len(chosen)
        self._changed += chosen
        out: list[Decision] = [PowerOn(tuple(chosen))]
        if (boot[chosen] == 0).any():  # type: ignore[index]
            out.append(WakeAt(view.now + 1))  # on at once: decide again a second later
        return out

    def _order(self, view: SystemView) -> Sequence[int]:
        """The queued jobs in the wrapped dispatcher's priority order when it tells it
        (``waiting``), else in arrival order."""
        waiting = getattr(self.inner, "waiting", None)
        return waiting(view) if waiting is not None else list(view.queue)

    @staticmethod
    def _starts_power(view: SystemView, starts: list[Start]) -> float:
        """What the wrapped dispatcher's ``starts`` add to the IT power, in the order the
        engine applies them (0 without a power cap)."""
        meter = view.power_model
        if view.budget is None or not starts or not hasattr(meter, "start_delta"):
            return 0.0
        free = view.free.copy()
        total = 0.0
        for d in starts:
            total += meter.start_delta(d.job, d.nodes, d.counts, free)
            free[np.asarray(d.nodes)] -= np.asarray(d.counts)[:, None] * view.req[d.job]
        return total

    @staticmethod
    def _fitting(view: SystemView, nodes: np.ndarray, state: int, adds: float) -> list[int]:
        """The prefix of ``nodes`` whose move to ``state`` keeps within the power cap, on top
        of ``adds`` W the round's starts draw."""
        meter, budget = view.power_model, view.budget
        if budget is None or not hasattr(meter, "state_delta"):
            return [int(n) for n in nodes]
        left = budget.cap - budget.used - adds
        out: list[int] = []
        for node in np.asarray(nodes).tolist():
            p = meter.state_delta(node, state)
            if p > EPS and p > left + EPS:
                break
            left -= p
            out.append(node)
        return out

    def run_stats(self) -> dict[str, Any]:
        """The inner statistics plus the switch-offs and switch-ons decided."""
        return {**self.inner.run_stats(), "power_offs": self.power_offs,
                "power_ons": self.power_ons}


def parse_power_off(spec: str) -> tuple[str, int] | None:
    """``"<inner>+poweroff[:T]"`` → ``(inner, T)``; ``None`` when there is no suffix."""
    inner, sep, rest = spec.rpartition("+poweroff")
    if not sep:
        return None
    if rest and not rest.startswith(":"):
        raise ConfigError(f"expected <dispatcher>+poweroff[:SECONDS], got '{spec}'",
                          field="dispatcher")
    try:
        timeout = int(rest[1:]) if rest else DEFAULT_TIMEOUT
    except ValueError:
        raise ConfigError(f"power-off timeout must be whole seconds, got '{rest[1:]}'",
                          field="dispatcher") from None
    if not inner:
        raise ConfigError("name the dispatcher to wrap: <dispatcher>+poweroff[:SECONDS]",
                          field="dispatcher")
    return inner, timeout
