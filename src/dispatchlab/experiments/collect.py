"""Gather stored runs into tidy tables: one row per run, one row per run × job group."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from dispatchlab.atomic_output import atomic_output
from dispatchlab.errors import ConfigError
from dispatchlab.experiments.config import config_hash
from dispatchlab.experiments.store import RUNS_DIR, RunRecord, RunStore
from dispatchlab.stats.metrics import TIMING_KEYS

LABEL_COLUMNS = ("experiment", "workload", "window", "pricing", "platform", "dispatcher", "seed",
                 "block")


def _flat_summary(summary: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in summary.items():
        if k == "utilization_by_resource" and isinstance(v, dict):
            out.update({f"utilization_{r}": u for r, u in v.items()})
        elif k == "dispatcher_stats" and isinstance(v, dict):
            out.update(
                {
                    f"dispatcher_{s}": x
                    for s, x in v.items()
                    if isinstance(x, (int, float, str, bool))
                }
            )
        elif k == "profit" and isinstance(v, dict):
            at = v.get("at_last_submission", {})
            out.update({"profit": v["profit"], "mean_pue": v["mean_pue"],
                        "core_hours": v["core_hours"], "it_kwh": v["it_kwh"],
                        "cooling_kwh": v["cooling_kwh"], "profit_sub": at.get("profit"),
                        "mean_pue_sub": at.get("mean_pue")})
        elif k == "energy" and isinstance(v, dict):
            out.update(_energy_columns(v))
        elif k in ("power", "malleable") and isinstance(v, dict):
            out.update({f"{k}_{s}": x for s, x in v.items() if isinstance(x, (int, float))})
        elif isinstance(v, (int, float, str, bool)) or v is None:
            out[k] = v
    return out


def _energy_columns(energy: dict[str, Any]) -> dict[str, float]:
    """``energy_kwh`` and the run's energy per node state in kWh (``energy_busy_kwh``,
    ``energy_idle_kwh``, ``energy_other_kwh`` for off, booting, shutting down, down)."""
    out: dict[str, float] = {}
    if isinstance(energy.get("kwh"), (int, float)):
        out["energy_kwh"] = float(energy["kwh"])
    states = energy.get("per_state_j")
    if isinstance(states, dict):
        j = {k: float(v) for k, v in states.items() if isinstance(v, (int, float))}
        out["energy_busy_kwh"] = j.get("busy", 0.0) / 3.6e6
        out["energy_idle_kwh"] = j.get("idle", 0.0) / 3.6e6
        out["energy_other_kwh"] = sum(v for k, v in j.items()
                                      if k not in ("busy", "idle")) / 3.6e6
    return out


def _backend(worker: dict[str, Any]) -> Any:
    """The backend that ran a stored run (stores written before 2026-11-27 call it
    ``engine``)."""
    return worker.get("backend", worker.get("engine"))


def run_row(rec: RunRecord) -> dict[str, Any]:
    """The tidy row of one run: labels, parameters, configuration and summary metrics."""
    labels = rec.labels
    cfg = rec.doc["config"]
    row: dict[str, Any] = {"run": rec.key}
    row.update({k: labels.get(k) for k in LABEL_COLUMNS})
    row.update({f"param_{k}": v for k, v in labels.get("params", {}).items()})
    row.update(
        {
            "workload_path": cfg["workload"]["path"],
            "workload_skip": cfg["workload"].get("skip"),
            "workload_limit": cfg["workload"].get("limit"),
            "platform_spec": cfg["platform"],
            "dispatcher_spec": cfg["dispatcher"],
            "on_infeasible": cfg["on_infeasible"],
            **{f"pricing_{k}": v for k, v in (cfg["workload"].get("cooling") or {}).items()},
            "backend": _backend(rec.doc.get("worker", {})),
            "worker_host": rec.doc.get("worker", {}).get("host"),
            "run_seconds": rec.doc.get("worker", {}).get("seconds"),
        }
    )
    row.update(_flat_summary(rec.summary))
    row["result_digest"] = result_digest(rec.summary)
    return row


#: Summary entries that say how a run was computed, not what it gave: the dispatcher's own
#: counters and the loop that ran it (``engine`` in stores of before 2026-11-27); the same
#: run through the compiled or the general loop has one digest.
_NOT_RESULTS = frozenset({"dispatcher_stats", "loop", "engine"})


def result_digest(summary: dict[str, Any]) -> str:
    """Hash of what a run's simulation determined (its summary without host timings).

    Two runs with the same digest produced the same schedule metrics: seeds that change
    nothing (deterministic dispatchers on a fixed trace) are recognized by it. It covers
    every figure (a shared schedule under two prices gives two digests), so a summary key
    added or renamed in a later version changes it: across versions, compare runs by their
    ``schedule_digest`` (:mod:`dispatchlab.metrics.schedule_digest`) instead.
    """
    kept = {k: v for k, v in summary.items() if k not in TIMING_KEYS and k not in _NOT_RESULTS}
    return config_hash(json.loads(json.dumps(kept, default=str)))


def runs_table(records: Iterable[RunRecord]) -> pd.DataFrame:
    """One row per run (columns: labels, ``param_*``, configuration, summary metrics)."""
    rows = [run_row(r) for r in records]
    df = pd.DataFrame(rows)
    if len(df):
        df = df.sort_values(
            ["experiment", "workload", "window", "pricing", "platform", "seed", "dispatcher"],
            na_position="first",
            kind="stable",
        )
        df = df.reset_index(drop=True)
        if "window" in df:
            df["window"] = df["window"].astype("Int64")
    return df


def breakdown_table(records: Iterable[RunRecord]) -> pd.DataFrame:
    """One row per run × job group (duration class, queue) with the group's metrics."""
    parts = []
    for rec in records:
        b = rec.breakdown()
        if not len(b):
            continue
        labels = rec.labels
        for k in reversed(LABEL_COLUMNS):
            b.insert(0, k, labels.get(k))
        b.insert(0, "run", rec.key)
        parts.append(b)
    if not parts:
        return pd.DataFrame()
    df = pd.concat(parts, ignore_index=True)
    df["window"] = df["window"].astype("Int64")
    return df


def write_tables(
    root: str | Path, records: list[RunRecord], *, formats: Iterable[str] = ("parquet", "csv")
) -> list[Path]:
    """Write ``results.*`` and ``breakdown.*`` into ``root``; return the paths written."""
    out = Path(root)
    written = []
    for name, table in (("results", runs_table(records)), ("breakdown", breakdown_table(records))):
        for fmt in formats:
            path = out / f"{name}.{fmt}"
            if fmt not in ("parquet", "csv"):
                raise ValueError(f"unknown table format {fmt}")
            with atomic_output(path) as tmp:
                if fmt == "parquet":
                    table.to_parquet(tmp, index=False)
                else:
                    table.to_csv(tmp, index=False)
            written.append(path)
    return written


def stores_table(folder: str | Path) -> pd.DataFrame:
    """:func:`runs_table` of every experiment output folder directly under ``folder`` (those
    with a ``runs/`` folder), in name order, concatenated: the analyses of a study whose
    campaigns each write their own store. A ConfigError when none holds a finished run."""
    parts = []
    for root in sorted(Path(folder).glob("*")):
        if (root / RUNS_DIR).is_dir():
            table = runs_table(RunStore(root).records())
            if len(table):
                parts.append(table)
    if not parts:
        raise ConfigError(f"{folder}: no finished run in any store (run the campaigns first)",
                          field="store")
    return pd.concat(parts, ignore_index=True)


def read_results(folder: str | Path) -> pd.DataFrame:
    """The ``results`` table :func:`write_tables` wrote into ``folder``: the Parquet copy,
    else the CSV one."""
    path = Path(folder) / "results.parquet"
    return pd.read_parquet(path) if path.exists() else pd.read_csv(path.with_suffix(".csv"))
