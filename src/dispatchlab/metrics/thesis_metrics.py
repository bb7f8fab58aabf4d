"""The metrics of Bridi's thesis Tables 4.13–4.15 (§4.5): WQT, AQ, NL, TR, WT, AO, MO, %O.

All but the overhead ones come from the per-job table (waits against the expected
waiting time ``ewt`` of each job's queue); the overhead ones from the decision times the
engine measured. Definitions (thesis §4.5, SPEC §2):

- WQT  weighted queue time  Σ wᵢ / ewtᵢ
- AQ   average time in queue  Σ wᵢ / n  (s)
- NL   number of late jobs  #{wᵢ > ewtᵢ}
- TR   tardiness  Σ max(0, wᵢ − ewtᵢ)  (s)
- WT   weighted tardiness  Σ max(0, wᵢ − ewtᵢ) / ewtᵢ
- AO   average overhead: mean decision time (s)
- MO   maximum overhead: longest decision (s)
- %O   overhead share of the test: total decision time / makespan × 100

The thesis measured overhead on a PBS-driven VM per scheduling cycle (whole seconds in
the PBS logs); ours is the CPU time of each dispatcher call in the simulator.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

#: Thesis metric → (summary key, factor to thesis units).
SUMMARY_KEYS: dict[str, tuple[str, float]] = {
    "WQT": ("weighted_queue_time", 1.0),
    "AQ": ("mean_wait", 1.0),
    "NL": ("late_jobs", 1.0),
    "TR": ("total_tardiness", 1.0),
    "WT": ("weighted_tardiness", 1.0),
    "AO": ("dispatch_time_mean_ms", 1e-3),
    "MO": ("dispatch_time_max_ms", 1e-3),
    "%O": ("dispatch_overhead_pct", 1.0),
}
NAMES = tuple(SUMMARY_KEYS)

#: The thesis's numbers: test → metric → {PBSFifo, PBSWalltime, CPModel}.
THESIS: dict[str, dict[str, dict[str, float]]] = {
    "4 nodes / 99 jobs (Table 4.13)": {
        "WQT": {"PBSFifo": 347.583, "PBSWalltime": 170.686, "CPModel": 168.032},
        "AQ": {"PBSFifo": 31011.7, "PBSWalltime": 35637.6, "CPModel": 30025.7},
        "NL": {"PBSFifo": 55, "PBSWalltime": 52, "CPModel": 45},
        "TR": {"PBSFifo": 1954690, "PBSWalltime": 2349450, "CPModel": 1832660},
        "WT": {"PBSFifo": 283.219, "PBSWalltime": 110.034, "CPModel": 105.985},
        "AO": {"PBSFifo": 0.22, "PBSWalltime": 1.21, "CPModel": 3.27},
        "MO": {"PBSFifo": 1, "PBSWalltime": 4, "CPModel": 5},
        "%O": {"PBSFifo": 0.1, "PBSWalltime": 0.3, "CPModel": 0.4},
    },
    "65 nodes / 330 jobs (Table 4.14)": {
        "WQT": {"PBSFifo": 152.94, "PBSWalltime": 137.74, "CPModel": 119.77},
        "AQ": {"PBSFifo": 10216.7, "PBSWalltime": 9465.42, "CPModel": 8053.09},
        "NL": {"PBSFifo": 65, "PBSWalltime": 60, "CPModel": 46},
        "TR": {"PBSFifo": 1298810, "PBSWalltime": 1223690, "CPModel": 1003970},
        "WT": {"PBSFifo": 60.03, "PBSWalltime": 55.97, "CPModel": 46.40},
        "AO": {"PBSFifo": 0.47, "PBSWalltime": 3.14, "CPModel": 11.45},
        "MO": {"PBSFifo": 3, "PBSWalltime": 10, "CPModel": 19},
        "%O": {"PBSFifo": 0.33, "PBSWalltime": 1.61, "CPModel": 6.78},
    },
    "65 nodes / 700 jobs (Table 4.15)": {
        "WQT": {"PBSFifo": 1034.2, "PBSWalltime": 853.681, "CPModel": 2441.3},
        "AQ": {"PBSFifo": 32066.1, "PBSWalltime": 27046.2, "CPModel": 34816.3},
        "NL": {"PBSFifo": 234, "PBSWalltime": 200, "CPModel": 376},
        "TR": {"PBSFifo": 16798300, "PBSWalltime": 13693000, "CPModel": 16774800},
        "WT": {"PBSFifo": 776.405, "PBSWalltime": 623.287, "CPModel": 2013.18},
        "AO": {"PBSFifo": 1.02, "PBSWalltime": 15.47, "CPModel": 34.82},
        "MO": {"PBSFifo": 11, "PBSWalltime": 57, "CPModel": 120},
        "%O": {"PBSFifo": 0.69, "PBSWalltime": 8.8, "CPModel": 18.95},
    },
}


def thesis_metrics(summary: Mapping[str, Any]) -> dict[str, float]:
    """WQT … %O of one run, in the thesis's units, from its summary dictionary."""
    return {name: float(summary[key]) * f for name, (key, f) in SUMMARY_KEYS.items()}


def thesis_metrics_from_jobs(
    jobs: pd.DataFrame, decision_seconds: np.ndarray | None = None
) -> dict[str, float]:
    """The same metrics recomputed from a per-job table (``wait``, ``ewt``, ``rejected``,
    ``submit``, ``end``) and the decision times in seconds (a cross-check of the summary)."""
    ran = jobs[~jobs["rejected"]]
    wait = ran["wait"].to_numpy(dtype=np.float64)
    ewt = ran["ewt"].to_numpy(dtype=np.float64)
    late = np.maximum(0.0, wait - ewt)
    dec = np.zeros(0) if decision_seconds is None else np.asarray(decision_seconds, float)
    span = max(float(ran["end"].max() - jobs["submit"].min()), 1.0) if len(ran) else 1.0
    return {
        "WQT": float((wait / ewt).sum()),
        "AQ": float(wait.mean()) if len(wait) else 0.0,
        "NL": float((wait > ewt).sum()),
        "TR": float(late.sum()),
        "WT": float((late / ewt).sum()),
        "AO": float(dec.mean()) if len(dec) else 0.0,
        "MO": float(dec.max()) if len(dec) else 0.0,
        "%O": float(dec.sum() / span * 100.0),
    }


def thesis_table(results: pd.DataFrame, by: str = "dispatcher") -> pd.DataFrame:
    """Metrics × groups (means over the rows of each group) from a results table whose
    columns include the summary keys (``dispatchlab results``' ``results.csv``)."""
    cols = {name: results[key] * f for name, (key, f) in SUMMARY_KEYS.items()}
    frame = pd.DataFrame(cols)
    frame[by] = results[by].to_numpy()
    return frame.groupby(by, sort=False).mean().T


def relative_to(table: pd.DataFrame, base: str) -> pd.DataFrame:
    """Improvement over column ``base`` in % (positive = better, all metrics lower-is-better;
    the thesis's Figures 4.6–4.10 convention)."""
    ref = table[base].replace(0, np.nan)
    return table.apply(lambda col: (ref - col) / ref * 100.0)
