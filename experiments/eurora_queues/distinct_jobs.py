"""Distinct jobs in the historical batches (they overlap), overall and per queue.

Usage::

    python experiments/eurora_queues/distinct_jobs.py            # all 206 batches
    python experiments/eurora_queues/distinct_jobs.py results-cp # the batches of a run

writes ``<folder>/distinct_jobs.csv`` (default folder ``results``; with a run folder,
the batches its ``run.json`` lists): one row per queue and one for all queues, with job
records, records Eurora can host, distinct ids, and how many of the records and of the
distinct jobs were submitted between 08:00 and 18:00 local time (Europe/Rome). The counting is
``experiments/cp/distinct_jobs.py``'s.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "cp"))
from distinct_jobs import TRACES, count, load  # noqa: E402

from dispatchlab.workload.eurora import list_eurora_batches  # noqa: E402

QUEUES = [None, "debug", "parallel", "longpar", "np_longpar", "reservation"]


def submissions(path: Path) -> pd.DataFrame:
    """Job id, queue and whether submitted 08:00–18:00 local time, per record."""
    wl = load(path)
    local = pd.to_datetime(int(wl.origin_unix or 0) + wl.submit, unit="s", utc=True)
    hour = local.tz_convert(wl.timezone or "Europe/Rome").hour
    names = [q.name for q in wl.queues]
    return pd.DataFrame({"job_id": wl.job_id, "queue": [names[q] for q in wl.queue],
                         "day": np.asarray((hour >= 8) & (hour < 18))})


def main() -> None:
    folder = HERE / (sys.argv[1] if len(sys.argv) > 1 else "results")
    if len(sys.argv) > 1:
        names = json.loads((folder / "run.json").read_text())["batches"]
        batches = [(b, TRACES / b) for b in names]
    else:
        batches = [(f"{p.parent.name}/{p.name}", p) for p in list_eurora_batches(TRACES)]
    subs = pd.concat([submissions(p) for _, p in batches], ignore_index=True)
    rows = []
    for q in QUEUES:
        total = count(batches, q).iloc[-1]
        mine = subs if q is None else subs[subs["queue"] == q]
        rows.append({"queue": q or "ALL", "batches": len(batches),
                     "records": total["records"], "hostable_records": total["hostable_records"],
                     "distinct_jobs": total["new_distinct"],
                     "distinct_hostable": total["new_distinct_hostable"],
                     "records_08_18": int(mine["day"].sum()),
                     "distinct_08_18": int(mine.drop_duplicates("job_id")["day"].sum())})
    table = pd.DataFrame(rows)
    table.to_csv(folder / "distinct_jobs.csv", index=False)
    print(table.to_string(index=False))


if __name__ == "__main__":
    main()
