"""Why the heuristic duration predictor loses to the wall-time on the Eurora batches.

Replays each batch's submissions against the run times PBS logged: a job's prediction is
made at its submission from the jobs that had *finished on Eurora* (logged end) by then —
what a predictor deployed beside PBS would have known, independent of any simulated
schedule. Predictors (all capped by the wall-time, as the engine kills there):

- ``walltime``: the requested time;
- ``heuristic-cold``: the project's heuristic (mean of the last 2 run times of the same
  user and executable, else user; Galleguillos et al.) with history from this batch only,
  as each simulation starts it;
- ``heuristic-warm``: the same with history from the preceding part of the log (every
  job of the 206 batches, by distinct id, that ended before the prediction);
- ``heuristic-warm-nocap``: without the wall-time cap;
- ``request-key-cold`` / ``request-key-warm``: the same mean over jobs of the same queue,
  requested wall-time and request (units × cores/GPUs/MICs/memory per unit), then of the same
  queue and wall-time — a stand-in key, because the data set hides users and
  executables (every job is user ``yyy``, executable ``xxx``).

Usage::

    python experiments/cp/predictor_study.py experiments/cp/results/eurora_hist/results.csv \\
        --out experiments/cp/results/eurora_hist/predictors.csv

Only the jobs the Eurora platform can host count (as in the runs). Writes one row per
batch × predictor (jobs, MAE in minutes, under-, over- and exact
rates) and the pooled rows (batch ``POOLED``).
"""

from __future__ import annotations

import argparse
from collections import defaultdict, deque
from collections.abc import Callable, Hashable
from pathlib import Path

import numpy as np
import pandas as pd
from distinct_jobs import complete_batches, hostable  # same folder

from dispatchlab.estimates.accuracy import prediction_accuracy
from dispatchlab.platform.resolve import resolve_platform
from dispatchlab.workload import Workload
from dispatchlab.workload.eurora import list_eurora_batches
from dispatchlab.workload.load import load_workload

HERE = Path(__file__).resolve().parent
TRACES = (HERE.parents[1] / ".." / "shared" / "traces" / "eurora" / "job_instances"
          / "historical_traces").resolve()
HISTORY = 2

Key = Callable[[pd.Series], list[Hashable]]


def table(wl: Workload) -> pd.DataFrame:
    """One row per job: id, absolute submit and logged end, run time, wall-time, keys."""
    origin = int(wl.origin_unix or 0)
    queues = [q.name for q in wl.queues]
    submit = origin + wl.submit
    end = submit + np.maximum(wl.logged_wait, 0) + wl.runtime
    req = [tuple(r) for r in wl.req.tolist()]
    return pd.DataFrame({
        "job_id": wl.job_id, "submit": submit, "end": end, "runtime": wl.runtime,
        "walltime": wl.walltime, "user": [wl.users[u] for u in wl.user],
        "app": [wl.apps[a] for a in wl.app], "queue": [queues[q] for q in wl.queue],
        "units": wl.units, "req": req,
    })


def user_keys(job: pd.Series) -> list[Hashable]:
    """The project heuristic's keys: (user, executable), then user."""
    return [("ua", job.user, job.app), ("u", job.user)]


def request_keys(job: pd.Series) -> list[Hashable]:
    """Stand-in keys: (queue, wall-time, request), then (queue, wall-time)."""
    return [("qwr", job.queue, job.walltime, job.units, job.req),
            ("qw", job.queue, job.walltime)]


def replay(batch: pd.DataFrame, prior: pd.DataFrame, keys: Key, cap: bool) -> np.ndarray:
    """Predictions at each batch job's submission, from the jobs of ``prior`` (and of the
    batch) that ended by then, most recent ``HISTORY`` run times per key."""
    done = pd.concat([prior, batch]).drop_duplicates("job_id").sort_values("end")
    hist: dict[Hashable, deque[int]] = defaultdict(lambda: deque(maxlen=HISTORY))
    ends, runs = done["end"].to_numpy(), done["runtime"].to_numpy()
    rows = list(done.itertuples(index=False))
    k = 0
    out = np.empty(len(batch), np.int64)
    for i, job in enumerate(batch.sort_values("submit").itertuples(index=False)):
        while k < len(rows) and ends[k] <= job.submit:
            for key in keys(rows[k]):  # type: ignore[arg-type]
                hist[key].append(max(1, int(runs[k])))
            k += 1
        pred = int(job.walltime)
        for key in keys(job):  # type: ignore[arg-type]
            h = hist.get(key)
            if h:
                pred = round(sum(h) / len(h))
                break
        out[i] = max(1, min(int(job.walltime), pred) if cap else pred)
    return out


def study(batches: list[tuple[str, Path]]) -> pd.DataFrame:
    """Accuracy of every predictor on every batch, and pooled."""
    log = pd.concat([table(load_workload(p)) for p in list_eurora_batches(TRACES)])
    log = log.drop_duplicates("job_id")
    rows, pooled = [], defaultdict(lambda: ([], []))
    plat = resolve_platform("eurora")
    for name, path in batches:
        wl = load_workload(path)
        batch = table(wl)[hostable(wl, plat)].sort_values("submit")
        empty = batch.iloc[:0]
        actual = np.minimum(batch["runtime"].to_numpy(), batch["walltime"].to_numpy())
        preds = {
            "walltime": batch["walltime"].to_numpy(),
            "heuristic-cold": replay(batch, empty, user_keys, True),
            "heuristic-warm": replay(batch, log, user_keys, True),
            "heuristic-warm-nocap": replay(batch, log, user_keys, False),
            "request-key-cold": replay(batch, empty, request_keys, True),
            "request-key-warm": replay(batch, log, request_keys, True),
        }
        for pred_name, pred in preds.items():
            acc = prediction_accuracy(actual, pred)
            rows.append({"batch": name, "predictor": pred_name, **acc})
            pooled[pred_name][0].append(actual)
            pooled[pred_name][1].append(pred)
    for pred_name, (a, p) in pooled.items():
        acc = prediction_accuracy(np.concatenate(a), np.concatenate(p))
        rows.append({"batch": "POOLED", "predictor": pred_name, **acc})
    out = pd.DataFrame(rows)
    out["mae_min"] = out["mae_s"] / 60
    return out[["batch", "predictor", "jobs", "mae_min", "under_rate", "over_rate",
                "exact_rate", "within_25pct"]]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results", type=Path, help="results.csv of the CP campaign")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    out = study(complete_batches(args.results))
    out.to_csv(args.out, index=False, float_format="%.4f")
    pooled = out[out["batch"] == "POOLED"].set_index("predictor")
    print(pooled[["jobs", "mae_min", "under_rate", "over_rate"]].round(3).to_string())


if __name__ == "__main__":
    main()
