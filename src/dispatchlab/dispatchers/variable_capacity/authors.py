"""Run the ``authors`` semantics on the authors' files (job file, variation file,
quantile file): :func:`simulate_authors`."""

from __future__ import annotations

from pathlib import Path

from dispatchlab.dispatchers.variable_capacity.authors_kernel import (
    AuthorsResult,
    AuthorsSetup,
    simulate_rows,
)
from dispatchlab.engine.capacity import read_variation_rows
from dispatchlab.workload.vc_authors import (
    AuthorsJobs,
    authors_quantiles,
    read_authors_jobs,
    read_quantiles,
)


def simulate_authors(jobs: AuthorsJobs | str | Path, variation: str | Path,
                     setup: AuthorsSetup, quantiles: str | Path | list[int] | None = None
                     ) -> AuthorsResult:
    """One run of the authors' simulator's rules. ``quantiles``: a quantile file or list
    (``None``: what ``genData.py`` makes of the job file itself; the first-fit pair reads
    none)."""
    rows = jobs if isinstance(jobs, AuthorsJobs) else read_authors_jobs(jobs)
    initial, changes = read_variation_rows(variation)
    if setup.strategy.startswith("ff-"):
        q: list[int] = []
    elif quantiles is None:
        q = authors_quantiles(rows)
    elif isinstance(quantiles, list):
        q = quantiles
    else:
        q = read_quantiles(quantiles)
    return simulate_rows(rows.names, rows.release, rows.length, rows.cores, initial, changes,
                         q, setup)
