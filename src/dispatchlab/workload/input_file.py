"""The check every trace reader starts with: the path names a readable file."""

from __future__ import annotations

from pathlib import Path

from dispatchlab.errors import WorkloadError
from dispatchlab.input_files import input_problem


def input_file(path: str | Path, *, folder_message: str | None = None) -> Path:
    """``path`` as a :class:`Path` when it can be read (a file, or a pipe); a WorkloadError
    naming it otherwise: ``folder_message`` for a folder when given (a hint at what to pass
    instead), else why (file not found, a folder, a device, a symbolic link loop, …)."""
    p = Path(path)
    problem = input_problem(p, folder_message=folder_message)
    if problem:
        raise WorkloadError(problem, source=str(p))
    return p
