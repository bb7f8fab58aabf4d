"""The power cap a dispatcher may plan with: the cap now, then the announced changes.

``power_cap`` is an announced scenario kind: ``view.scenario`` holds its future changes.
:func:`announced_caps` gives the cap in force at any future time — the value of the last
announced change after now and not after that time, else the cap now (changes up to now
are already in force).
"""

from __future__ import annotations

from bisect import bisect_right

from dispatchlab.engine.state import SystemView


class CapSchedule:
    """The cap in force at future times (a step function from now on)."""

    __slots__ = ("now_cap", "times", "values")

    def __init__(self, now_cap: float, times: list[int], values: list[float]):
        self.now_cap = now_cap
        self.times = times
        self.values = values

    def __call__(self, t: int) -> float:
        """The cap in force at ``t`` (≥ now)."""
        k = bisect_right(self.times, t) - 1
        return self.values[k] if k >= 0 else self.now_cap

    def lowest(self, t0: int, t1: int) -> float:
        """The lowest cap in force over ``[t0, t1)``."""
        low = self(t0)
        k = bisect_right(self.times, t0)
        while k < len(self.times) and self.times[k] < t1:
            low = min(low, self.values[k])
            k += 1
        return low


def announced_caps(view: SystemView, now_cap: float) -> CapSchedule:
    """The cap schedule from ``view.now`` on: ``now_cap``, then the announced changes."""
    scen = view.scenario
    if scen is None or "power_cap" not in scen.kinds():
        return CapSchedule(now_cap, [], [])
    times, values = scen.steps("power_cap")
    later = times > view.now
    return CapSchedule(now_cap, times[later].tolist(), values[later].tolist())
