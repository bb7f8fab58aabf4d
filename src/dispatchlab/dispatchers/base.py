"""The base every family builds on (rule-based, CP, DARDIS, …): parameter storage,
``describe()``, no-op reset; the protocol itself is the engine's
(:class:`~dispatchlab.engine.protocol.Dispatcher`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from dispatchlab.engine.decisions import Decision
from dispatchlab.engine.events import Events
from dispatchlab.engine.protocol import Dispatcher
from dispatchlab.engine.state import SystemView

if TYPE_CHECKING:
    from dispatchlab.engine.recorder import Recorder

__all__ = ["BaseDispatcher", "Dispatcher"]


class BaseDispatcher:
    """Convenience base: parameter storage, no-op reset and empty statistics.

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

    def describe(self) -> dict[str, Any]:
        """Name plus public constructor parameters."""
        params = {k: v for k, v in vars(self).items() if not k.startswith("_") and k != "rng"}
        return {"name": self.name, **{k: _jsonable(v) for k, v in params.items()}}

    def run_stats(self) -> dict[str, Any]:
        """No statistics by default."""
        return {}

    def run_summary(self, recorder: Recorder) -> dict[str, Any]:
        """Entries the family adds to the run's summary (its own metrics); none here."""
        return {}


def _jsonable(value: Any) -> Any:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if hasattr(value, "describe"):
        return value.describe()
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return repr(value)
