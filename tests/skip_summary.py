"""The end-of-run list of skipped tests, grouped by reason with counts (most first)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any


def skip_reason(report: Any) -> str:
    """The reason a skipped report gives, without pytest's ``Skipped:`` prefix."""
    longrepr = getattr(report, "longrepr", None)
    reason = str(longrepr[2]) if isinstance(longrepr, tuple) and len(longrepr) == 3 else ""
    return reason.removeprefix("Skipped: ").strip() or "(no reason given)"


def skips_by_reason(reports: Iterable[Any]) -> list[tuple[str, int]]:
    """``(reason, count)`` of the skipped reports, most frequent first, then by reason."""
    counts = Counter(skip_reason(r) for r in reports)
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


def skip_lines(reports: Iterable[Any]) -> list[str]:
    """One line per reason: the count, right-aligned, then the reason."""
    grouped = skips_by_reason(reports)
    width = len(str(max((n for _, n in grouped), default=0)))
    return [f"{n:>{width}}  {reason}" for reason, n in grouped]
