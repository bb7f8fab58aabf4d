"""Load (and save) a workload, detecting its format; generator specs count as workloads.

``load_workload`` accepts a file in any format below, a catalogued trace ``trace:NAME``
(see :mod:`dispatchlab.traces`), or a generator spec ``gen:<name>[:key=value,...]`` (see
:mod:`dispatchlab.workload.generators`), so a CLI ``--workload`` option takes any of them.
Formats are told apart by the file name, then by the content:

- ``swf``: ``.swf`` / ``.swf.gz``, or ``;`` header lines / 18 numeric fields;
- ``eurora``: ``.log_crypt``, or ``;``-separated lines with ``__`` markers;
- ``parquet``: ``.parquet``, or the ``PAR1`` magic;
- ``csv``: ``.csv`` / ``.csv.gz``;
- ``vcjobs``: the variable-capacity job files of Robert et al. (``id release length
  cores release|running`` lines; options ``start``, ``window``, ``checkpoint``);
- ``sacct``: Slurm ``sacct --parsable2`` exports (a ``|``-separated header naming JobID);
- ``sacct-json``: ``sacct --json`` exports (``.json`` with ``job_id`` entries);
- ``jobcomp``: Slurm's job completion log (``JobCompType=jobcomp/filetxt``: lines of
  ``JobId=… JobState=…`` pairs);
- ``pbs``: PBS Pro / OpenPBS / Torque accounting logs (``date;E;id;key=value`` lines);
- ``batsim``: Batsim workloads (``.json`` with ``nb_res`` / ``profiles``).

The accounting formats take :class:`~dispatchlab.workload.accounting.AccountingOptions`
(``timezone``, ``units``, ``cores_per_node``, ``skip_bad_lines``), Batsim
:class:`~dispatchlab.workload.batsim_workload.BatsimOptions` (``speed``, ``platform``,
``unsupported``); see docs/formats.md.
"""

from __future__ import annotations

import gzip
import re
import zlib
from dataclasses import fields, replace
from importlib import import_module
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from dispatchlab.errors import WorkloadError
from dispatchlab.input_files import input_problem, is_pipe, readable_path
from dispatchlab.keyvalue import parses
from dispatchlab.params import given
from dispatchlab.traces.resolve import is_trace_ref, resolve_source, trace_record
from dispatchlab.workload.eurora import EuroraOptions, load_eurora
from dispatchlab.workload.generators.registry import generate, is_generator_spec
from dispatchlab.workload.generators.variable_capacity import read_vc_jobs
from dispatchlab.workload.swf import FIELDS, SwfOptions, load_swf
from dispatchlab.workload.workload import Workload

FORMATS = ("swf", "eurora", "parquet", "csv", "vcjobs", "sacct", "sacct-json", "jobcomp", "pbs",
           "batsim")
#: Formats read through AccountingOptions, with their loader (module, function).
ACCOUNTING = {"sacct": ("slurm_sacct", "load_sacct"),
              "sacct-json": ("slurm_sacct_json", "load_sacct_json"),
              "jobcomp": ("slurm_jobcomp", "load_jobcomp"),
              "pbs": ("pbs_accounting", "load_pbs")}
_PBS_RECORD = re.compile(r"^\d\d/\d\d/\d{4} \d\d:\d\d:\d\d;[A-Za-z];")
_JOBCOMP_RECORD = re.compile(r"^JobId=\d+ .*\bJobState=")


def detect_format(path: Path) -> str:
    """Guess the format from the name and, failing that, the first data line."""
    problem = input_problem(path)
    if problem:
        raise WorkloadError(problem, source=str(path))
    name = path.name.lower()
    if name.endswith((".swf", ".swf.gz")):
        return "swf"
    if name.endswith(".parquet"):
        return "parquet"
    if name.endswith((".csv", ".csv.gz")):
        return "csv"
    if name.endswith(".log_crypt"):
        return "eurora"
    if is_pipe(path):  # load_workload reads a pipe into a file first
        raise WorkloadError("cannot tell the format of a pipe without reading it: pass "
                            "--format", source=str(path))
    sniffed = _sniff(path)
    if sniffed is None and name.endswith((".json", ".json.gz")):
        raise WorkloadError("a JSON file that is neither a Batsim workload (nb_res, jobs, "
                            "profiles) nor a sacct --json export (jobs with job_id); pass "
                            "--format", source=str(path))
    if sniffed is not None:
        return sniffed
    raise WorkloadError(
        f"cannot tell the format; pass --format ({'|'.join(FORMATS)})", source=str(path)
    )


def _sniff(path: Path) -> str | None:
    try:
        with open(path, "rb") as fh:
            magic = fh.read(4)
        if magic == b"PAR1":
            return "parquet"
        opener: Any = gzip.open if magic[:2] == b"\x1f\x8b" else open
        with opener(path, "rt", encoding="utf-8-sig", errors="replace") as text:
            for _, line in zip(range(200), text, strict=False):
                s = line.strip()
                if not s:
                    continue
                if s.startswith(("{", "[")):
                    return _sniff_json(s + text.read(65536))
                if _PBS_RECORD.match(s):
                    return "pbs"
                if _JOBCOMP_RECORD.match(s):
                    return "jobcomp"
                if "|" in s and "jobid" in s.lower().split("|"):
                    return "sacct"
                if s.startswith(";"):
                    return "swf"
                if "__" in s and s.count(";") >= 4:
                    return "eurora"
                parts = s.split()
                if len(parts) == len(FIELDS) and all(parses(float, p) for p in parts):
                    return "swf"
                if len(parts) == 5 and parts[4] in ("release", "running"):
                    return "vcjobs"
                if "," in s and "submit" in s.split(","):
                    return "csv"
                return None
    except (OSError, EOFError, gzip.BadGzipFile):
        return None
    return None


def _sniff_json(head: str) -> str | None:
    """Batsim workload or sacct export, from the keys near the start of a JSON file."""
    if '"nb_res"' in head or '"profiles"' in head or '"subtime"' in head:
        return "batsim"
    if '"job_id"' in head:
        return "sacct-json"
    return None


def load_workload(path: str | Path, format: str | None = None, **options: Any) -> Workload:
    """Load ``path`` in ``format`` (detected when None), or run a ``gen:`` spec.

    ``options`` go to the reader (:class:`SwfOptions` / :class:`EuroraOptions` fields, or
    an ``swf=`` / ``eurora=`` options object, ignored when the format differs) or override
    the generator's parameters. ``skip`` / ``limit`` slice the jobs in every format (for
    SWF after cleaning, as :class:`SwfOptions` does); times are then rebased so the first
    kept job arrives at 0, the origin moving along.
    """
    if is_trace_ref(path):
        wl = load_workload(resolve_source(path), format, **options)
        return replace(wl, meta={**wl.meta, "trace": trace_record(str(path))})
    text = str(path)
    skip = options.pop("skip", None)
    limit = options.pop("limit", None)
    swf_obj = options.pop("swf", None)
    eurora_obj = options.pop("eurora", None)
    _check_slice(skip, limit, text)
    if format == "gen" or (format is None and is_generator_spec(text)):
        return slice_workload(generate(text, **options), skip, limit)
    p = Path(path)
    folder = ("is a folder; give one workload file (for Eurora batch folders see "
              "dispatchlab.workload.list_eurora_batches)")
    with readable_path(p, lambda why: WorkloadError(why, source=str(p)),
                       folder_message=folder) as real:
        try:
            wl = _load_file(real, format, skip, limit, swf_obj, eurora_obj, options)
        except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
            raise WorkloadError(_gzip_message(real, exc), source=str(p)) from None
    if real == p:
        return wl
    meta = dict(wl.meta)  # a pipe read into a temporary copy: name what the user gave
    if isinstance(meta.get("load_report"), dict):
        meta["load_report"] = {**meta["load_report"], "source": str(p)}
    return replace(wl, source=str(p), meta=meta)


def _gzip_message(p: Path, exc: BaseException) -> str:
    """One line for a damaged compressed file."""
    if isinstance(exc, EOFError):
        return "truncated gzip file: it ends before its end-of-stream marker (incomplete " \
               "download or copy?)"
    with open(p, "rb") as fh:
        magic = fh.read(2)
    if magic != b"\x1f\x8b":
        return "not a gzip file although its name ends in .gz (plain text? rename it " \
               "without .gz)" if p.suffix == ".gz" else f"damaged compressed data ({exc})"
    return f"damaged gzip data ({exc})"


def _load_file(p: Path, format: str | None, skip: int | None, limit: int | None,
               swf_obj: Any, eurora_obj: Any, options: dict[str, Any]) -> Workload:
    fmt = format or detect_format(p)
    if fmt == "swf":
        if swf_obj is None:
            swf_obj = reader_options(SwfOptions, {**options, **given(skip=skip, limit=limit)},
                                     "swf", p)
        elif options:
            raise WorkloadError(
                "give SWF options either as swf=SwfOptions(...) or as keywords, not both",
                source=str(p),
                field=next(iter(options)),
            )
        elif skip is not None or limit is not None:
            swf_obj = replace(
                swf_obj,
                skip=skip if skip is not None else swf_obj.skip,
                limit=limit if limit is not None else swf_obj.limit,
            )
        return load_swf(p, swf_obj)
    if fmt == "eurora":
        if eurora_obj is None:
            eurora_obj = reader_options(EuroraOptions, options, "eurora", p)
        elif options:
            raise WorkloadError(
                "give Eurora options either as eurora=EuroraOptions(...) or as keywords, not both",
                source=str(p),
                field=next(iter(options)),
            )
        return slice_workload(load_eurora(p, eurora_obj), skip, limit)
    if fmt == "vcjobs":
        return slice_workload(load_vc(p, options), skip, limit)
    if fmt in ACCOUNTING:
        from dispatchlab.workload.accounting import AccountingOptions

        module, func = ACCOUNTING[fmt]
        loader = getattr(import_module(f"dispatchlab.workload.{module}"), func)
        if getattr(swf_obj, "skip_bad_lines", False):  # the CLI's --skip-bad-lines
            options.setdefault("skip_bad_lines", True)
        opts = reader_options(AccountingOptions, options, fmt, p)
        if opts.columns is not None and fmt != "sacct":
            raise WorkloadError(f"columns name the columns of a headerless sacct export; a "
                                f"{fmt} file has its own", source=str(p), field="columns")
        return slice_workload(loader(p, opts), skip, limit)
    if fmt == "batsim":
        from dispatchlab.workload.batsim_workload import BatsimOptions, load_batsim

        return slice_workload(load_batsim(p, reader_options(BatsimOptions, options, fmt, p)),
                              skip, limit)
    if fmt in ("parquet", "csv"):
        if options:
            raise WorkloadError(
                f"{fmt} tables take no options (got {', '.join(options)})",
                source=str(p),
                field=next(iter(options)),
            )
        from dispatchlab.workload.native import load_csv, load_parquet  # pandas: on demand

        wl = load_parquet(p) if fmt == "parquet" else load_csv(p)
        return slice_workload(wl, skip, limit)
    raise WorkloadError(
        f"unknown or unsupported format '{fmt}' (known: {', '.join(FORMATS)})", source=str(p)
    )


def load_vc(p: Path, options: dict[str, Any]) -> Workload:
    """A variable-capacity job file with its options (``start``, ``window``,
    ``checkpoint``)."""
    unknown = sorted(set(options) - {"start", "window", "checkpoint"})
    if unknown:
        raise WorkloadError("unknown vcjobs option (known: checkpoint, start, window)",
                            source=str(p), field=unknown[0])
    return read_vc_jobs(p, **options)


def slice_workload(wl: Workload, skip: int | None = None, limit: int | None = None) -> Workload:
    """Jobs ``skip .. skip + limit`` of ``wl``, rebased so the first kept one arrives at 0."""
    if not skip and limit is None:
        return wl
    start = min(skip or 0, wl.n_jobs)
    stop = wl.n_jobs if limit is None else min(wl.n_jobs, start + limit)
    part = wl.take(slice(start, stop))
    shift = int(part.submit[0]) if part.n_jobs else 0
    meta = {**wl.meta, "slice": {"skip": skip or 0, "limit": limit, "time_shift": shift}}

    def shifted(values: npt.NDArray[np.int64], keep_unknown: bool) -> npt.NDArray[np.int64]:
        out = np.where(values >= 0, values - shift, values) if keep_unknown else values - shift
        arr = np.ascontiguousarray(out, dtype=np.int64)
        arr.setflags(write=False)
        return arr

    return replace(
        part,
        meta=meta,
        submit=shifted(part.submit, False),
        est=shifted(part.est, True),
        lst=shifted(part.lst, True),
        origin_unix=None if wl.origin_unix is None else wl.origin_unix + shift,
    )


def _check_slice(skip: object, limit: object, source: str) -> None:
    for name, value in (("skip", skip), ("limit", limit)):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise WorkloadError(
                f"must be a non-negative integer, got {value!r}", source=source, field=name
            )
    if limit == 0:
        raise WorkloadError("must be at least 1 (limit = 0 keeps no job)", source=source,
                            field="limit")


def reader_options(cls: Any, options: dict[str, Any], fmt: str, path: str | Path) -> Any:
    """``cls(**options)``; an unknown option is a WorkloadError listing the known ones."""
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(options) - known)
    if unknown:
        raise WorkloadError(
            f"unknown {fmt} option (known: {', '.join(sorted(known))})",
            source=str(path),
            field=unknown[0],
        )
    return cls(**options)


def save_workload(workload: Workload, path: str | Path, format: str | None = None) -> Path:
    """Write ``workload`` as Parquet, CSV (+ sidecar), SWF or a Batsim workload JSON,
    chosen by ``format`` or the name."""
    p = Path(path)
    fmt = format or output_format(p)
    from dispatchlab.workload.native import write_csv, write_parquet  # pandas: on demand
    from dispatchlab.workload.swf_writer import write_swf

    if fmt == "parquet":
        return write_parquet(workload, p)
    if fmt == "csv":
        return write_csv(workload, p)
    if fmt == "swf":
        return write_swf(workload, p)
    if fmt == "batsim":
        from dispatchlab.workload.batsim_workload import write_batsim

        return write_batsim(workload, p)
    raise WorkloadError(
        "cannot tell the output format; use .parquet, .csv, .swf or .json (or pass format: "
        f"{', '.join(OUTPUT_FORMATS)})", source=str(p))


#: Formats :func:`save_workload` writes.
OUTPUT_FORMATS = ("swf", "batsim", "parquet", "csv")


def output_format(path: Path) -> str | None:
    """The output format a file name asks for (None when it does not tell)."""
    name = path.name.lower()
    for suffixes, fmt in (((".parquet",), "parquet"), ((".csv", ".csv.gz"), "csv"),
                          ((".swf", ".swf.gz"), "swf"), ((".json",), "batsim")):
        if name.endswith(suffixes):
            return fmt
    return None
