"""Writing your own dispatcher: smallest-job-first by units, first-fit, non-strict.

Run it: ``.venv/bin/python examples/custom_dispatcher.py``. It registers the example policy
under its name, simulates the bundled KTH SP2 slice with it and with strict FIFO, and
prints both summaries. Everything comes from :mod:`dispatchlab.extend`, the public module
for dispatcher authors.
"""

from __future__ import annotations

from collections.abc import Sequence

from dispatchlab.extend import (
    SAMPLE_PLATFORM,
    BaseDispatcher,
    Decision,
    Events,
    SwfOptions,
    SystemView,
    Workspace,
    first_fit,
    load_swf,
    register,
    sample_trace,
    simulate,
)


class FewestUnitsFirst(BaseDispatcher):
    """Start queued jobs by increasing size; skip jobs that do not fit (non-strict)."""

    name = "fewest-units-first"

    def __init__(self, depth: int = 1000):
        self.depth = depth  # constructors only store parameters

    def decide(self, view: SystemView, events: Events) -> Sequence[Decision]:
        """One call per decision point: return the starts for ``view.now``."""
        ws = Workspace(view)  # free capacity as it will be after the starts chosen so far
        units = view.jobs.units
        order = sorted(view.queue, key=lambda j: (int(units[j]), j))[: self.depth]
        decisions: list[Decision] = []
        for job in order:
            if not ws.fits_total(job):
                continue
            placed = first_fit(ws.free, view.req[job], int(units[job]))
            if placed is not None:
                decisions.append(ws.take(job, *placed))
        return decisions


def main() -> None:
    """Compare the example policy with strict FIFO on the bundled real trace slice."""
    register(FewestUnitsFirst.name, FewestUnitsFirst, "smallest job first, first-fit, "
             "non-strict (examples/custom_dispatcher.py)", family="custom")
    wl = load_swf(sample_trace(), SwfOptions(limit=2000))
    for name in (FewestUnitsFirst.name, "fifo"):  # a registered name works as a built-in one
        s = simulate(wl, SAMPLE_PLATFORM, name).summary
        print(f"{name:>20}: mean wait {s['mean_wait']:9.0f} s, "
              f"mean bounded slowdown {s['mean_bounded_slowdown']:8.2f}, "
              f"utilization {s['utilization']:.3f}")


if __name__ == "__main__":
    main()
