"""Load a workload from a path, detecting its format."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dispatchlab.errors import WorkloadError
from dispatchlab.workload.swf import SwfOptions, load_swf
from dispatchlab.workload.workload import Workload

FORMATS = ("swf", "eurora", "parquet", "csv")


def detect_format(path: Path) -> str:
    """Guess the format from the name and, failing that, the first data line."""
    name = path.name.lower()
    if name.endswith((".swf", ".swf.gz")):
        return "swf"
    if name.endswith(".parquet"):
        return "parquet"
    if name.endswith(".csv"):
        return "csv"
    if name.endswith(".log_crypt") or "job_instances" in str(path):
        return "eurora"
    raise WorkloadError("cannot tell the format; pass --format swf|eurora|parquet|csv",
                        source=str(path))


def load_workload(path: str | Path, format: str | None = None, **options: Any) -> Workload:
    """Load ``path`` in ``format`` (detected when None); options go to the reader."""
    p = Path(path)
    if not p.exists():
        raise WorkloadError("file not found", source=str(p))
    fmt = format or detect_format(p)
    if fmt == "swf":
        swf_opts = options.pop("swf", None) or SwfOptions(**options)
        return load_swf(p, swf_opts)
    raise WorkloadError(f"unknown or unsupported format '{fmt}' (known: {', '.join(FORMATS)})",
                        source=str(p))
