"""The dispatcher protocol: what the engine needs from any dispatcher.

At each decision point the engine calls :meth:`Dispatcher.decide` once with what happened
since the previous call and a read-only :class:`SystemView`; the dispatcher returns typed
decisions (see :mod:`dispatchlab.engine.decisions`). Constructors only store parameters;
:meth:`Dispatcher.reset` prepares per-run state.
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
