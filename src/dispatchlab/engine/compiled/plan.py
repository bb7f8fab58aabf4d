"""What a dispatcher offers the compiled loops: its compiled plan.

The engine knows no dispatcher class. A dispatcher whose decisions a compiled loop
reproduces exactly offers them through :class:`OffersCompiledPlan`: given the workload and
the engine's view of it it returns a :class:`CompiledPlan` (its selection, each job's rank in
its queue ordering and its duration estimate, and the callable that runs the compiled loop)
or the reason it has none. The engine adds what the run itself asks (the machine, power caps,
scenarios: :mod:`~dispatchlab.engine.compiled.eligibility`) and calls the plan's ``run``
(:func:`~dispatchlab.engine.compiled.select.run_loop`) without naming a loop.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from dispatchlab.arrays import IntArray
from dispatchlab.engine.recorder import Recorder
from dispatchlab.engine.simulator import Simulator
from dispatchlab.engine.state import SystemView
from dispatchlab.workload.workload import Workload

if TYPE_CHECKING:
    from dispatchlab.engine.compiled.eligibility import SlotRun

#: Runs a compiled loop on the simulation and the engine's inputs; a string says why the
#: general loop must run it after all.
RunCompiled = Callable[[Simulator, "SlotRun"], Recorder | str]

#: The selection loops compiled.
SELECTIONS = ("strict", "easy", "easy-power", "conservative", "nonstrict")


@dataclass(frozen=True)
class CompiledPlan:
    """A dispatcher's decisions as the compiled loops take them.

    ``selection``: one of :data:`SELECTIONS` (``easy-power``: EASY whose reservation under a
    power cap holds in power too); ``depth``: EASY's backfill depth (-1: no
    limit; the conservative loop takes none); ``estimate``: each job's duration estimate (s,
    at least 1); ``ranks()``: each job's position in the queue ordering (computed only when
    the run goes compiled); ``run(sim, inputs)``: the dispatcher's compiled loop, given the
    engine's inputs (:class:`~dispatchlab.engine.compiled.eligibility.SlotRun`), returning
    the filled :class:`~dispatchlab.engine.recorder.Recorder` or why it could not finish.
    """

    selection: str
    depth: int
    estimate: IntArray
    ranks: Callable[[], IntArray]
    run: RunCompiled
    allocator: str = "first-fit"  # or "energy-model" (strict and non-strict: the vector loop)

    def __post_init__(self) -> None:
        if self.selection not in SELECTIONS:
            raise ValueError(f"compiled plan: unknown selection '{self.selection}' "
                             f"(known: {', '.join(SELECTIONS)})")


@runtime_checkable
class OffersCompiledPlan(Protocol):
    """A dispatcher that may run in a compiled loop."""

    def compiled_plan(self, workload: Workload, view: SystemView) -> CompiledPlan | str:
        """Its plan for ``workload`` (``view``: the engine's view of it, every job known),
        or why it has none."""
        ...
