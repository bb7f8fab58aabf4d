"""Queue definitions an operator configures: limits, start windows, stops, node sets.

A queue's *start windows* are local times of day (optionally restricted to weekdays) at
which its jobs may start — Eurora's ``np_longpar`` starts only between 18:00 and 08:00.
*Stopped* intervals are periods in which the queue's jobs may not start (an operator ran
``qstop``/``qstart``). *Node restrictions* limit the queue to some nodes (node names or
group labels). *Limits* are checked once, at submission: a job that breaks one is
rejected with a reason, never left waiting.

Times in stopped intervals are seconds relative to the workload's origin (integers) or
local ISO 8601 date-times (``"2014-04-01T09:00"``), resolved against the workload's time
zone when the simulation starts.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dispatchlab.errors import ConfigError
from dispatchlab.params import given
from dispatchlab.platform.tables import checked_table

#: Keys a queue table may hold.
QUEUE_KEYS = ("ewt", "priority", "max_units", "max_nodes", "max_walltime", "max_total",
              "windows", "stopped", "nodes")

_DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_WINDOW = re.compile(
    r"^\s*(?:(?P<days>[a-z]{3}(?:\s*[-,]\s*[a-z]{3})*)\s+)?"
    r"(?P<h0>\d{1,2}):(?P<m0>\d{2})\s*-\s*(?P<h1>\d{1,2}):(?P<m1>\d{2})\s*$"
)

TimeSpec = int | str


@dataclass(frozen=True)
class DailyWindow:
    """Start allowed from ``begin`` to ``end`` (seconds after local midnight) on ``days``.

    ``end <= begin`` wraps past midnight (``18:00-08:00``); the window then belongs to the
    day it opens on. ``days`` are weekday numbers (Monday = 0).
    """

    begin: int
    end: int
    days: frozenset[int] = frozenset(range(7))
    text: str = ""

    @classmethod
    def parse(cls, text: str, where: str = "windows") -> DailyWindow:
        """Parse ``"[days ]HH:MM-HH:MM"``, days like ``mon-fri`` or ``sat,sun``."""
        m = _WINDOW.match(text.lower())
        if m is None:
            raise ConfigError(f"'{text}' is not a window like '18:00-08:00' or "
                              f"'mon-fri 08:00-18:00'", field=where)
        h0, m0, h1, m1 = (int(m.group(k)) for k in ("h0", "m0", "h1", "m1"))
        if h0 > 24 or h1 > 24 or m0 > 59 or m1 > 59 or (h0 == 24 and m0) or (h1 == 24 and m1):
            raise ConfigError(f"'{text}': hours must be 00:00..24:00", field=where)
        begin, end = h0 * 3600 + m0 * 60, h1 * 3600 + m1 * 60
        if begin == end:
            raise ConfigError(f"'{text}': an empty window (begin = end)", field=where)
        if begin == 86400:
            raise ConfigError(f"'{text}': a window cannot open at 24:00", field=where)
        days = _parse_days(m.group("days"), text, where) if m.group("days") else frozenset(
            range(7))
        return cls(begin, end, days, text.strip())

    @property
    def wraps(self) -> bool:
        """True when the window runs past midnight."""
        return self.end <= self.begin


@dataclass(frozen=True)
class QueueConfig:
    """One queue: expected wait, priority, limits, start windows, stops and node set.

    ``max_units`` (job units, e.g. PBS chunks), ``max_nodes`` (the fewest nodes that can
    hold the job's units, packed on the largest fitting node), ``max_walltime`` (s) and
    ``max_total`` (resource → total over all units) are submission limits. ``windows``
    empty means the queue may start jobs at any time. ``nodes`` holds node names or group
    labels (empty = every node).
    """

    name: str
    ewt: int | None = None
    priority: int = 0
    max_units: int | None = None
    max_nodes: int | None = None
    max_walltime: int | None = None
    max_total: Mapping[str, int] = field(default_factory=dict)
    windows: tuple[DailyWindow, ...] = ()
    stopped: tuple[tuple[TimeSpec, TimeSpec], ...] = ()
    nodes: tuple[str, ...] = ()

    @property
    def has_time_rules(self) -> bool:
        """True when the queue restricts *when* its jobs may start."""
        return bool(self.windows or self.stopped)

    def describe(self) -> dict[str, Any]:
        """JSON-ready description."""
        out: dict[str, Any] = {"priority": self.priority, **given(
            ewt=self.ewt, max_units=self.max_units, max_nodes=self.max_nodes,
            max_walltime=self.max_walltime)}
        if self.max_total:
            out["max_total"] = dict(self.max_total)
        if self.windows:
            out["windows"] = [w.text for w in self.windows]
        if self.stopped:
            out["stopped"] = [list(s) for s in self.stopped]
        if self.nodes:
            out["nodes"] = list(self.nodes)
        return out


def parse_queues(doc: Any, *, source: str | None = None, prefix: str = "queues"
                 ) -> dict[str, QueueConfig]:
    """Queue tables (``[queues.<name>]``) → configs; every mistake names its field."""
    if not isinstance(doc, Mapping):
        raise ConfigError("must be a table of queue tables", field=prefix, source=source)
    return {str(name): parse_queue(str(name), q, source=source, where=f"{prefix}.{name}")
            for name, q in doc.items()}


def parse_queue(name: str, q: Any, *, source: str | None = None, where: str = "queue"
                ) -> QueueConfig:
    """One queue table → :class:`QueueConfig`."""
    q = checked_table(q, QUEUE_KEYS, where=where, source=source)

    def count(key: str, minimum: int = 1) -> int | None:
        if key not in q:
            return None
        v = q[key]
        if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
            raise ConfigError(f"must be an integer ≥ {minimum}, got {v!r}",
                              field=f"{where}.{key}", source=source)
        return v

    ewt = count("ewt", 0)
    prio = q.get("priority", 0)
    if isinstance(prio, bool) or not isinstance(prio, int):
        raise ConfigError(f"must be an integer, got {prio!r}", field=f"{where}.priority",
                          source=source)
    max_units = count("max_units")
    max_nodes = count("max_nodes")
    max_wall = parse_duration(q["max_walltime"], f"{where}.max_walltime", source) \
        if "max_walltime" in q else None
    max_total = q.get("max_total", {})
    if not isinstance(max_total, Mapping) or any(
            isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in max_total.values()):
        raise ConfigError("must be a table resource = positive integer",
                          field=f"{where}.max_total", source=source)
    windows_doc = q.get("windows", [])
    if isinstance(windows_doc, str):
        windows_doc = [windows_doc]
    if not isinstance(windows_doc, list):
        raise ConfigError("must be a list of 'HH:MM-HH:MM' strings", field=f"{where}.windows",
                          source=source)
    try:
        windows = tuple(DailyWindow.parse(str(w), f"{where}.windows[{k}]")
                        for k, w in enumerate(windows_doc))
    except ConfigError as exc:
        raise ConfigError(str(exc), source=source) from None
    stopped = _intervals(q.get("stopped", []), f"{where}.stopped", source)
    nodes = q.get("nodes", [])
    if isinstance(nodes, str):
        nodes = [nodes]
    if not isinstance(nodes, list) or not all(isinstance(n, str) for n in nodes):
        raise ConfigError("must be a list of node names or group labels",
                          field=f"{where}.nodes", source=source)
    return QueueConfig(name=name, ewt=ewt, priority=prio, max_units=max_units,
                       max_nodes=max_nodes, max_walltime=max_wall, max_total={str(k): int(v)
                                                         for k, v in max_total.items()},
                       windows=windows, stopped=stopped, nodes=tuple(nodes))


def _parse_days(text: str, whole: str, where: str) -> frozenset[int]:
    days: set[int] = set()
    for part in re.split(r"\s*,\s*", text):
        ends = [p.strip() for p in part.split("-")]
        for d in ends:
            if d not in _DAYS:
                raise ConfigError(f"'{whole}': unknown day '{d}' (use {', '.join(_DAYS)})",
                                  field=where)
        a, b = _DAYS.index(ends[0]), _DAYS.index(ends[-1])
        days.update(range(a, b + 1) if a <= b else [*range(a, 7), *range(0, b + 1)])
    return frozenset(days)


def parse_duration(v: Any, where: str, source: str | None) -> int:
    """Seconds from an integer or ``"HH:MM:SS"``."""
    if isinstance(v, int) and not isinstance(v, bool) and v > 0:
        return v
    if isinstance(v, str):
        m = re.fullmatch(r"\s*(\d+):(\d{2}):(\d{2})\s*", v)
        if m:
            secs = int(m.group(1)) * 3600 + int(m.group(2)) * 60 + int(m.group(3))
            if secs > 0:
                return secs
    raise ConfigError(f"must be positive seconds or 'HH:MM:SS', got {v!r}", field=where,
                      source=source)


def _intervals(doc: Any, where: str, source: str | None
               ) -> tuple[tuple[TimeSpec, TimeSpec], ...]:
    """``[[from, to], ...]`` with seconds or local ISO date-times."""
    if not isinstance(doc, list):
        raise ConfigError("must be a list of [from, to] pairs", field=where, source=source)
    out = []
    for k, pair in enumerate(doc):
        if (not isinstance(pair, Sequence) or isinstance(pair, str) or len(pair) != 2
                or not all(isinstance(v, (int, str)) and not isinstance(v, bool)
                           for v in pair)):
            raise ConfigError("must be [from, to] (seconds or ISO date-times)",
                              field=f"{where}[{k}]", source=source)
        out.append((pair[0], pair[1]))
    return tuple(out)


__all__ = ["DailyWindow", "QueueConfig", "parse_duration", "parse_queue", "parse_queues"]
