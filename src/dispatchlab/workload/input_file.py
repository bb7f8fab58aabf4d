"""The check every trace reader starts with: the path names a readable file."""

from __future__ import annotations

from pathlib import Path

from dispatchlab.errors import WorkloadError


def input_file(path: str | Path, *, folder_message: str | None = None) -> Path:
    """``path`` as a :class:`Path` when it is a file; a WorkloadError naming it otherwise:
    ``folder_message`` for a folder when given (a hint at what to pass instead), else
    "file not found"."""
    p = Path(path)
    if folder_message is not None and p.is_dir():
        raise WorkloadError(folder_message, source=str(p))
    if not p.is_file():
        raise WorkloadError("file not found", source=str(p))
    return p
