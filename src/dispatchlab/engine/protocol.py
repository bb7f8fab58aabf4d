"""The dispatcher protocol: what the engine needs from any dispatcher.

At each decision point the engine calls :meth:`Dispatcher.decide` once with what happened
since the previous call and a read-only :class:`SystemView`; the dispatcher returns typed
decisions (see :mod:`dispatchlab.engine.decisions`). Constructors only store parameters;
:meth:`Dispatcher.reset` prepares per-run state.

A dispatcher may let the engine skip calls whose answer cannot change: after each call it
leaves in an attribute ``wakes_on`` the bit flags of :mod:`dispatchlab.engine.events`
(``WAKE_ON_SUBMIT``, ``WAKE_ON_END``, ``WAKE_ON_ALL``) saying which of arrivals and job
ends must wake it at the next decision points (a strict FIFO whose head is blocked needs
ends only; a dispatcher with an empty queue, arrivals only); any other kind of event
always wakes it. The engine then still records the skipped points (time, samples) and
hands the skipped events to the next call, merged: :class:`Events` holds what happened
since the previous call. A dispatcher without the attribute is called at every point.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from dispatchlab.engine.decisions import Decision
from dispatchlab.engine.events import Events
from dispatchlab.engine.state import SystemView


@runtime_checkable
class Dispatcher(Protocol):
    """What the engine needs from a dispatcher."""

    name: str

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """Prepare for a new run on ``view``'s platform and workload."""

    def decide(self, view: SystemView, events: Events) -> Sequence[Decision]:
        """Decisions for time ``view.now``."""
        ...

    def describe(self) -> dict[str, Any]:
        """The configuration, JSON-ready (recorded with the results)."""
        ...

    def run_stats(self) -> dict[str, Any]:
        """Per-run statistics of the dispatcher itself (added to the summary)."""
        ...
