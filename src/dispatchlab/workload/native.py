"""dispatchlab's own workload tables: Parquet and CSV files that round-trip exactly.

Both hold one row per job, in workload order, with readable columns::

    job_id submit walltime runtime units req_<resource>... queue user app power est lst
    logged_wait [array] [hetjob] [min_units max_units alpha data] [checkpoint]

(times in s, memory in MB, power in W, NaN = unknown power, -1 = unknown est/lst/wait).
What a row cannot hold travels as one JSON document (:func:`workload_header`): the
resource order, every queue with its expected wait (unused ones too), the user and app
name tables in their order, ``origin_unix``, ``timezone``, the original ``source`` and
``meta``. Parquet keeps it in the file's schema metadata (key ``dispatchlab.workload``);
CSV in a sidecar ``<file>.meta.json`` beside it (:func:`csv_sidecar`).

Reading a table with that document gives back the same workload: equal columns, name
tables and attributes (``meta`` as JSON sees it: tuples come back as lists); only
``source`` becomes the path read (the original is in the document). Tables without it
(written by other tools, or a results ``jobs`` table) are read by column name:
``submit``, ``walltime`` (or ``requested``), ``runtime`` (or ``actual_runtime``) and at
least one ``req_<resource>`` are required; ``units`` defaults to 1, ``job_id`` to 1..n,
an ``ewt`` column sets the queues' expected waits; other columns are ignored (listed in
``meta["ignored_columns"]``).
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from dispatchlab.atomic_output import atomic_output
from dispatchlab.errors import WorkloadError
from dispatchlab.workload.input_file import input_file
from dispatchlab.workload.workload import Queue, Workload

#: Schema-metadata key (Parquet) under which the workload document is stored.
METADATA_KEY = b"dispatchlab.workload"
#: Version of the workload document; bumped on incompatible changes.
FORMAT_VERSION = 1

_INT_COLUMNS = ("job_id", "submit", "walltime", "runtime", "units")
_TAIL_INT_COLUMNS = ("est", "lst", "logged_wait")
_LABEL_COLUMNS = ("queue", "user", "app")
_OPTIONAL_GROUP_COLUMNS = ("array", "hetjob")
#: Execution columns (malleable jobs, checkpoints), written only when a job uses them.
_EXECUTION_COLUMNS = ("min_units", "max_units", "alpha", "data", "checkpoint")
_ALIASES = {"requested": "walltime", "actual_runtime": "runtime"}


def workload_header(wl: Workload) -> dict[str, Any]:
    """The JSON document of everything a row does not hold."""
    for what, names in (
        ("queue", [q.name for q in wl.queues]),
        ("user", list(wl.users)),
        ("app", list(wl.apps)),
    ):
        if len(set(names)) != len(names):
            dup = next(n for n in names if names.count(n) > 1)
            raise WorkloadError(
                f"{what} name '{dup}' appears twice in the name table; a "
                f"table file cannot tell them apart",
                source=wl.source,
                field=what,
            )
    return {
        "format_version": FORMAT_VERSION,
        "resources": list(wl.resources),
        "queues": [{"name": q.name, "ewt": int(q.ewt)} for q in wl.queues],
        "users": list(wl.users),
        "apps": list(wl.apps),
        "origin_unix": wl.origin_unix,
        "timezone": wl.timezone,
        "source": wl.source,
        "meta": _jsonable(dict(wl.meta)),
    }


def workload_frame(wl: Workload) -> pd.DataFrame:
    """The per-job columns written to Parquet and CSV (labels as strings)."""
    data: dict[str, Any] = {name: getattr(wl, name) for name in _INT_COLUMNS}
    for r, name in enumerate(wl.resources):
        data[f"req_{name}"] = wl.req[:, r]
    for col, table in (
        ("queue", [q.name for q in wl.queues]),
        ("user", wl.users),
        ("app", wl.apps),
    ):
        labels = np.array(table, dtype=object) if table else np.array(["-"], dtype=object)
        data[col] = labels[getattr(wl, col)] if wl.n_jobs else np.array([], dtype=object)
    data["power"] = wl.power
    for name in _TAIL_INT_COLUMNS:
        data[name] = getattr(wl, name)
    for name in _OPTIONAL_GROUP_COLUMNS:  # written only when used (older files stay equal)
        if (getattr(wl, name) >= 0).any():
            data[name] = getattr(wl, name)
    if wl.is_malleable:
        for name in _EXECUTION_COLUMNS[:4]:
            data[name] = getattr(wl, name)
    if (wl.checkpoint > 0).any():
        data["checkpoint"] = wl.checkpoint
    return pd.DataFrame(data)


# ----------------------------------------------------------------------------- Parquet


def write_parquet(wl: Workload, path: str | Path) -> Path:
    """Write ``wl`` as a Parquet table (workload document in the schema metadata)."""
    p = Path(path)
    header = workload_header(wl)
    table = pa.Table.from_pandas(workload_frame(wl), preserve_index=False)
    meta = dict(table.schema.metadata or {})
    meta[METADATA_KEY] = json.dumps(header, ensure_ascii=False).encode("utf-8")
    with atomic_output(p) as tmp:
        pq.write_table(table.replace_schema_metadata(meta), tmp)
    return p


def load_parquet(path: str | Path) -> Workload:
    """Read a Parquet workload table (exact when written by :func:`write_parquet`)."""
    p = input_file(path)
    try:
        table = pq.read_table(p)
    except (pa.ArrowException, OSError) as exc:
        raise WorkloadError(f"not a readable Parquet file: {exc}", source=str(p)) from None
    raw = (table.schema.metadata or {}).get(METADATA_KEY)
    header = _parse_header(raw.decode("utf-8"), str(p)) if raw is not None else None
    return _from_frame(table.to_pandas(), header, str(p))


# --------------------------------------------------------------------------------- CSV


def csv_sidecar(path: str | Path) -> Path:
    """The JSON document written beside a CSV table: ``<file>.meta.json``."""
    p = Path(path)
    return p.with_name(p.name + ".meta.json")


def write_csv(wl: Workload, path: str | Path) -> Path:
    """Write ``wl`` as CSV (``.csv`` or ``.csv.gz``) plus its ``.meta.json`` sidecar."""
    p = Path(path)
    header = workload_header(wl)
    # quoting every string keeps names with line breaks ("\r") and "NA"-like text intact
    # both written before either is renamed (the table first, then its sidecar)
    with atomic_output(csv_sidecar(p)) as side, atomic_output(p) as tmp:
        workload_frame(wl).to_csv(tmp, index=False, na_rep="", quoting=csv.QUOTE_NONNUMERIC)
        side.write_text(json.dumps(header, indent=1, ensure_ascii=False) + "\n",
                        encoding="utf-8")
    return p


def load_csv(path: str | Path) -> Workload:
    """Read a CSV workload table; exact when its ``.meta.json`` sidecar is present."""
    p = input_file(path)
    side = csv_sidecar(p)
    header = _parse_header(side.read_text(encoding="utf-8"), str(side)) if side.is_file() else None
    try:
        if header is not None:
            dtypes: dict[str, Any] = {c: str for c in _LABEL_COLUMNS}
            df = pd.read_csv(
                p, dtype=dtypes, keep_default_na=False, na_values={"power": ["", "nan", "NaN"]}
            )
        else:
            df = pd.read_csv(p)
    except UnicodeDecodeError:  # the line and byte, not the codec's words
        from dispatchlab.input_files import decode_utf8, read_bytes

        def fail(why: str) -> WorkloadError:
            return WorkloadError(why, source=str(p))

        decode_utf8(read_bytes(p, fail, limit=None), fail)
        raise fail("not UTF-8 text") from None
    except (ValueError, pd.errors.ParserError) as exc:
        raise WorkloadError(f"not a readable CSV table: {exc}", source=str(p)) from None
    return _from_frame(df, header, str(p))


# ------------------------------------------------------------------------------ shared


def _parse_header(text: str, source: str) -> dict[str, Any]:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise WorkloadError(f"workload document is not valid JSON: {exc}", source=source) from None
    if not isinstance(doc, dict):
        raise WorkloadError("workload document must be a JSON object", source=source)
    version = doc.get("format_version")
    if version != FORMAT_VERSION:
        raise WorkloadError(
            f"workload document version {version!r} is not supported "
            f"(this dispatchlab reads version {FORMAT_VERSION})",
            source=source,
            field="format_version",
        )
    for key, kind in (
        ("resources", list),
        ("queues", list),
        ("users", list),
        ("apps", list),
        ("meta", dict),
    ):
        if not isinstance(doc.get(key), kind):
            raise WorkloadError(f"missing or not a {kind.__name__}", source=source, field=key)
    return doc


def _from_frame(df: pd.DataFrame, header: Mapping[str, Any] | None, source: str) -> Workload:
    if header is None:
        return _from_foreign_frame(df, source)
    resources = tuple(str(r) for r in header["resources"])
    needed = [
        *_INT_COLUMNS,
        *(f"req_{r}" for r in resources),
        *_LABEL_COLUMNS,
        "power",
        *_TAIL_INT_COLUMNS,
    ]
    missing = [c for c in needed if c not in df.columns]
    if missing:
        raise WorkloadError(
            f"column missing from a dispatchlab table: {missing[0]}",
            source=source,
            field=missing[0],
        )
    try:
        queues = tuple(Queue(str(q["name"]), int(q["ewt"])) for q in header["queues"])
    except (KeyError, TypeError, ValueError):
        raise WorkloadError(
            "each queue needs a name and an integer ewt", source=source, field="queues"
        ) from None
    tables = {
        "queue": tuple(q.name for q in queues),
        "user": tuple(str(u) for u in header["users"]),
        "app": tuple(str(a) for a in header["apps"]),
    }
    codes = {col: _codes(df[col], tables[col], col, source) for col in _LABEL_COLUMNS}
    n = len(df)
    req = (
        np.column_stack([_int_column(df, f"req_{r}", source) for r in resources])
        if resources
        else np.zeros((n, 0), np.int64)
    ).reshape(n, len(resources))
    origin = header.get("origin_unix")
    wl = Workload(
        job_id=_int_column(df, "job_id", source),
        submit=_int_column(df, "submit", source),
        walltime=_int_column(df, "walltime", source),
        runtime=_int_column(df, "runtime", source),
        units=_int_column(df, "units", source),
        req=np.ascontiguousarray(req, dtype=np.int64),
        resources=resources,
        queue=codes["queue"],
        queues=queues,
        user=codes["user"],
        users=tables["user"],
        app=codes["app"],
        apps=tables["app"],
        power=pd.to_numeric(df["power"], errors="coerce").to_numpy(np.float64),
        est=_int_column(df, "est", source),
        lst=_int_column(df, "lst", source),
        logged_wait=_int_column(df, "logged_wait", source),
        **_optional_columns(df, source),
        origin_unix=_origin(origin, source),
        timezone=header.get("timezone"),
        source=source,
        meta=dict(header["meta"]),
    )
    order = np.lexsort((wl.job_id, wl.submit))
    if not np.array_equal(order, np.arange(n)):
        raise WorkloadError(
            "rows are not in submit order (was the table edited?)", source=source, field="submit"
        )
    wl.validate()
    return wl


def _from_foreign_frame(df: pd.DataFrame, source: str) -> Workload:
    df = df.rename(
        columns={k: v for k, v in _ALIASES.items() if k in df.columns and v not in df.columns}
    )
    for col in ("submit", "walltime", "runtime"):
        if col not in df.columns:
            raise WorkloadError(
                f"required column '{col}' is missing (found: {', '.join(map(str, df.columns))})",
                source=source,
                field=col,
            )
    req_cols = [c for c in df.columns if str(c).startswith("req_") and len(str(c)) > 4]
    if not req_cols:
        raise WorkloadError(
            "no per-unit request column (req_cores, req_mem, ...)", source=source, field="req_cores"
        )
    n = len(df)
    used = {
        "submit",
        "walltime",
        "runtime",
        "units",
        "job_id",
        "ewt",
        "power",
        *_LABEL_COLUMNS,
        *_TAIL_INT_COLUMNS,
        *_OPTIONAL_GROUP_COLUMNS,
        *_EXECUTION_COLUMNS,
        *req_cols,
    }
    queues: list[Queue] | None = None
    if "ewt" in df.columns and "queue" in df.columns:
        ewt = pd.DataFrame({"q": df["queue"].astype(str), "e": df["ewt"]}).drop_duplicates("q")
        queues = [Queue(q, int(e)) for q, e in zip(ewt["q"], ewt["e"], strict=True)]

    def labels(col: str) -> list[str] | None:
        if col not in df.columns:
            return None
        return [
            ("-" if (isinstance(v, float) and math.isnan(v)) else str(v)) for v in df[col].tolist()
        ]

    meta: dict[str, Any] = {"format": "table"}
    ignored = [str(c) for c in df.columns if c not in used]
    if ignored:
        meta["ignored_columns"] = ignored
    return Workload.from_columns(
        job_id=_int_column(df, "job_id", source) if "job_id" in df.columns else None,
        submit=_int_column(df, "submit", source),
        walltime=_int_column(df, "walltime", source),
        runtime=_int_column(df, "runtime", source),
        units=_int_column(df, "units", source) if "units" in df.columns else np.ones(n, np.int64),
        req={str(c)[4:]: _int_column(df, str(c), source) for c in req_cols},
        queue=labels("queue"),
        queues=queues,
        user=labels("user"),
        app=labels("app"),
        power=(
            pd.to_numeric(df["power"], errors="coerce").to_numpy(np.float64)
            if "power" in df.columns
            else None
        ),
        est=_int_column(df, "est", source) if "est" in df.columns else None,
        lst=_int_column(df, "lst", source) if "lst" in df.columns else None,
        logged_wait=(
            _int_column(df, "logged_wait", source) if "logged_wait" in df.columns else None
        ),
        **_optional_columns(df, source),
        source=source,
        meta=meta,
    )


def _optional_columns(df: pd.DataFrame, source: str) -> dict[str, Any]:
    """The job-array, heterogeneous-job and execution columns the table has."""
    out: dict[str, Any] = {}
    for col in (*_OPTIONAL_GROUP_COLUMNS, *_EXECUTION_COLUMNS):
        if col not in df.columns:
            continue
        if col in ("alpha", "data"):
            values = pd.to_numeric(df[col], errors="coerce").to_numpy(np.float64)
            if not np.isfinite(values).all():
                row = int(np.flatnonzero(~np.isfinite(values))[0])
                raise WorkloadError(f"row {row + 1}: not a number: {df[col].iloc[row]!r}",
                                    source=source, field=col)
            out[col] = values
        else:
            out[col] = _int_column(df, col, source)
    return out


def _int_column(df: pd.DataFrame, col: str, source: str) -> np.ndarray[Any, np.dtype[np.int64]]:
    series = df[col]
    if pd.api.types.is_integer_dtype(series.dtype):
        return np.ascontiguousarray(series.to_numpy(np.int64))
    values = pd.to_numeric(series, errors="coerce").to_numpy(np.float64)
    bad = ~np.isfinite(values) | (values != np.rint(values))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise WorkloadError(
            f"row {row + 1}: not an integer: {series.iloc[row]!r}", source=source, field=col
        )
    return np.ascontiguousarray(values.astype(np.int64))


def _codes(
    values: pd.Series, table: Sequence[str], col: str, source: str
) -> np.ndarray[Any, np.dtype[np.int64]]:
    if not len(values):
        return np.zeros(0, np.int64)
    if len(set(table)) != len(table):
        raise WorkloadError("name table has duplicates", source=source, field=col)
    position = {name: k for k, name in enumerate(table)}
    codes = np.fromiter(
        (position.get(v, -1) for v in values.astype(str).tolist()),
        dtype=np.int64,
        count=len(values),
    )
    if (codes < 0).any():
        row = int(np.flatnonzero(codes < 0)[0])
        raise WorkloadError(
            f"row {row + 1}: '{values.iloc[row]}' is not in the {col} table",
            source=source,
            field=col,
        )
    return codes


def _jsonable(value: Any) -> Any:
    """``value`` with numpy scalars/arrays, tuples and paths turned into JSON types."""
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Path):
        return str(value)
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def _origin(value: object, source: str) -> int | None:
    """The sidecar's ``origin_unix`` as whole seconds (a one-line error otherwise)."""
    if value is None:
        return None
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        number = math.nan
    if not math.isfinite(number) or number != int(number) or not 0 <= number <= 10**11:
        raise WorkloadError(f"must be whole Unix seconds between 0 and 1e11, got {value!r}",
                            source=source, field="origin_unix")
    return int(number)
