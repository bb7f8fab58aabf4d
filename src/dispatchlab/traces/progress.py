"""Download progress on stderr: a line redrawn in a terminal, a few lines otherwise."""

from __future__ import annotations

import sys
import time
from typing import TextIO


def human_bytes(n: float) -> str:
    """``411,455`` → ``411.5 kB``."""
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} GB"  # pragma: no cover


class StderrProgress:
    """Called with (bytes so far, bytes in all); prints at most every ``interval`` s."""

    def __init__(self, label: str, stream: TextIO | None = None, interval: float = 0.5):
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last = 0.0
        self._shown = False

    def __call__(self, got: int, total: int) -> None:
        now = time.monotonic()
        done = got >= total
        if not done and now - self._last < (self.interval if self.tty else 10 * self.interval):
            return
        self._last = now
        pct = 100.0 * got / total if total else 100.0
        text = f"  {self.label}: {pct:5.1f}% ({human_bytes(got)} of {human_bytes(total)})"
        if self.tty:
            self.stream.write("\r" + text + ("\n" if done else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()
        self._shown = True
