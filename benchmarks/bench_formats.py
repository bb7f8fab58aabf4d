"""Speed of the field formats: reading accounting records and writing Batsim workloads.

- ``sacct``: a synthetic ``sacct --parsable2`` export of ``--records`` job-level records
  (default 1,000,000; target ≤ 5 s), written once (seeded) with the columns an operator
  would export and a realistic mix: 85 % completed, failed / timed-out / cancelled jobs
  (half of the cancelled ones never started), ``UNLIMITED`` and ``Partition_Limit``
  limits, job-array tasks, day-long run times, local times of Europe/Stockholm (read in
  that zone, so the DST checks run). Timed: :func:`load_sacct`, records to workload.
- ``pbs``: a synthetic PBS Pro accounting log of ``--pbs-records`` ``E`` records (default
  200,000; read line by line in Python, no target: reported per record).
- ``hpc2n``: the HPC2N SWF trace (202,871 records) read and written as a Batsim workload
  JSON (target ≤ 3 s); skipped when the shared trace is absent.

Each figure is the median of ``--repeats`` runs in this process (after one warm-up),
with the CPU time (all threads) next to the wall time: the machine is shared, so the
load average is recorded before and after.

Usage: ``python benchmarks/bench_formats.py [--records N] [--repeats 3] [--out FILE]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dispatchlab import __version__
from dispatchlab.workload.accounting import AccountingOptions
from dispatchlab.workload.batsim_workload import write_batsim
from dispatchlab.workload.load import load_workload
from dispatchlab.workload.pbs_accounting import load_pbs
from dispatchlab.workload.slurm_sacct import load_sacct
from script_args import ready, runner_options

HPC2N = Path(os.environ.get("DISPATCHLAB_TRACES", "/work/shared/traces/swf")) / \
    "HPC2N-2002-2.2-cln.swf.gz"
TARGETS = {"sacct": 5.0, "hpc2n": 3.0}
ZONE = "Europe/Stockholm"
HEADER = ("JobID|JobIDRaw|Submit|Start|End|Elapsed|Timelimit|NCPUS|NNodes|ReqMem|Partition|"
          "QOS|User|JobName|State")


def _local(unix: np.ndarray) -> pd.Series:
    """``YYYY-MM-DDTHH:MM:SS`` in ``ZONE`` of Unix seconds, column-wise."""
    utc = pd.DatetimeIndex(pd.to_datetime(unix, unit="s", utc=True))
    naive = utc.tz_convert(ZONE).tz_localize(None).to_numpy().astype("datetime64[s]")
    return pd.Series(np.datetime_as_string(naive, unit="s"))


def _duration(seconds: np.ndarray) -> pd.Series:
    """Slurm's ``[days-]hh:mm:ss``, column-wise."""
    s = pd.Series(seconds)
    days, rest = s // 86400, s % 86400
    body = ((rest // 3600).astype(str).str.zfill(2) + ":"
            + (rest % 3600 // 60).astype(str).str.zfill(2) + ":"
            + (rest % 60).astype(str).str.zfill(2))
    return body.where(days == 0, days.astype(str) + "-" + body)


def write_sacct(path: Path, n: int, seed: int = 0) -> None:
    """A synthetic, seeded sacct export of ``n`` job-level records (see the module doc)."""
    rng = np.random.default_rng(seed)
    submit = 1_700_000_000 + np.cumsum(rng.integers(0, 40, n))
    wait = rng.integers(0, 7200, n)
    run = np.minimum(rng.lognormal(7.5, 1.6, n).astype(np.int64) + 1, 3 * 86400)
    limit_min = np.maximum(run // 60 + rng.integers(1, 600, n), 1)
    state = rng.choice(np.array(["COMPLETED", "FAILED", "TIMEOUT", "CANCELLED by 1000",
                                 "OUT_OF_MEMORY"]), n, p=[0.85, 0.05, 0.03, 0.05, 0.02])
    timeout = state == "TIMEOUT"
    run = np.where(timeout, limit_min * 60, run)
    never = (state == "CANCELLED by 1000") & (rng.random(n) < 0.5)
    start, end = submit + wait, submit + wait + run
    job = np.arange(1, n + 1)
    jobid = pd.Series(job.astype(str))
    task = rng.random(n) < 0.1  # job-array tasks 123_k
    jobid[task] = (job[task] - job[task] % 10).astype(str) + "_" + (job[task] % 10).astype(str)
    limits = _duration(limit_min * 60)
    odd = rng.random(n)
    limits[odd < 0.01] = "UNLIMITED"
    limits[(odd >= 0.01) & (odd < 0.02)] = "Partition_Limit"
    cpus = rng.choice(np.array([1, 2, 4, 8, 16, 32, 64, 128, 256]), n)
    cols = {
        "JobID": jobid, "JobIDRaw": pd.Series(job.astype(str)), "Submit": _local(submit),
        "Start": _local(start).where(~never, "Unknown"),
        "End": _local(np.where(never, submit + wait // 4, end)),
        "Elapsed": _duration(np.where(never, 0, run)), "Timelimit": limits,
        "NCPUS": pd.Series(cpus.astype(str)),
        "NNodes": pd.Series(np.where(never, 0, -(-cpus // 32)).astype(str)),
        "ReqMem": "4000M", "Partition": pd.Series(rng.choice(np.array(["batch", "long",
                                                                        "debug"]), n)),
        "QOS": "normal", "User": "u" + pd.Series(rng.integers(0, 500, n).astype(str)),
        "JobName": "app" + pd.Series(rng.integers(0, 50, n).astype(str)), "State": state,
    }
    pd.DataFrame(cols).to_csv(path, sep="|", index=False, header=HEADER.split("|"),
                              quoting=3)


def write_pbs(path: Path, n: int, seed: int = 0) -> None:
    """A synthetic, seeded PBS Pro accounting log of ``n`` E records as PBS writes them."""
    rng = np.random.default_rng(seed)
    submit = 1_700_000_000 + np.cumsum(rng.integers(0, 40, n))
    start = submit + rng.integers(0, 7200, n)
    run = rng.integers(1, 86400, n)
    chunks = rng.choice(np.array([1, 2, 4, 8]), n)
    with open(path, "w") as fh:
        for i in range(n):
            r, c = int(run[i]), int(chunks[i])
            fh.write(
                f"03/01/2024 09:00:10;E;{i + 1}.pbs01;user=u{i % 300} group=g "
                f"jobname=app{i % 50} queue=workq ctime={submit[i]} qtime={submit[i]} "
                f"etime={submit[i]} start={start[i]} exec_host=n001/0*4 "
                f"Resource_List.ncpus={4 * c} Resource_List.nodect={c} "
                f"Resource_List.select={c}:ncpus=4 Resource_List.walltime=24:00:00 "
                f"session=4242 end={start[i] + r} Exit_status=0 resources_used.ncpus={4 * c} "
                f"resources_used.walltime={r // 3600:02d}:{r % 3600 // 60:02d}:{r % 60:02d} "
                "run_count=1\n")


def timed(func: Callable[[], Any], repeats: int) -> tuple[float, float, Any]:
    """Median wall and CPU seconds of ``func`` over ``repeats`` runs (one warm-up first)."""
    result = func()
    walls, cpus = [], []
    for _ in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        result = func()
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    return statistics.median(walls), statistics.median(cpus), result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--pbs-records", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None)
    runner_options(parser, out=False)
    args = parser.parse_args()
    ready(args)
    load_before = os.getloadavg()
    rows: list[tuple[str, str, float, float, float, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "sacct.txt"
        t0 = time.perf_counter()
        write_sacct(path, args.records)
        made = time.perf_counter() - t0
        size = path.stat().st_size / 1e6
        opts = AccountingOptions(timezone=ZONE)
        wall, cpu, wl = timed(lambda: load_sacct(path, opts), args.repeats)
        rep = wl.meta["load_report"]
        rows.append(("sacct", f"{args.records:,} records ({size:.0f} MB, written in "
                     f"{made:.1f} s) → {wl.n_jobs:,} jobs; dropped cancelled before start "
                     f"{rep['dropped_cancelled_before_start']:,}, ambiguous local times "
                     f"{rep['ambiguous_local_times']:,}", wall, cpu, TARGETS["sacct"],
                     "load_sacct"))
        pbs = Path(tmp) / "20240301"
        write_pbs(pbs, args.pbs_records)
        wall, cpu, wl = timed(lambda: load_pbs(pbs), args.repeats)
        rows.append(("pbs", f"{args.pbs_records:,} E records → {wl.n_jobs:,} jobs; "
                     f"{cpu / args.pbs_records * 1e6:.0f} µs CPU per record", wall, cpu,
                     float("nan"), "load_pbs"))
        if HPC2N.exists():
            out = Path(tmp) / "hpc2n.json"

            def convert() -> Any:
                return write_batsim(load_workload(HPC2N), out)

            wall, cpu, _ = timed(convert, args.repeats)
            rows.append(("hpc2n", f"HPC2N SWF → Batsim JSON ({out.stat().st_size / 1e6:.0f} "
                         "MB)", wall, cpu, TARGETS["hpc2n"], "load_workload + write_batsim"))
    load_after = os.getloadavg()
    lines = [
        "# Field formats: reading and writing speed",
        "",
        f"dispatchlab {__version__}, Python {platform.python_version()}, numpy "
        f"{np.__version__}, pandas {pd.__version__}, {os.cpu_count()} CPUs; median of "
        f"{args.repeats} runs after a warm-up. Load average before "
        f"{', '.join(f'{x:.2f}' for x in load_before)}, after "
        f"{', '.join(f'{x:.2f}' for x in load_after)}.",
        "",
        "| case | what | wall s | CPU s (all threads) | target s | met (wall; CPU) |",
        "|---|---|---:|---:|---:|---|",
    ]
    lines += [f"| {name} | {what} ({how}) | {wall:.2f} | {cpu:.2f} | "
              + ("– | – |" if target != target else
                 f"{target:.0f} | {'yes' if wall <= target else 'no'} (CPU: "
                 f"{'yes' if cpu <= target else 'no'}) |")
              for name, what, wall, cpu, target, how in rows]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out is not None:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
