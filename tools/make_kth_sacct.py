"""Write the first jobs of the bundled KTH SP2 slice in ``sacct --parsable2``'s layout.

The operator's page (docs/slurm_whatif.md) starts from an ``sacct`` export; this is one
a user's machine has without any cluster: every job of the bundled slice's first
``--jobs`` (real submit, wait, run time, processors, requested time, user and status of
the Parallel Workloads Archive's KTH SP2 log), one line per job (no steps), times in UTC,
partition ``batch`` (examples/platforms/kth-slurm.conf's).

  python tools/make_kth_sacct.py [--jobs 1000]
"""

from __future__ import annotations

import argparse
import gzip
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TRACE = REPO / "src/dispatchlab/data/traces/KTH-SP2-1996-2.1-cln.slice.swf.gz"
OUT = REPO / "examples/workloads/kth-sp2.sacct.txt"
COLUMNS = ("JobID|JobIDRaw|Submit|Start|End|Elapsed|Timelimit|NCPUS|NNodes|Partition|User|"
           "JobName|State")
#: SWF status → sacct State (SWF: 1 completed, 0 failed, 5 cancelled)
STATES = {1: "COMPLETED", 0: "FAILED", 5: "CANCELLED"}


def _when(t: int) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%S")


def _span(s: int) -> str:
    days, rest = divmod(s, 86400)
    text = f"{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"
    return f"{days}-{text}" if days else text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=1000)
    args = ap.parse_args()
    start_unix = None
    lines = [COLUMNS]
    with gzip.open(TRACE, "rt") as fh:
        for raw in fh:
            if raw.startswith(";"):
                if "UnixStartTime:" in raw:
                    start_unix = int(raw.split(":")[1])
                continue
            f = raw.split()
            if start_unix is None:
                raise SystemExit(f"{TRACE}: no UnixStartTime in the header")
            jid, submit, wait, run, procs = (int(x) for x in f[:5])
            limit, status, user = int(f[8]), int(f[10]), int(f[11])
            t0 = start_unix + submit
            state = "TIMEOUT" if status == 1 and run >= limit > 0 else STATES.get(status,
                                                                               "COMPLETED")
            lines.append("|".join((str(jid), str(jid), _when(t0), _when(t0 + wait),
                                   _when(t0 + wait + run), _span(run),
                                   _span(limit) if limit > 0 else "UNLIMITED",
                                   str(procs), str(procs), "batch", f"user{user}", "job",
                                   state)))
            if len(lines) > args.jobs:
                break
    OUT.write_text("\n".join(lines) + "\n")
    print(f"{OUT}: {len(lines) - 1} jobs")


if __name__ == "__main__":
    main()
