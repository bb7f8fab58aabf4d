"""The rule-based dispatcher: a queue ordering × a selection scheme × an allocator.

The parts come from :mod:`~dispatchlab.dispatchers.rule_based.orderings`,
:mod:`~dispatchlab.dispatchers.rule_based.selection` and :mod:`~dispatchlab.dispatchers.allocators`;
a duration estimator (:mod:`dispatchlab.estimates`) tells planning schemes how long jobs
are expected to run (the requested time by default).
"""

from __future__ import annotations

from collections.abc import Sequence
from copy import copy
from typing import Any

import numpy as np

from dispatchlab.dispatchers.allocators import Allocator, get_allocator
from dispatchlab.dispatchers.base import BaseDispatcher
from dispatchlab.dispatchers.machine import Machine, NodeMachine, make_machine
from dispatchlab.dispatchers.rule_based.compiled_plan import policy_plan
from dispatchlab.dispatchers.rule_based.orderings import JobQueue, Ordering, get_ordering
from dispatchlab.dispatchers.rule_based.selection import Selection, get_selection
from dispatchlab.dispatchers.rule_based.selection.easy import Easy
from dispatchlab.dispatchers.rule_based.selection.strict import Strict
from dispatchlab.engine.capabilities import Capabilities
from dispatchlab.engine.compiled.plan import CompiledPlan
from dispatchlab.engine.decisions import Decision, Start
from dispatchlab.engine.events import WAKE_ON_ALL, WAKE_ON_END, WAKE_ON_SUBMIT, Events
from dispatchlab.engine.state import SystemView
from dispatchlab.estimates.base import DurationEstimator
from dispatchlab.estimates.registry import get_estimator
from dispatchlab.workload.workload import Workload


class Policy(BaseDispatcher):
    """Orders the queue, lets the selection scheme pick what starts, allocates nodes.

    Parts may be given as objects or by name (``Policy("sjf", "easy", "best-fit")``).
    """

    capabilities = Capabilities(family="rule-based")
    #: what must wake it at the next decision points (engine protocol), set by each call
    wakes_on = WAKE_ON_ALL

    def __init__(
        self,
        ordering: Ordering | str = "fifo",
        selection: Selection | str = "strict",
        allocator: Allocator | str = "first-fit",
        estimate: DurationEstimator | str = "walltime",
        *,
        name: str | None = None,
    ) -> None:
        self.ordering = get_ordering(ordering) if isinstance(ordering, str) else ordering
        self.selection = get_selection(selection) if isinstance(selection, str) else selection
        self.allocator = get_allocator(allocator) if isinstance(allocator, str) else allocator
        self.estimate = get_estimator(estimate) if isinstance(estimate, str) else estimate
        self.name = name or self._label()
        self._machine: Machine | None = None
        self._queue: JobQueue | None = None
        self._quiet = False  # may the engine skip calls (see _wakes)
        self._blocked_head_waits = False

    def _label(self) -> str:
        """The ``key=value`` spec that builds this combination."""
        label = (
            f"order={self.ordering.name},select={self.selection.name},alloc={self.allocator.name}"
        )
        if self.selection.depth is not None:
            label += f",depth={self.selection.depth}"
        if self.estimate.name != "walltime":
            label += f",estimate={self.estimate.name}"
        return label

    @property
    def oracle(self) -> bool:
        """True when the duration estimate reads actual run times (``estimate=real``)."""
        return bool(getattr(self.estimate, "oracle", False))

    def compiled_plan(self, workload: Workload, view: SystemView) -> CompiledPlan | str:
        """Its decisions as a compiled loop runs them, or why it cannot
        (:mod:`~dispatchlab.dispatchers.rule_based.compiled_plan`); a subclass changes the decisions
        and has none unless it offers its own."""
        if type(self) is not Policy:
            return f"dispatcher '{self.name}' is not a rule-based Policy"
        return policy_plan(self, workload, view)

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """Prepare every part for a run on ``view``."""
        self.rng = rng
        self.estimate.reset(view, rng)
        self.allocator.reset(view, rng)
        self._machine = make_machine(view, self.allocator, self.estimate,
                                     nodes=self.selection.needs_nodes(view))
        self._queue = JobQueue(self.ordering)
        self._queue.reset(view, rng)
        self.selection.reset(view, rng)
        by_index = self.ordering.by_arrival and not self.ordering.dynamic
        if isinstance(self.selection, Easy):  # its scan may index a queue kept by job index
            self.selection.by_index = by_index
        # calls may be skipped when ends are seen late without harm: the estimator learns
        # nothing from when they are seen, no operator rule applies, and the scheme does
        # not plan ahead (conservative's statistics count its compressions, one per call)
        self._quiet = (not self._machine.learns and view.rules is None
                       and not self.selection.plans_ahead)
        # a strict scheme on a queue kept by arrival: while the head waits, arrivals (behind
        # it) start nothing until something ends
        self._blocked_head_waits = by_index and type(self.selection) is Strict
        self.wakes_on = WAKE_ON_ALL

    def decide(self, view: SystemView, events: Events) -> Sequence[Decision]:
        """One decision point: update the queue, select, allocate."""
        machine, queue = self._machine, self._queue
        if machine is None or queue is None:
            raise RuntimeError(f"{self.name}: reset() was not called")
        machine.begin(view, events)
        if events.submitted:
            queue.add(view, events.submitted)
        if events.requeued:
            queue.add(view, events.requeued)
        if events.withdrawn:
            for j in events.withdrawn:
                queue.remove(j)
        if self.selection.idle_when_full and not (view.queue and machine.any_free()):
            if self._quiet:
                self.wakes_on = self._wakes(len(view.queue))
            return ()
        order = queue.order(view, self.estimate)
        if view.rules is not None:
            out = self._decide_under_rules(view, events, order, machine)
        else:
            out = self.selection.select(view, events, order, machine)
        started = 0
        for d in out:
            if type(d) is Start:
                queue.remove(d.job)
                started += 1
        if self._quiet:
            self.wakes_on = self._wakes(len(view.queue) - started)
        return out

    def waiting(self, view: SystemView) -> list[int]:
        """The jobs it holds queued, highest priority first, as its next call orders them
        (after a call: those it did not start)."""
        if self._queue is None:
            raise RuntimeError(f"{self.name}: reset() was not called")
        return list(self._queue.order(view, self.estimate))

    def _wakes(self, waiting: int) -> int:
        """What must wake it next, ``waiting`` jobs left queued: arrivals only when none
        is (ends then start nothing), ends only for a strict scheme whose head waits on a
        queue kept by arrival (arrivals queue behind it), else anything."""
        if not waiting:
            return WAKE_ON_SUBMIT
        return WAKE_ON_END if self._blocked_head_waits else WAKE_ON_ALL

    def _decide_under_rules(
        self, view: SystemView, events: Events, order: list[int], machine: Machine
    ) -> list[Decision]:
        """Operator rules apply: the selection sees regular jobs only (those eligible now,
        unless it plans ahead), reservation jobs start first-fit in priority order inside
        their reservation, heterogeneous jobs start whole."""
        rules = view.rules
        assert rules is not None and isinstance(machine, NodeMachine)
        now = view.now
        lead, res_of = rules.group_of, rules.job_res
        plans_ahead = self.selection.plans_ahead
        regular = [j for j in order if res_of[j] < 0 and lead.get(j, j) == j
                   and (plans_ahead or rules.eligible(j, now))]
        inside = [j for j in order if res_of[j] >= 0 and lead.get(j, j) == j
                  and rules.eligible(j, now)]
        seen = events
        if events.submitted and (rules.reservations or rules.components):
            seen = copy(events)
            seen.submitted = [j for j in events.submitted
                              if res_of[j] < 0 and lead.get(j, j) == j]
        out = self.selection.select(view, seen, regular, machine)
        for j in inside:
            if machine.fits(j):
                out.append(machine.start(j))
        out.extend(machine.take_companions())
        return out

    def run_stats(self) -> dict[str, Any]:
        """The selection scheme's statistics."""
        return self.selection.run_stats()
