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

from dispatchlab.arrays import FloatArray, IntArray
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
#: The selection of a plan whose loop places every job itself, on whole nodes, and picks
#: the nodes that leave or come back at an ``alive_nodes`` row (no unit slots, no queue
#: ranks the engine reads): :mod:`~dispatchlab.engine.compiled.own_placement` hands it the
#: run's inputs with the scenario's rows as they are.
OWN_PLACEMENT = "own-placement"


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
    ``score``: a dynamic ordering's code, the dispatcher's own (0: the ordering is static,
    the ranks hold; else the loop orders the queue afresh at every decision), its per-job
    terms given by ``score_terms()`` (called only when the run goes compiled).
    ``power_off``: a wrapper switches nodes idle that many seconds off (and on again when
    jobs wait); -1: nodes stay on.
    A plan of selection :data:`OWN_PLACEMENT` places jobs itself (depth, ranks and
    estimates are its own business).
    """

    selection: str
    depth: int
    estimate: IntArray
    ranks: Callable[[], IntArray]
    run: RunCompiled
    score: int = 0
    score_terms: Callable[[], tuple[FloatArray, FloatArray]] | None = None
    power_off: int = -1
    allocator: str = "first-fit"  # or "energy-model" (not conservative: the vector loop)

    def __post_init__(self) -> None:
        if self.selection not in (*SELECTIONS, OWN_PLACEMENT):
            raise ValueError(f"compiled plan: unknown selection '{self.selection}' "
                             f"(known: {', '.join(SELECTIONS)})")


@runtime_checkable
class OffersCompiledPlan(Protocol):
    """A dispatcher that may run in a compiled loop."""

    def compiled_plan(self, workload: Workload, view: SystemView) -> CompiledPlan | str:
        """Its plan for ``workload`` (``view``: the engine's view of it, every job known),
        or why it has none."""
        ...
