"""Result folders, one per run, named by the run's hash and written atomically.

A run is written into ``runs/.tmp-<hash>-<random>/`` and renamed to ``runs/<hash>/`` only
when complete, so a folder named by a hash is always a finished run: a campaign killed at
any instant leaves at most temporary folders, which the next campaign removes.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from dispatchlab.atomic_output import atomic_output, sync_folder, write_failure
from dispatchlab.experiments.config import PlannedRun
from dispatchlab.experiments.worker import RunOutput
from dispatchlab.metrics.results import Results
from dispatchlab.provenance import json_default, versions

RUN_FILE = "run.json"
RUNS_DIR = "runs"
PLAN_FILE = "plan.json"
_TMP = ".tmp-"


@dataclass(frozen=True)
class RunRecord:
    """A finished run on disk: its folder and the parsed ``run.json``."""

    path: Path
    doc: dict[str, Any]

    @property
    def key(self) -> str:
        """The run's hash."""
        return str(self.doc["hash"])

    @property
    def labels(self) -> dict[str, Any]:
        """Display labels (experiment, workload, window, platform, dispatcher, seed, …)."""
        return dict(self.doc["labels"])

    @property
    def summary(self) -> dict[str, Any]:
        """The run's summary metrics."""
        return dict(self.doc["summary"])

    def jobs(self) -> pd.DataFrame:
        """Per-job table."""
        return pd.read_parquet(self.path / "jobs.parquet")

    def timeseries(self) -> pd.DataFrame:
        """Time series (used capacity, queue length, running jobs)."""
        return pd.read_parquet(self.path / "timeseries.parquet")

    def alloc(self) -> pd.DataFrame:
        """Exact placement: one row per (job, node)."""
        return pd.read_parquet(self.path / "alloc.parquet")

    def breakdown(self) -> pd.DataFrame:
        """Per-class / per-queue metrics."""
        return pd.DataFrame(self.doc.get("breakdown", []))


class RunStore:
    """The ``runs/`` folder of an experiment output directory."""

    def __init__(self, root: str | Path, *, csv: bool = True):
        self.root = Path(root)
        self.runs = self.root / RUNS_DIR
        self.csv = csv

    def path(self, key: str) -> Path:
        """Folder of run ``key``."""
        return self.runs / key

    def is_done(self, key: str) -> bool:
        """True when run ``key`` finished and was stored intact (see :func:`damage`)."""
        folder = self.runs / key
        return folder.is_dir() and damage(folder) is None

    def clean_temporary(self) -> int:
        """Remove half-written folders a killed campaign left behind; return how many.
        (A damaged run folder — missing or truncated ``run.json`` or table — is not done:
        the campaign runs it again and :meth:`save` replaces it.)"""
        if not self.runs.is_dir():
            return 0
        n = 0
        for p in self.runs.iterdir():
            if p.name.startswith(_TMP) and p.is_dir():
                shutil.rmtree(p, ignore_errors=True)
                n += 1
        return n

    def damaged(self) -> list[tuple[str, str]]:
        """Run folders that are not intact: (name, what is wrong)."""
        if not self.runs.is_dir():
            return []
        out = []
        for p in sorted(self.runs.iterdir()):
            if p.is_dir() and not p.name.startswith(_TMP):
                why = damage(p)
                if why is not None:
                    out.append((p.name, why))
        return out

    def save(self, run: PlannedRun, out: RunOutput, *, backend: str) -> bool:
        """Store ``out`` as run ``run.key``; False when it was already stored (a duplicate)."""
        key = run.key
        if out.key != key:
            raise ValueError(f"result {out.key} does not belong to run {key}")
        if self.is_done(key):
            return False
        if (self.runs / key).exists():  # damaged: replaced by this complete run
            shutil.rmtree(self.runs / key, ignore_errors=True)
        try:
            self.runs.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise write_failure(self.runs, exc) from None
        tmp = self.runs / f"{_TMP}{key}-{uuid.uuid4().hex[:8]}"
        try:
            res = Results(
                jobs=out.jobs, timeseries=out.timeseries, summary=out.summary, config=out.sim_config
            )
            res.tables = dict(out.tables)
            res.write_files(tmp, csv=self.csv)
            for name, data in out.files.items():  # the schedule in other layouts
                (tmp / name).write_bytes(data)
            out.alloc.to_parquet(tmp / "alloc.parquet", index=False)
            doc = {
                "hash": key,
                "config": run.config.to_dict(),
                "identity": run.config.identity(),
                "labels": asdict(run.labels),
                **_pricing_record(run),
                "summary": out.summary,
                "breakdown": out.breakdown.to_dict(orient="records"),
                "simulation": out.sim_config,
                "worker": {**out.worker, "backend": backend},
                "stored_by": versions(),
                "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
            }
            _write_json(tmp / RUN_FILE, doc)
            sync_folder(tmp)
            try:
                os.rename(tmp, self.runs / key)
            except OSError:
                if self.is_done(key):  # stored meanwhile by someone else: keep theirs
                    shutil.rmtree(tmp, ignore_errors=True)
                    return False
                raise
        except BaseException as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            if isinstance(exc, OSError):
                raise write_failure(self.runs / key, exc) from None
            raise
        sync_folder(self.runs)
        return True

    def write_plan(self, experiment: dict[str, Any], runs: list[PlannedRun]) -> Path:
        """Record the experiment and its planned runs (hash and labels) in ``plan.json``."""
        doc = {
            "experiment": experiment,
            "runs": [{"hash": r.key, "labels": asdict(r.labels)} for r in runs],
        }
        path = self.root / PLAN_FILE
        with atomic_output(path) as tmp:  # never a half-written plan
            tmp.write_text(json.dumps(doc, indent=2, default=str))
        return path

    def planned_dispatchers(self) -> list[str]:
        """Dispatcher labels in planned order (empty without ``plan.json``)."""
        path = self.root / PLAN_FILE
        if not path.is_file():
            return []
        runs = json.loads(path.read_text()).get("runs", [])
        return list(dict.fromkeys(r["labels"]["dispatcher"] for r in runs))

    def planned_labels(self) -> dict[str, dict[str, Any]]:
        """The labels ``plan.json`` gives each planned run (empty without a readable plan)."""
        path = self.root / PLAN_FILE
        try:
            runs = json.loads(path.read_text()).get("runs", [])
        except (OSError, ValueError):
            return {}
        return {str(r["hash"]): dict(r["labels"]) for r in runs}

    def records(self, keys: set[str] | None = None) -> Iterator[RunRecord]:
        """Finished runs (all, or only ``keys``), in folder-name order.

        A run the latest plan lists carries that plan's labels: names are not part of the
        hash, so a run stored under an earlier name (a renamed workload, or a single-scenario
        entry now a ``pricing`` scenario) is shown and grouped as the plan names it now;
        ``run.json`` keeps the labels it was stored with.
        """
        if not self.runs.is_dir():
            return
        planned = self.planned_labels()
        for p in sorted(self.runs.iterdir()):
            if p.name.startswith(_TMP) or not p.is_dir():
                continue
            if keys is not None and p.name not in keys:
                continue
            if damage(p) is not None:
                continue  # listed by damaged(); the next campaign re-runs it
            doc = json.loads((p / RUN_FILE).read_text())
            now, then = planned.get(p.name), doc.get("labels") or {}
            if now is not None and any(then.get(k) != v for k, v in now.items()):
                doc = {**doc, "labels": now, "stored_labels": then}
            yield RunRecord(p, doc)


def _pricing_record(run: PlannedRun) -> dict[str, Any]:
    """``{"pricing": {name, cooling, temperature, prices, it_power}}``: the scenario the run
    was priced with, as planned (``{seed}`` kept), for a priced run; else nothing."""
    cool = run.config.workload.cooling
    if cool is None:
        return {}
    return {"pricing": {"name": run.labels.pricing, **cool}}


#: Tables every stored run holds (Parquet files end with the 4-byte magic ``PAR1``).
_TABLES = ("jobs.parquet", "timeseries.parquet", "alloc.parquet")


def damage(folder: Path) -> str | None:
    """What is wrong with a run folder, or None when it is intact: ``run.json`` present,
    complete JSON naming the folder's hash, every table present and ending in its magic."""
    run_file = folder / RUN_FILE
    if not run_file.is_file():
        return f"no {RUN_FILE}"
    try:
        doc = json.loads(run_file.read_text(encoding="utf-8"))
    except (ValueError, OSError) as exc:
        return f"unreadable {RUN_FILE} ({type(exc).__name__})"
    if not isinstance(doc, dict) or doc.get("hash") != folder.name or "summary" not in doc:
        return f"{RUN_FILE} does not describe run {folder.name}"
    for name in _TABLES:
        path = folder / name
        try:
            with open(path, "rb") as fh:
                size = fh.seek(0, os.SEEK_END)
                fh.seek(max(size - 4, 0))
                tail = fh.read(4)
        except OSError:
            return f"no {name}"
        if size < 12 or tail != b"PAR1":
            return f"truncated {name}"
    return None


def _write_json(path: Path, doc: dict[str, Any]) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=2, default=json_default)
        fh.flush()
        os.fsync(fh.fileno())
