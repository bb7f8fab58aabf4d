"""The authors' variable-capacity job files as their simulator reads them.

``simu.cc`` (github.com/lucasperotin/variableResources) reads a job file as a stream of
``name release length cores state`` records and keeps them in file order, the jobs
released after the window included: the order and the count matter to its results
(:mod:`~dispatchlab.dispatchers.variable_capacity.authors_sim`). :func:`read_authors_jobs`
keeps all of it; :func:`read_vc_jobs <dispatchlab.workload.generators.variable_capacity.
read_vc_jobs>` is the reader for the engine (one window, sorted, rebased).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from dispatchlab.errors import WorkloadError

#: longest length ``genData.py`` keeps when it makes the quantile file (one week)
QUANTILE_CAP = 604800


@dataclass(frozen=True)
class AuthorsJobs:
    """Every record of a job file, in file order."""

    names: list[str]
    release: list[float]
    length: list[float]
    cores: list[int]
    source: str


def read_authors_jobs(path: str | Path) -> AuthorsJobs:
    """Read ``path`` (``name release length cores state`` a line); errors name the line
    and the field."""
    p = Path(path)
    if not p.is_file():
        raise WorkloadError("file not found", source=str(p))
    names: list[str] = []
    release: list[float] = []
    length: list[float] = []
    cores: list[int] = []
    with p.open() as fh:
        for n, line in enumerate(fh, start=1):
            f = line.split()
            if not f:
                continue
            if len(f) != 5:
                raise WorkloadError(f"line {n}: expected 'name release length cores state',"
                                    f" got '{line.strip()}'", source=str(p))
            r = _number(f[1], p, n, "release")
            t = _number(f[2], p, n, "length")
            c = _number(f[3], p, n, "cores")
            if c != int(c) or c < 1:
                raise WorkloadError(f"line {n}: job {f[0]}: cores must be a whole number "
                                    f"≥ 1, got {f[3]}", source=str(p), field="cores")
            if t <= 0:
                raise WorkloadError(f"line {n}: job {f[0]}: length must be > 0, got {f[2]}",
                                    source=str(p), field="length")
            names.append(f[0])
            release.append(r)
            length.append(t)
            cores.append(int(c))
    if not names:
        raise WorkloadError("no job in the file", source=str(p))
    return AuthorsJobs(names, release, length, cores, str(p))


def _number(text: str, p: Path, line: int, field: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise WorkloadError(f"line {line}: {field} '{text}' is not a number", source=str(p),
                            field=field) from None
    if not math.isfinite(v) or v < 0:
        raise WorkloadError(f"line {line}: {field} {text} must be finite and ≥ 0",
                            source=str(p), field=field)
    return v


def authors_quantiles(jobs: AuthorsJobs, packs: int = 1000) -> list[int]:
    """The quantile file ``genData.py`` makes from ``jobs`` (all of the file): the lengths
    (capped at one week) at which each ``1/packs`` of the total work is reached."""
    rows = sorted((min(int(t), QUANTILE_CAP), c) for t, c in
                  zip(jobs.length, jobs.cores, strict=True) if min(int(t), QUANTILE_CAP) > 0)
    total = sum(t * c for t, c in rows)
    step = 1 / packs
    c_share = step
    area = 0
    out: list[int] = []
    for t, procs in rows:
        area += t * procs
        while area > c_share * total:
            out.append(t)
            c_share += step
    return out


def read_quantiles(path: str | Path) -> list[int]:
    """A quantile file (one whole length a line, as ``genData.py`` writes it)."""
    p = Path(path)
    if not p.is_file():
        raise WorkloadError("quantile file not found", source=str(p))
    out: list[int] = []
    for n, line in enumerate(p.read_text().splitlines(), start=1):
        for tok in line.split():
            try:
                out.append(int(tok))
            except ValueError:
                raise WorkloadError(f"line {n}: quantile '{tok}' is not a whole number",
                                    source=str(p), field="quantile") from None
    return out
