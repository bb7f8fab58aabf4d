"""Benchmark inputs: a seeded synthetic SWF workload and an aligned slice of a real trace.

Both simulators read the *same* SWF file written here. The file is "aligned": it only
holds jobs on which AccaSim's and dispatchlab's models coincide, so per-job start times
can be compared exactly (see ``README.md`` → *Model alignment*):

- processors = requested processors, or allocated when unknown (AccaSim's rule), written
  to both SWF fields 5 and 8 so either reader finds the same count;
- requested time = ``max(requested, run time)`` (AccaSim never kills at the wall-time);
  a missing request becomes the run time;
- dropped: unknown run time, zero run time, no processor count, more processors than the
  machine has; memory fields are written as unknown (-1);
- rows sorted by (submit, job id), submit times made relative to the first job.
"""

from __future__ import annotations

import gzip
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

#: SWF columns (0-based) used here.
JOB, SUBMIT, WAIT, RUN, ALLOC, AVGCPU, USEDMEM, REQP, REQT, REQMEM, STATUS, USER, GROUP, \
    EXE, QUEUE, PART, PREC, THINK = range(18)


@dataclass
class InputInfo:
    """What an input file holds and how it was made (recorded in the results)."""

    name: str
    path: str
    jobs: int
    nodes: int
    cores_per_node: int
    description: str
    offered_load: float
    dropped: dict[str, int]

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        return asdict(self)


def synthetic(out: Path, *, jobs: int = 20_000, seed: int = 1, nodes: int = 128,
              cores: int = 16, load: float = 0.98, max_procs: int = 64,
              median_runtime: float = 900.0, sigma: float = 1.4) -> InputInfo:
    """Seeded synthetic workload: Poisson arrivals, log-uniform 1..``max_procs`` processors,
    lognormal run times, requested time ≥ run time rounded up to whole minutes, and the
    arrival rate chosen so the offered load on ``nodes × cores`` is ``load``."""
    rng = np.random.default_rng(seed)
    procs = np.floor(np.exp(rng.uniform(0.0, np.log(max_procs + 1), jobs))).astype(np.int64)
    procs = np.clip(procs, 1, max_procs)
    runtime = np.ceil(rng.lognormal(np.log(median_runtime), sigma, jobs)).astype(np.int64)
    runtime = np.clip(runtime, 1, 7 * 86_400)
    over = rng.uniform(1.0, 5.0, jobs)
    reqt = np.ceil(runtime * over / 60.0).astype(np.int64) * 60
    reqt = np.maximum(reqt, runtime)
    capacity = nodes * cores
    work = float((procs * runtime).sum())
    gaps = rng.exponential(1.0, jobs)
    gaps[0] = 0.0
    # span of arrivals such that work / (capacity * span) == load
    span = work / (capacity * load)
    submit = np.rint(np.cumsum(gaps) * (span / gaps.sum())).astype(np.int64)
    user = rng.integers(1, 101, jobs)
    rows = np.full((jobs, 18), -1, dtype=np.int64)
    rows[:, JOB] = np.arange(1, jobs + 1)
    rows[:, SUBMIT] = submit
    rows[:, RUN] = runtime
    rows[:, ALLOC] = procs
    rows[:, REQP] = procs
    rows[:, REQT] = reqt
    rows[:, STATUS] = 1
    rows[:, USER] = user
    rows[:, GROUP] = 1
    rows[:, EXE] = 1
    rows[:, QUEUE] = 1
    rows[:, PART] = 1
    header = {
        "Note": f"dispatchlab benchmarks/accasim synthetic workload, seed {seed}",
        "MaxJobs": str(jobs), "MaxRecords": str(jobs),
        "MaxNodes": str(nodes), "MaxProcs": str(capacity),
    }
    _write_swf(out, rows, header)
    desc = (f"synthetic, seed {seed}: Poisson arrivals, log-uniform 1–{max_procs} processors, "
            f"lognormal run times (median {median_runtime:g} s, σ {sigma:g}), requested = "
            f"run × U(1,5) rounded up to minutes, offered load {_load(rows, capacity):.3f} on "
            f"{nodes}×{cores} cores")
    return InputInfo(name="synthetic", path=str(out), jobs=jobs, nodes=nodes,
                     cores_per_node=cores, description=desc,
                     offered_load=_load(rows, capacity), dropped={})


def trace_slice(trace: Path, out: Path, *, limit: int | None = 20_000, skip: int = 0,
                nodes: int | None = None, cores: int | None = None) -> InputInfo:
    """An aligned slice of a real SWF trace (plain or gzip), cleaned as the module says.

    The machine is ``nodes × cores``; by default MaxNodes × (MaxProcs / MaxNodes) from the
    trace header.
    """
    header = _read_header(trace)
    if nodes is None or cores is None:
        hn, hp = _int(header.get("MaxNodes")), _int(header.get("MaxProcs"))
        if not hn or not hp:
            raise SystemExit(f"{trace}: no MaxNodes/MaxProcs header; give --nodes and --cores")
        nodes = nodes or hn
        cores = cores or -(-hp // hn)
    capacity = nodes * cores
    data = _read_rows(trace)
    dropped: dict[str, int] = {}
    procs = np.where(data[:, REQP] > 0, data[:, REQP], data[:, ALLOC])
    keep = np.ones(len(data), dtype=bool)
    for name, mask in (("unknown run time", data[:, RUN] < 0),
                       ("zero run time", data[:, RUN] == 0),
                       ("no processor count", procs <= 0),
                       ("more processors than the machine", procs > capacity),
                       ("unknown submit time", data[:, SUBMIT] < 0)):
        mask = mask & keep
        dropped[name] = int(mask.sum())
        keep &= ~mask
    idx = np.flatnonzero(keep)
    idx = idx[np.lexsort((data[idx, JOB], data[idx, SUBMIT]))]
    if skip:
        dropped["skipped (--skip)"] = min(skip, len(idx))
        idx = idx[skip:]
    if limit is not None and len(idx) > limit:
        dropped["cut (--limit)"] = len(idx) - limit
        idx = idx[:limit]
    rows = data[idx].copy()
    p = procs[idx]
    rows[:, ALLOC] = p
    rows[:, REQP] = p
    reqt = np.where(rows[:, REQT] > 0, rows[:, REQT], rows[:, RUN])
    dropped["requested time raised to run time (never killed)"] = int(
        (rows[:, RUN] > reqt).sum())
    rows[:, REQT] = np.maximum(reqt, rows[:, RUN])
    rows[:, AVGCPU] = -1
    rows[:, USEDMEM] = -1
    rows[:, REQMEM] = -1
    rows[:, SUBMIT] -= rows[0, SUBMIT]
    if len(np.unique(rows[:, JOB])) != len(rows):
        raise SystemExit(f"{trace}: job numbers are not unique in the slice")
    kept = {k: v for k, v in header.items() if k in ("Version", "Computer", "Installation",
                                                      "MaxNodes", "MaxProcs", "UnixStartTime")}
    kept["Note"] = (f"dispatchlab benchmarks/accasim aligned slice of {trace.name}: skip {skip}, "
                    f"limit {limit}")
    _write_swf(out, rows, kept)
    desc = (f"{trace.name}, jobs {skip + 1}–{skip + len(rows)} after cleaning, on "
            f"{nodes}×{cores} cores (offered load {_load(rows, capacity):.3f})")
    return InputInfo(name=trace.name.split(".swf")[0], path=str(out), jobs=len(rows),
                     nodes=nodes, cores_per_node=cores, description=desc,
                     offered_load=_load(rows, capacity), dropped=dropped)


def _load(rows: np.ndarray, capacity: int) -> float:
    span = max(int(rows[:, SUBMIT].max() - rows[:, SUBMIT].min()), 1)
    return float((rows[:, ALLOC] * rows[:, RUN]).sum()) / (capacity * span)


def _open(path: Path):  # type: ignore[no-untyped-def]
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")


def _read_header(path: Path) -> dict[str, str]:
    header: dict[str, str] = {}
    with _open(path) as fh:
        for line in fh:
            s = line.strip()
            if not s:
                continue
            if not s.startswith(";"):
                break
            key, sep, value = s.lstrip(";").partition(":")
            if sep and key.strip() and " " not in key.strip():
                header.setdefault(key.strip(), value.strip())
    return header


def _read_rows(path: Path) -> np.ndarray:
    rows = []
    with _open(path) as fh:
        for line in fh:
            s = line.split(";", 1)[0].split()
            if len(s) == 18:
                rows.append([round(float(x)) for x in s])
    return np.array(rows, dtype=np.int64).reshape(-1, 18)


def _int(text: str | None) -> int | None:
    try:
        return int(str(text).split()[0])
    except (ValueError, IndexError):
        return None


def _write_swf(out: Path, rows: np.ndarray, header: dict[str, str]) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", encoding="utf-8") as fh:
        for k, v in header.items():
            fh.write(f"; {k}: {v}\n")
        for r in rows.tolist():
            fh.write(" ".join(str(v) for v in r) + "\n")
