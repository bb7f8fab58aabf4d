"""What happened since the dispatcher's previous call."""

from __future__ import annotations


class Events:
    """Job indices submitted and finished at the current decision point ``time``.

    ``killed`` is the subset of ``finished`` stopped at their wall-time; ``woken`` is true
    when a timer the dispatcher asked for fired or an operator rule changed (a queue
    window opened, a stop ended, a reservation started or ended). ``withdrawn`` lists
    queued jobs the engine removed (rejected: their reservation is over).
    """

    __slots__ = ("finished", "killed", "submitted", "time", "withdrawn", "woken")

    def __init__(self, time: int = 0):
        self.time = time
        self.submitted: list[int] = []
        self.finished: list[int] = []
        self.killed: list[int] = []
        self.withdrawn: list[int] = []
        self.woken = False

    def __repr__(self) -> str:
        return (f"Events(time={self.time}, submitted={self.submitted}, "
                f"finished={self.finished}, killed={self.killed}, withdrawn={self.withdrawn}, "
                f"woken={self.woken})")
