"""What happened since the dispatcher's previous call."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class Events:
    """Job indices submitted and finished at the current decision point.

    ``killed`` is the subset of ``finished`` stopped at their wall-time; ``woken`` is true
    when a timer the dispatcher asked for fired.
    """

    time: int = 0
    submitted: list[int] = field(default_factory=list)
    finished: list[int] = field(default_factory=list)
    killed: list[int] = field(default_factory=list)
    woken: bool = False
