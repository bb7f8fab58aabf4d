"""The base every family builds on (rule-based, CP, DARDIS, …): parameters and
``describe()`` from the constructor (:class:`~dispatchlab.params.Parametrized`), no-op
reset; the protocol itself is the engine's
(:class:`~dispatchlab.engine.protocol.Dispatcher`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from dispatchlab.engine.decisions import Decision
from dispatchlab.engine.events import Events
from dispatchlab.engine.protocol import Dispatcher
from dispatchlab.engine.state import SystemView
from dispatchlab.params import Parametrized

if TYPE_CHECKING:
    from dispatchlab.engine.recorder import Recorder

__all__ = ["BaseDispatcher", "Dispatcher"]


class BaseDispatcher(Parametrized):
    """Convenience base: parameters and description from the constructor, no-op reset
    and empty statistics.

    :attr:`reads_pricing` declares whether the dispatcher's decisions may depend on the
    inputs of a run's profit accounting.
    """

    name = "base"

    @property
    def reads_pricing(self) -> bool:
        """Whether the decisions may depend on the ambient temperature, the cooling model
        or the energy and core-hour prices (a field of
        :class:`~dispatchlab.engine.capabilities.Capabilities`). False here: the dispatcher
        is simulated once and its schedule priced in every pricing scenario of an
        experiment. A family that plans with a cooling model or a temperature series
        returns True (for the settings that make it do so) and is simulated once per
        scenario."""
        return False

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """Nothing to prepare by default."""
        self.rng = rng

    def decide(self, view: SystemView, events: Events) -> Sequence[Decision]:
        """Subclasses decide."""
        raise NotImplementedError

    def run_stats(self) -> dict[str, Any]:
        """No statistics by default."""
        return {}

    def run_summary(self, recorder: Recorder) -> dict[str, Any]:
        """Entries the family adds to the run's summary (its own metrics); none here."""
        return {}
