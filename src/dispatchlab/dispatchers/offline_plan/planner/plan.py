"""A plan: for each job of a chunk (e.g. a day), its planned start and node allocation.

The offline planner (:mod:`dispatchlab.dispatchers.offline_plan.planner.heuristic`, :mod:`.model`,
:mod:`.searches`)
produces a :class:`Plan`; the ``offline-plan`` dispatcher replays it in the engine and the
hybrid pipeline's profile extraction reads its utilization (:meth:`Plan.utilization`).

Times are integer seconds in the workload's time base. ``duration[k]`` is the length the
planner assumed for job ``job_ids[k]`` (its wall-time or its actual run time, see
:class:`PlanInstance`); ``alloc[k]`` is a tuple of ``(node, units)`` pairs, nodes
increasing, whose units add up to the job's units.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from dispatchlab.arrays import FloatArray, IntArray
from dispatchlab.atomic_output import atomic_output
from dispatchlab.errors import ConfigError

if TYPE_CHECKING:  # pandas is imported on use: listing the hybrid presets must not
    import pandas as pd

Alloc = tuple[tuple[int, int], ...]


@dataclass(frozen=True, eq=False)
class Plan:
    """Planned start and placement per job, with what it was made for and how.

    ``job_ids`` are the workload's ``job_id`` values; ``rows`` the workload rows (engine
    job indices) of the same jobs. ``cores_per_unit[k]`` is the cores one unit of job ``k``
    asks (for utilization); ``power[k]`` the job's average power in W (0 if unknown).
    ``objective`` is the plan's profit (currency) when it was evaluated, ``stats`` the
    search's statistics (JSON-ready), ``meta`` what it was made for (workload source,
    platform name and size, duration kind, search, seed).
    """

    job_ids: IntArray
    rows: IntArray
    starts: IntArray
    duration: IntArray
    alloc: tuple[Alloc, ...]
    cores_per_unit: IntArray
    total_cores: int
    power: FloatArray = field(default_factory=lambda: np.empty(0, np.float64))
    objective: float | None = None
    stats: Mapping[str, Any] = field(default_factory=dict)
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        n = len(self.job_ids)
        for name in ("rows", "starts", "duration", "cores_per_unit"):
            arr = np.asarray(getattr(self, name), dtype=np.int64)
            if arr.shape != (n,):
                raise ConfigError(f"plan column {name} has {arr.shape} values for {n} jobs",
                                  field=name)
            object.__setattr__(self, name, arr)
        power = np.asarray(self.power, dtype=np.float64)
        if power.size == 0:
            power = np.zeros(n)
        if power.shape != (n,):
            raise ConfigError(f"plan column power has {power.shape} values for {n} jobs",
                              field="power")
        object.__setattr__(self, "power", power)
        object.__setattr__(self, "job_ids", np.asarray(self.job_ids, dtype=np.int64))
        if len(self.alloc) != n:
            raise ConfigError(f"plan has {len(self.alloc)} allocations for {n} jobs",
                              field="alloc")
        object.__setattr__(self, "alloc", tuple(tuple((int(a), int(b)) for a, b in al)
                                                for al in self.alloc))

    def __len__(self) -> int:
        return len(self.job_ids)

    @property
    def ends(self) -> IntArray:
        """Planned end of each job (start + assumed duration)."""
        return self.starts + self.duration

    @property
    def units(self) -> IntArray:
        """Units placed per job."""
        return np.array([sum(u for _, u in al) for al in self.alloc], dtype=np.int64)

    @property
    def makespan(self) -> int:
        """Last planned end (0 for an empty plan)."""
        return int(self.ends.max()) if len(self) else 0

    def to_frame(self) -> pd.DataFrame:
        """One row per job: job_id, row, start, end, duration, units, nodes, counts."""
        import pandas as pd

        return pd.DataFrame({
            "job_id": self.job_ids,
            "row": self.rows,
            "start": self.starts,
            "end": self.ends,
            "duration": self.duration,
            "units": self.units,
            "cores_per_unit": self.cores_per_unit,
            "power": self.power,
            "nodes": [[n for n, _ in al] for al in self.alloc],
            "counts": [[u for _, u in al] for al in self.alloc],
        })

    def utilization(self, step_s: int, start: int | None = None,
                    end: int | None = None) -> pd.DataFrame:
        """Fraction of the machine's cores busy per ``step_s`` bin (time-weighted mean
        over the bin), from ``start`` (default: first planned start, floored to the step)
        to ``end`` (default: makespan). Columns: time (bin start), utilization."""
        import pandas as pd

        if step_s <= 0:
            raise ConfigError(f"step must be > 0 s, got {step_s}", field="step_s")
        if not len(self):
            return pd.DataFrame({"time": np.empty(0, np.int64),
                                 "utilization": np.empty(0)})
        t0 = int(self.starts.min()) // step_s * step_s if start is None else int(start)
        t1 = self.makespan if end is None else int(end)
        nbins = max(1, -(-(t1 - t0) // step_s))
        edges = t0 + step_s * np.arange(nbins + 1, dtype=np.int64)
        cores = (self.units * self.cores_per_unit).astype(np.float64)
        busy = np.zeros(nbins)
        for s, e, c in zip(self.starts, self.ends, cores, strict=True):
            lo = np.clip(edges[:-1], s, e)
            hi = np.clip(edges[1:], s, e)
            busy += c * (hi - lo)
        return pd.DataFrame({"time": edges[:-1],
                             "utilization": busy / (step_s * float(self.total_cores))})

    def with_result(self, objective: float | None, stats: Mapping[str, Any]) -> Plan:
        """The same plan with its objective and statistics set."""
        return Plan(self.job_ids, self.rows, self.starts, self.duration, self.alloc,
                    self.cores_per_unit, self.total_cores, self.power, objective,
                    dict(stats), self.meta)

    def save(self, path: str) -> None:
        """Write the plan as Parquet (``.parquet``) or CSV, with objective, stats and meta
        as JSON in the file (Parquet metadata) or a ``.json`` sidecar (CSV)."""
        import json

        frame = self.to_frame()
        header = {"objective": self.objective, "stats": dict(self.stats),
                  "meta": dict(self.meta), "total_cores": self.total_cores}
        text = json.dumps(header, default=_json_default, sort_keys=True)
        if path.endswith(".parquet"):
            import pyarrow as pa
            import pyarrow.parquet as pq

            table = pa.Table.from_pandas(frame, preserve_index=False)
            meta = dict(table.schema.metadata or {})
            meta[b"dispatchlab.plan"] = text.encode()
            with atomic_output(path) as tmp:
                pq.write_table(table.replace_schema_metadata(meta), tmp)
        else:
            out = frame.copy()
            out["nodes"] = [" ".join(map(str, v)) for v in out["nodes"]]
            out["counts"] = [" ".join(map(str, v)) for v in out["counts"]]
            # both written before either is renamed (the table first, then its sidecar)
            with atomic_output(path + ".json") as side, atomic_output(path) as tmp:
                out.to_csv(tmp, index=False)
                side.write_text(text, encoding="utf-8")


def load_plan(path: str) -> Plan:
    """A plan written by :meth:`Plan.save`; a malformed file is a :class:`ConfigError`
    naming the file and the missing or bad column."""
    import json

    import pandas as pd

    try:
        if path.endswith(".parquet"):
            import pyarrow.parquet as pq

            table = pq.read_table(path)
            raw = (table.schema.metadata or {}).get(b"dispatchlab.plan", b"{}")
            header = json.loads(raw.decode())
            frame = table.to_pandas()
            nodes = [list(map(int, v)) for v in frame["nodes"]]
            counts = [list(map(int, v)) for v in frame["counts"]]
        else:
            frame = pd.read_csv(path, keep_default_na=False)
            try:
                with open(path + ".json", encoding="utf-8") as fh:
                    header = json.load(fh)
            except FileNotFoundError:
                header = {}
            nodes = [list(map(int, str(v).split())) for v in frame["nodes"]]
            counts = [list(map(int, str(v).split())) for v in frame["counts"]]
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: cannot read plan ({exc})", field="plan") from None
    except KeyError as exc:
        raise ConfigError(f"{path}: plan lacks column {exc}", field="plan") from None
    for col in ("job_id", "row", "start", "duration", "cores_per_unit"):
        if col not in frame.columns:
            raise ConfigError(f"{path}: plan lacks column '{col}'", field="plan")
    for k, (nd, ct) in enumerate(zip(nodes, counts, strict=True)):
        if len(nd) != len(ct) or not nd:
            raise ConfigError(f"{path}: line {k + 2}: job {frame['job_id'].iloc[k]}: nodes "
                              "and counts differ in length or are empty", field="alloc")
    total = header.get("total_cores")
    if total is None:
        raise ConfigError(f"{path}: plan header lacks total_cores", field="plan")
    return Plan(
        job_ids=frame["job_id"].to_numpy(np.int64),
        rows=frame["row"].to_numpy(np.int64),
        starts=frame["start"].to_numpy(np.int64),
        duration=frame["duration"].to_numpy(np.int64),
        alloc=tuple(tuple(zip(nd, ct, strict=True)) for nd, ct in zip(nodes, counts, strict=True)),
        cores_per_unit=frame["cores_per_unit"].to_numpy(np.int64),
        total_cores=int(total),
        power=frame["power"].to_numpy(np.float64) if "power" in frame else np.empty(0),
        objective=header.get("objective"),
        stats=header.get("stats", {}),
        meta=header.get("meta", {}),
    )


def concat_plans(plans: Sequence[Plan]) -> Plan:
    """One plan holding the jobs of several (e.g. one per day), in the given order."""
    if not plans:
        raise ConfigError("no plans to join", field="plan")
    allocs: list[Alloc] = []
    for p in plans:
        allocs.extend(p.alloc)
    objs = [p.objective for p in plans if p.objective is not None]
    return Plan(
        job_ids=np.concatenate([p.job_ids for p in plans]),
        rows=np.concatenate([p.rows for p in plans]),
        starts=np.concatenate([p.starts for p in plans]),
        duration=np.concatenate([p.duration for p in plans]),
        alloc=tuple(allocs),
        cores_per_unit=np.concatenate([p.cores_per_unit for p in plans]),
        total_cores=plans[0].total_cores,
        power=np.concatenate([p.power for p in plans]),
        objective=float(sum(objs)) if len(objs) == len(plans) else None,
        stats={"parts": [dict(p.stats) for p in plans]},
        meta=dict(plans[0].meta),
    )


def _json_default(value: Any) -> Any:
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    return repr(value)
