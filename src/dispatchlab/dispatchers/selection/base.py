"""The selection-scheme interface: which queued jobs start now, given an ordered queue."""

from __future__ import annotations

from typing import Any

from dispatchlab.dispatchers.machine import Machine
from dispatchlab.engine.decisions import Decision
from dispatchlab.engine.events import Events
from dispatchlab.engine.state import SystemView


class Selection:
    """Base class. ``depth`` (when the scheme has one) limits how far past the first job
    that cannot start it looks: only the first ``depth`` queued jobs from there on count.
    """

    name = "selection"
    depth: int | None = None

    def reset(self, machine: Machine) -> None:
        """Per-run state; nothing by default."""

    def select(
        self, view: SystemView, events: Events, order: list[int], machine: Machine
    ) -> list[Decision]:
        """Start decisions (and plans) for ``view.now``; ``order`` is the queue by priority."""
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        """JSON-ready configuration."""
        out: dict[str, Any] = {"name": self.name}
        if self.depth is not None:
            out["depth"] = self.depth
        return out


def check_depth(depth: int | None) -> int | None:
    """Validate a depth limit (``None`` = the whole queue)."""
    if depth is not None and depth < 1:
        from dispatchlab.errors import ConfigError

        raise ConfigError(f"depth must be at least 1, got {depth}", field="depth")
    return depth
