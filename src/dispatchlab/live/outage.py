"""Failed reads in a row: logged, then said loudly ("controller unreachable"), then fatal.

A read fails when a Slurm command fails or reports ``errors`` (the controller is down,
restarting or overloaded). The poll loops (the adapter's and the predictor's) tell an
:class:`Outage` about every read; it logs the first failures one by one, and from
``loud_after`` failures in a row writes a plain line to standard error (again every
``remind`` s) and logs ``controller_unreachable``; when reads work again it logs
``controller_back``. An outage longer than ``limit`` s raises :class:`SlurmUnreachable`.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from dispatchlab.errors import DispatchlabError

#: Seconds of failed reads in a row after which the live mode stops (exit code 3).
OUTAGE_LIMIT = 300.0


class SlurmUnreachable(DispatchlabError):
    """Slurm could not be read for longer than the stated bound."""


@dataclass
class Outage:
    """Counts failed reads in a row; ``log`` receives the events."""

    log: Callable[..., None]
    limit: float | None = OUTAGE_LIMIT
    loud_after: int = 3
    remind: float = 30.0
    failures: int = 0
    since: float | None = None  # monotonic time of the first failure in a row
    said: float | None = None  # when it was last said loudly
    last_error: str = ""

    def failed(self, error: str) -> None:
        """One more failed read; raise :class:`SlurmUnreachable` beyond ``limit`` s."""
        now = time.monotonic()
        self.last_error = error
        if self.since is None:
            self.since = now
        self.failures += 1
        lasted = now - self.since
        if self.failures < self.loud_after:
            self.log("read_failed", error=error, failures=self.failures)
        elif self.said is None or now - self.said >= self.remind:
            self.said = now
            bound = "" if self.limit is None else f"; giving up after {self.limit:g} s"
            self.log("controller_unreachable", failures=self.failures,
                     seconds=round(lasted, 1), error=error)
            print(f"dispatchlab live: Slurm controller unreachable for {lasted:.0f} s "
                  f"({self.failures} failed reads; last: {error}){bound}",
                  file=sys.stderr, flush=True)
        if self.limit is not None and lasted > self.limit:
            raise SlurmUnreachable(self.summary())

    def ok(self) -> None:
        """A read worked."""
        if self.since is not None and self.said is not None:
            lasted = time.monotonic() - self.since
            self.log("controller_back", failures=self.failures, seconds=round(lasted, 1))
            print(f"dispatchlab live: Slurm controller reachable again after {lasted:.0f} s",
                  file=sys.stderr, flush=True)
        self.failures, self.since, self.said = 0, None, None

    def summary(self) -> str:
        """What the ongoing outage is, in one line."""
        lasted = 0.0 if self.since is None else time.monotonic() - self.since
        last = f"; last: {self.last_error}" if self.last_error else ""
        return (f"Slurm controller unreachable: {self.failures} failed reads in a row over "
                f"{lasted:.0f} s{last}")

    def finish(self) -> None:
        """At the end of a run: an outage still going on (so also a run whose every read
        failed) is an error."""
        if self.since is not None:
            raise SlurmUnreachable(f"stopped while unable to read Slurm — {self.summary()}")

