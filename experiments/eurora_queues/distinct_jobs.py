"""Distinct jobs in all 206 historical batches (they overlap), overall and per queue.

Usage: ``python experiments/eurora_queues/distinct_jobs.py`` → ``results/distinct_jobs.csv``
(one row per queue and one for all queues: job records, records Eurora can host, distinct
ids). The counting is ``experiments/cp/distinct_jobs.py``'s.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "cp"))
from distinct_jobs import TRACES, count  # noqa: E402

from dispatchlab.workload.eurora import list_eurora_batches  # noqa: E402

QUEUES = [None, "debug", "parallel", "longpar", "np_longpar", "reservation"]


def main() -> None:
    batches = [(f"{p.parent.name}/{p.name}", p) for p in list_eurora_batches(TRACES)]
    rows = []
    for q in QUEUES:
        total = count(batches, q).iloc[-1]
        rows.append({"queue": q or "ALL", "batches": len(batches),
                     "records": total["records"], "hostable_records": total["hostable_records"],
                     "distinct_jobs": total["new_distinct"],
                     "distinct_hostable": total["new_distinct_hostable"]})
    table = pd.DataFrame(rows)
    table.to_csv(HERE / "results" / "distinct_jobs.csv", index=False)
    print(table.to_string(index=False))


if __name__ == "__main__":
    main()
