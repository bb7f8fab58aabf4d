"""Simulated seconds ↔ the workload's local wall-clock time, and daily start windows.

A workload with an absolute origin (``origin_unix``) and a time zone maps simulated
second ``t`` to the local date-time ``origin + t`` in that zone (daylight-saving changes
included). Without an origin, second 0 is taken as local midnight of a Monday (stated in
the results as ``time_origin = "assumed"``).
"""

from __future__ import annotations

from bisect import bisect_right
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from dispatchlab.errors import ConfigError
from dispatchlab.platform.queues import DailyWindow

_ASSUMED_DAY0 = date(1970, 1, 5)  # a Monday
_CHUNK_DAYS = 64


class Clock:
    """Converts between simulated seconds and local date-times of one workload."""

    def __init__(self, origin_unix: int | None, tz: str | None):
        self.assumed = origin_unix is None
        self.tz = ZoneInfo(tz) if tz else UTC
        if origin_unix is None:
            start = datetime.combine(_ASSUMED_DAY0, time(), tzinfo=self.tz)
            self.origin = int(start.timestamp())
        else:
            self.origin = int(origin_unix)

    def local(self, t: int) -> datetime:
        """Local date-time of simulated second ``t``."""
        return datetime.fromtimestamp(self.origin + t, self.tz)

    def seconds(self, day: date, offset: int) -> int:
        """Simulated second of local wall time ``day`` + ``offset`` seconds."""
        wall = datetime.combine(day, time(), tzinfo=self.tz) + timedelta(seconds=offset)
        return int(wall.timestamp()) - self.origin

    def parse(self, spec: int | str, where: str) -> int:
        """Seconds from an integer, or from a (local, unless zoned) ISO 8601 date-time."""
        if isinstance(spec, int):
            return spec
        if self.assumed:
            raise ConfigError(f"'{spec}' is a date-time, but the workload has no absolute "
                              "time origin; give seconds from its start instead", field=where)
        try:
            stamp = datetime.fromisoformat(spec)
        except ValueError:
            raise ConfigError(f"'{spec}' is not an ISO 8601 date-time", field=where) from None
        if stamp.tzinfo is None:
            stamp = stamp.replace(tzinfo=self.tz)
        return int(stamp.timestamp()) - self.origin


class WindowCalendar:
    """The union of daily windows as sorted open intervals, generated lazily."""

    def __init__(self, windows: tuple[DailyWindow, ...], clock: Clock):
        self.windows = windows
        self.clock = clock
        self.opens: list[int] = []
        self.closes: list[int] = []
        first = clock.local(0).date() - timedelta(days=1)
        self._next_day = first
        self._covered = -(1 << 62)
        self._extend(0)

    def _extend(self, t: int) -> None:
        """Generate intervals until they cover well past ``t``."""
        while self._covered < t + 2 * 86400:
            spans: list[tuple[int, int]] = []
            for k in range(_CHUNK_DAYS):
                day = self._next_day + timedelta(days=k)
                for w in self.windows:
                    if day.weekday() not in w.days:
                        continue
                    end_day = day + timedelta(days=1) if w.wraps else day
                    spans.append((self.clock.seconds(day, w.begin),
                                  self.clock.seconds(end_day, w.end)))
            self._next_day += timedelta(days=_CHUNK_DAYS)
            self._covered = self.clock.seconds(self._next_day, 0)
            spans.sort()
            for a, b in spans:
                if self.closes and a <= self.closes[-1]:
                    self.closes[-1] = max(self.closes[-1], b)
                else:
                    self.opens.append(a)
                    self.closes.append(b)

    def is_open(self, t: int) -> bool:
        """True when a window is open at ``t``."""
        self._extend(t)
        k = bisect_right(self.opens, t) - 1
        return k >= 0 and t < self.closes[k]

    def next_open(self, t: int) -> int:
        """The earliest ``t' ≥ t`` at which a window is open."""
        if self.is_open(t):
            return t
        k = bisect_right(self.opens, t)
        while k >= len(self.opens):
            self._extend(self._covered)
        return self.opens[k]

    def next_opening(self, t: int) -> int:
        """The first window opening strictly after ``t``."""
        self._extend(t)
        k = bisect_right(self.opens, t)
        while k >= len(self.opens):
            self._extend(self._covered)
        return self.opens[k]
