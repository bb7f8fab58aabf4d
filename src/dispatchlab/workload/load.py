"""Load (and save) a workload, detecting its format; generator specs count as workloads.

``load_workload`` accepts a file in any format below, or a generator spec
``gen:<name>[:key=value,...]`` (see :mod:`dispatchlab.workload.generators`), so a CLI
``--workload`` option takes either. Formats are told apart by the file name, then by
the content:

- ``swf``: ``.swf`` / ``.swf.gz``, or ``;`` header lines / 18 numeric fields;
- ``eurora``: ``.log_crypt``, or ``;``-separated lines with ``__`` markers;
- ``parquet``: ``.parquet``, or the ``PAR1`` magic;
- ``csv``: ``.csv`` / ``.csv.gz``.
"""

from __future__ import annotations

import gzip
from dataclasses import fields
from pathlib import Path
from typing import Any

from dispatchlab.errors import WorkloadError
from dispatchlab.workload.eurora import EuroraOptions, load_eurora
from dispatchlab.workload.generators.registry import generate, is_generator_spec
from dispatchlab.workload.native import load_csv, load_parquet, write_csv, write_parquet
from dispatchlab.workload.swf import FIELDS, SwfOptions, load_swf
from dispatchlab.workload.swf_writer import write_swf
from dispatchlab.workload.workload import Workload

FORMATS = ("swf", "eurora", "parquet", "csv")


def detect_format(path: Path) -> str:
    """Guess the format from the name and, failing that, the first data line."""
    name = path.name.lower()
    if name.endswith((".swf", ".swf.gz")):
        return "swf"
    if name.endswith(".parquet"):
        return "parquet"
    if name.endswith((".csv", ".csv.gz")):
        return "csv"
    if name.endswith(".log_crypt"):
        return "eurora"
    sniffed = _sniff(path)
    if sniffed is not None:
        return sniffed
    raise WorkloadError("cannot tell the format; pass --format swf|eurora|parquet|csv",
                        source=str(path))


def _sniff(path: Path) -> str | None:
    try:
        with open(path, "rb") as fh:
            magic = fh.read(4)
        if magic == b"PAR1":
            return "parquet"
        opener: Any = gzip.open if magic[:2] == b"\x1f\x8b" else open
        with opener(path, "rt", encoding="utf-8", errors="replace") as text:
            for _, line in zip(range(200), text, strict=False):
                s = line.strip()
                if not s:
                    continue
                if s.startswith(";"):
                    return "swf"
                if "__" in s and s.count(";") >= 4:
                    return "eurora"
                parts = s.split()
                if len(parts) == len(FIELDS) and all(_is_number(p) for p in parts):
                    return "swf"
                if "," in s and "submit" in s.split(","):
                    return "csv"
                return None
    except (OSError, EOFError, gzip.BadGzipFile):
        return None
    return None


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def load_workload(path: str | Path, format: str | None = None, **options: Any) -> Workload:
    """Load ``path`` in ``format`` (detected when None), or run a ``gen:`` spec.

    ``options`` go to the reader (:class:`SwfOptions` / :class:`EuroraOptions` fields, or
    an ``swf=`` / ``eurora=`` options object) or override the generator's parameters.
    """
    text = str(path)
    if format == "gen" or (format is None and is_generator_spec(text)):
        return generate(text, **options)
    p = Path(path)
    if not p.exists():
        raise WorkloadError("file not found", source=str(p))
    if p.is_dir():
        raise WorkloadError("is a folder; give one workload file (for Eurora batch folders "
                            "see dispatchlab.workload.list_eurora_batches)", source=str(p))
    fmt = format or detect_format(p)
    if fmt == "swf":
        swf_opts = options.pop("swf", None) or reader_options(SwfOptions, options, "swf", p)
        return load_swf(p, swf_opts)
    if fmt == "eurora":
        eu_opts = options.pop("eurora", None) or reader_options(EuroraOptions, options, "eurora", p)
        return load_eurora(p, eu_opts)
    if fmt in ("parquet", "csv"):
        if options:
            raise WorkloadError(f"{fmt} tables take no options (got {', '.join(options)})",
                                source=str(p), field=next(iter(options)))
        return load_parquet(p) if fmt == "parquet" else load_csv(p)
    raise WorkloadError(f"unknown or unsupported format '{fmt}' (known: {', '.join(FORMATS)})",
                        source=str(p))


def reader_options(cls: Any, options: dict[str, Any], fmt: str, path: str | Path) -> Any:
    """``cls(**options)``; an unknown option is a WorkloadError listing the known ones."""
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(options) - known)
    if unknown:
        raise WorkloadError(f"unknown {fmt} option (known: {', '.join(sorted(known))})",
                            source=str(path), field=unknown[0])
    return cls(**options)


def save_workload(workload: Workload, path: str | Path, format: str | None = None) -> Path:
    """Write ``workload`` as Parquet, CSV (+ sidecar) or SWF, chosen by ``format`` or name."""
    p = Path(path)
    name = p.name.lower()
    fmt = format or ("parquet" if name.endswith(".parquet") else
                     "csv" if name.endswith((".csv", ".csv.gz")) else
                     "swf" if name.endswith((".swf", ".swf.gz")) else None)
    if fmt == "parquet":
        return write_parquet(workload, p)
    if fmt == "csv":
        return write_csv(workload, p)
    if fmt == "swf":
        return write_swf(workload, p)
    raise WorkloadError("cannot tell the output format; use .parquet, .csv or .swf (or pass "
                        "format)", source=str(p))
