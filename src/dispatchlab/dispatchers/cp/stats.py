"""Per-decision solver statistics and their run-level summary.

One row per decision point with a non-empty queue: how the decision was made (``path``),
the solver status, times, objective values and the model size in the columns of the
paper's Table 2 (intervals, requested and available resources).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

#: How a decision was made.
PATHS = ("empty", "no-start", "greedy-optimal", "solver", "fallback", "infeasible")

_COLUMNS = (
    "time",
    "queue",
    "model_jobs",
    "dropped",
    "running",
    "intervals",
    "optional",
    "cumulatives",
    "req_res",
    "avl_res",
    "path",
    "status",
    "runs",
    "build_ms",
    "solve_ms",
    "det_time",
    "objective",
    "greedy_objective",
    "bound",
    "started",
    "postponed",
    "fallback",
    "warm",
    "kept_greedy",
    "error",
)


class DecisionLog:
    """Column-wise log of the decisions of one run."""

    def __init__(self) -> None:
        self.cols: dict[str, list[Any]] = {c: [] for c in _COLUMNS}
        self.wall_limit_hits = 0
        self.invalid_dropped = 0

    def add(self, row: dict[str, Any]) -> None:
        """Append one decision (missing columns are None)."""
        for c in _COLUMNS:
            self.cols[c].append(row.get(c))

    def __len__(self) -> int:
        return len(self.cols["time"])

    def summary(self) -> dict[str, Any]:
        """Counts per path and status, fallbacks, mean/max times and mean model sizes."""
        n = len(self)
        paths = Counter(self.cols["path"])
        statuses = Counter(s for s in self.cols["status"] if s)
        solved = [
            k for k in range(n) if self.cols["path"][k] in ("solver", "fallback", "infeasible")
        ]

        def col(name: str, rows: list[int]) -> np.ndarray:
            return np.array([self.cols[name][k] or 0 for k in rows], dtype=np.float64)

        out: dict[str, Any] = {
            "decisions": n,
            "paths": dict(paths),
            "statuses": dict(statuses),
            "solver_calls": len(solved),
            "fallbacks": int(sum(1 for f in self.cols["fallback"] if f)),
            "errors": int(sum(1 for e in self.cols["error"] if e)),
            "solver_crashes": int(sum(1 for e in self.cols["error"]
                                      if e and e.startswith("SolverCrash"))),
            "wall_limit_hits": self.wall_limit_hits,
            "invalid_dropped": self.invalid_dropped,
            "postponed_by_mapper": int(sum(p or 0 for p in self.cols["postponed"])),
            "warm_hints": int(sum(1 for w in self.cols["warm"] if w)),
            "kept_greedy": int(sum(1 for w in self.cols["kept_greedy"] if w)),
        }
        everyone = list(range(n))
        for name, rows, tag in ((("build_ms", solved, "solver")), (("solve_ms", solved, "solver"))):
            v = col(name, rows)
            out[f"{name}_mean_{tag}"] = float(v.mean()) if len(v) else 0.0
            out[f"{name}_max_{tag}"] = float(v.max()) if len(v) else 0.0
        for name in ("model_jobs", "intervals", "optional", "req_res", "avl_res", "queue"):
            v = col(name, everyone)
            out[f"mean_{name}"] = float(v.mean()) if n else 0.0
            w = col(name, solved)
            out[f"mean_{name}_solver"] = float(w.mean()) if len(w) else 0.0
        return out

    def table(self) -> dict[str, list[Any]]:
        """The raw columns (JSON-ready)."""
        return {c: list(v) for c, v in self.cols.items()}
