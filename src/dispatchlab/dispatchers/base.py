"""The dispatcher protocol every family implements (rule-based, CP, DARDIS, …).

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


class BaseDispatcher:
    """Convenience base: parameter storage, no-op reset and empty statistics.

    :attr:`reads_pricing` declares whether the dispatcher's decisions may depend on the
    inputs of a run's profit accounting.
    """

    name = "base"

    @property
    def reads_pricing(self) -> bool:
        """Whether the decisions may depend on the ambient temperature, the cooling model
        or the energy and core-hour prices (see :func:`reads_pricing`). False here: the
        dispatcher is simulated once and its schedule priced in every pricing scenario of
        an experiment. A family that plans with a cooling model or a temperature series
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


def reads_pricing(dispatcher: object) -> bool:
    """True when ``dispatcher`` declares that its decisions may depend on the pricing
    inputs (its ``reads_pricing`` is True); a dispatcher that declares nothing does not read
    them (none of them reaches the engine unless put in the run's scenario)."""
    return bool(getattr(dispatcher, "reads_pricing", False))


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
