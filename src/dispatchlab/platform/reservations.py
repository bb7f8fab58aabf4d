"""Advance and standing reservations: whole nodes locked for a time window.

A reservation holds ``nodes`` (node names or group labels) from ``start`` for
``duration`` seconds; with ``period`` it repeats (a standing reservation), ``count``
times or for ever. It owns a queue (``queue``, by default its name): jobs submitted to it
run only on the reserved nodes, start inside an occurrence and must end — by their
wall-time — before that occurrence ends. Jobs of other queues may use reserved nodes only
if their wall-time ends before the occurrence starts.

Feasibility is validated when the simulation starts (:mod:`dispatchlab.engine.rules`):
two reservations may not hold one node at overlapping times, and every node must exist.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dispatchlab.errors import ConfigError
from dispatchlab.platform.queues import TimeSpec, parse_duration
from dispatchlab.platform.tables import checked_table

#: Keys a ``[[reservations]]`` table may hold.
RESERVATION_KEYS = ("name", "nodes", "start", "duration", "end", "period", "count", "queue")


@dataclass(frozen=True)
class Reservation:
    """One (possibly standing) reservation; times are resolved at simulation start."""

    name: str
    nodes: tuple[str, ...]
    start: TimeSpec
    duration: int
    period: int | None = None
    count: int | None = None
    queue: str = ""

    @property
    def queue_name(self) -> str:
        """The queue whose jobs run inside this reservation."""
        return self.queue or self.name

    def describe(self) -> dict[str, Any]:
        """JSON-ready description."""
        out: dict[str, Any] = {"name": self.name, "nodes": list(self.nodes),
                               "start": self.start, "duration": self.duration,
                               "queue": self.queue_name}
        if self.period is not None:
            out["period"] = self.period
            out["count"] = self.count
        return out


def parse_reservations(doc: Any, *, source: str | None = None, prefix: str = "reservations"
                       ) -> tuple[Reservation, ...]:
    """``[[reservations]]`` tables → reservations; mistakes name file and field."""
    if not isinstance(doc, list):
        raise ConfigError("must be an array of tables ([[reservations]])", field=prefix,
                          source=source)
    out = [parse_reservation(r, source=source, where=f"{prefix}[{k}]")
           for k, r in enumerate(doc)]
    names = [r.name for r in out]
    for k, nm in enumerate(names):
        if nm in names[:k]:
            raise ConfigError(f"duplicate reservation name '{nm}'", field=f"{prefix}[{k}].name",
                              source=source)
    queues = [r.queue_name for r in out]
    for k, q in enumerate(queues):
        if q in queues[:k]:
            raise ConfigError(f"queue '{q}' belongs to two reservations",
                              field=f"{prefix}[{k}].queue", source=source)
    return tuple(out)


def parse_reservation(r: Any, *, source: str | None = None, where: str = "reservation"
                      ) -> Reservation:
    """One reservation table."""
    r = checked_table(r, RESERVATION_KEYS, where=where, source=source)
    name = r.get("name")
    if not isinstance(name, str) or not name:
        raise ConfigError("must be a non-empty string", field=f"{where}.name", source=source)
    nodes = r.get("nodes")
    if isinstance(nodes, str):
        nodes = [nodes]
    if not isinstance(nodes, list) or not nodes or not all(isinstance(n, str) for n in nodes):
        raise ConfigError("must be a non-empty list of node names or group labels",
                          field=f"{where}.nodes", source=source)
    start = r.get("start")
    if isinstance(start, bool) or not isinstance(start, (int, str)):
        raise ConfigError("must be seconds from the workload origin or a local ISO date-time",
                          field=f"{where}.start", source=source)
    if isinstance(start, int) and start < 0:
        raise ConfigError("must not be negative", field=f"{where}.start", source=source)
    if ("duration" in r) == ("end" in r):
        raise ConfigError("give exactly one of duration or end", field=f"{where}.duration",
                          source=source)
    if "duration" in r:
        duration = parse_duration(r["duration"], f"{where}.duration", source)
    else:
        end = r["end"]
        if not isinstance(start, int) or isinstance(end, bool) or not isinstance(end, int):
            raise ConfigError("'end' needs integer start and end; use duration with date-times",
                              field=f"{where}.end", source=source)
        if end <= start:
            raise ConfigError(f"end {end} is not after start {start}", field=f"{where}.end",
                              source=source)
        duration = end - start
    period = parse_duration(r["period"], f"{where}.period", source) if "period" in r else None
    if period is not None and period < duration:
        raise ConfigError(f"period {period} s is shorter than the duration {duration} s "
                          "(occurrences would overlap)", field=f"{where}.period", source=source)
    count = r.get("count")
    if count is not None and (isinstance(count, bool) or not isinstance(count, int)
                              or count < 1):
        raise ConfigError("must be a positive integer", field=f"{where}.count", source=source)
    if count is not None and period is None:
        raise ConfigError("count needs a period (a standing reservation)",
                          field=f"{where}.count", source=source)
    queue = r.get("queue", "")
    if not isinstance(queue, str):
        raise ConfigError("must be a string", field=f"{where}.queue", source=source)
    return Reservation(name=name, nodes=tuple(nodes), start=start, duration=duration,
                       period=period, count=count, queue=queue)


__all__ = ["Reservation", "parse_reservation", "parse_reservations"]
