"""The check every trace reader starts with: the path names a readable file."""

from __future__ import annotations

from pathlib import Path

from dispatchlab.errors import WorkloadError
from dispatchlab.input_files import input_problem, is_pipe


def input_file(path: str | Path, *, folder_message: str | None = None) -> Path:
    """``path`` as a :class:`Path` when it is a readable file; a WorkloadError naming it
    otherwise: ``folder_message`` for a folder when given (a hint at what to pass instead),
    else why (file not found, a folder, a device, a symbolic link loop, a pipe: only
    :func:`~dispatchlab.workload.load.load_workload` reads pipes, into a file first)."""
    p = Path(path)
    problem = input_problem(p, folder_message=folder_message)
    if problem:
        raise WorkloadError(problem, source=str(p))
    if is_pipe(p):
        raise WorkloadError("a pipe, not a regular file: save what it gives to a file first",
                            source=str(p))
    return p
