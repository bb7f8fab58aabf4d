"""What happened since the dispatcher's previous call."""

from __future__ import annotations

#: Kinds of the engine's timed events, in the order they are applied at one timestamp:
#: segment ends, node transitions (boot/shutdown done), scenario changes, operator-rule
#: changes, dispatcher timers. Submissions come after all of them.
END, NODE, SCENARIO, RULE, WAKE = 0, 1, 2, 3, 4

#: What must wake a dispatcher at its next decision points (bit flags it may leave in its
#: ``wakes_on`` attribute after each call; see :mod:`dispatchlab.engine.protocol`):
#: arrivals, jobs that finished, or anything (the default). Every other kind of event —
#: aborts, re-queues, withdrawals, node and scenario changes, timers — always wakes it.
WAKE_ON_SUBMIT, WAKE_ON_END = 1, 2
WAKE_ON_ALL = WAKE_ON_SUBMIT | WAKE_ON_END


class Events:
    """What changed since the dispatcher's previous call, up to the current decision point
    ``time`` (job and node indices; one point unless the dispatcher let the engine skip
    calls through its ``wakes_on`` flags).

    - ``submitted``: jobs that arrived; ``finished``: jobs that left the machine for good
      (completed, killed at their wall-time, cancelled, or aborted with no retry);
      ``killed``: the subset of ``finished`` stopped at their wall-time.
    - ``aborted``: running jobs stopped because a node they used left (or, under an
      over-cap policy other than ``wait``, because the power cap fell); those that the abort
      policy re-queues are also in ``requeued`` (they are queued again now), the others in
      ``finished``.
    - ``nodes``: nodes whose state changed (a node left or came back, finished booting or
      shutting down); ``scenario``: the scenario kinds that changed value
      (``view.env`` holds the new values).
    - ``woken``: a timer the dispatcher asked for fired, or an operator rule changed (a
      queue window opened, a stop ended, a reservation started or ended).
    - ``withdrawn``: queued jobs the engine removed (rejected: their reservation is over).
    """

    __slots__ = ("aborted", "finished", "killed", "nodes", "requeued", "scenario",
                 "submitted", "time", "withdrawn", "woken")

    def __init__(self, time: int = 0):
        self.time = time
        self.submitted: list[int] = []
        self.finished: list[int] = []
        self.killed: list[int] = []
        self.aborted: list[int] = []
        self.requeued: list[int] = []
        self.withdrawn: list[int] = []
        self.nodes: list[int] = []
        self.scenario: list[str] = []
        self.woken = False

    def wakes(self, flags: int) -> bool:
        """(engine) Whether these events must reach a dispatcher whose ``wakes_on`` is
        ``flags``: arrivals or ends it asked for, or any other kind of event."""
        if (self.submitted and flags & WAKE_ON_SUBMIT) or (self.finished and flags & WAKE_ON_END):
            return True
        return bool(self.aborted or self.requeued or self.withdrawn or self.nodes
                    or self.scenario or self.woken)

    @property
    def left_running(self) -> list[int]:
        """Jobs that stopped running at this point (finished or aborted)."""
        if not self.aborted:
            return self.finished
        seen = set(self.finished)
        return self.finished + [j for j in self.aborted if j not in seen]

    def __repr__(self) -> str:
        parts = [f"time={self.time}"]
        for name in ("submitted", "finished", "killed", "aborted", "requeued", "withdrawn",
                     "nodes", "scenario"):
            value = getattr(self, name)
            if value:
                parts.append(f"{name}={value}")
        if self.woken:
            parts.append("woken=True")
        return f"Events({', '.join(parts)})"
