"""Every file or folder dispatchlab writes goes through :func:`atomic_output`: it is written
under a temporary name in the same folder, flushed to disk and renamed into place, so the
target is either the complete new output or untouched (disk full, Ctrl-C, SIGKILL), never
half written. A failure removes the temporary copy and becomes one :class:`OutputError`
line ("cannot write 'PATH': no space left on device").

The temporary name records the host and the process id of its writer, so a copy left by a
killed run is provably stale (its process is gone) and the next write into the same
folder removes it, saying so in one line.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import shutil
import socket
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from dispatchlab.errors import ConfigError, OutputError
from dispatchlab.processes import pid_alive

#: Reasons in words for the errors a write meets (others: the system's text, lowercased).
_REASONS = {
    errno.ENOSPC: "no space left on device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EFBIG: "file too large",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.EROFS: "read-only file system",
    errno.ENOTDIR: "a parent is a file, not a folder",
    errno.ENOENT: "its folder does not exist",
    errno.EISDIR: "it is a folder",
    errno.ENAMETOOLONG: "name too long",
    errno.EIO: "input/output error",
}

#: Writers that do not set ``errno`` (pyarrow) still say the system's text.
_TEXTS = {os.strerror(code).lower(): reason for code, reason in _REASONS.items()}

_HOST = hashlib.sha1(socket.gethostname().encode()).hexdigest()[:4]
_OURS = re.compile(r"^\.(?:tmp|old)-(?P<host>[0-9a-f]{4})-(?P<pid>\d+)-[0-9a-f]{6}-(?P<name>.+)$")
#: Names earlier versions gave ``simulate --out``'s copies (no process id: stale by age).
_LEGACY = re.compile(r"^\.(?:tmp|old)-(?P<name>.+)-[0-9a-f]{8}$")
LEGACY_AGE = 24 * 3600.0


def write_failure(path: str | Path, exc: BaseException) -> OutputError:
    """The one-line error for a write of ``path`` that failed with ``exc``."""
    code = getattr(exc, "errno", None)
    reason = _REASONS.get(code) if isinstance(code, int) else None
    if reason is None:
        text = str(getattr(exc, "strerror", None) or exc).lower()
        reason = next((r for t, r in _TEXTS.items() if t in text), None)
        reason = reason or (text.split(": ")[0] if text else type(exc).__name__)
    return OutputError(f"cannot write '{path}': {reason}")


def check_not_file(path: Path, option: str) -> None:
    """An output folder (given by ``option``) must not be a file, nor lie under one."""
    for parent in (path, *path.parents):
        if parent.exists() and not parent.is_dir():
            raise ConfigError(f"{parent} is a file, not a folder; choose another {option} "
                              "(a file is never replaced by a folder)", field=option)


@contextmanager
def atomic_output(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path`` (it does not exist yet: write a file or a
    folder there); on success it replaces ``path`` in one rename. The temporary name ends
    with ``path``'s name, so writers that choose compression by suffix still do. A
    symbolic link at ``path`` is written through: the file or folder it points to is
    replaced (beside it, so the rename stays on its file system) and the link kept."""
    target = _through_links(Path(path))
    folder = target.parent
    made = _missing_folders(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        if exc.errno in (errno.EEXIST, errno.ENOTDIR):
            raise OutputError(f"cannot create the folder '{folder}': a file stands in its "
                              "path") from None
        raise write_failure(folder, exc) from None
    clean_stale(folder)
    tmp = folder / _temp_name("tmp", target.name)
    try:
        yield tmp
        _sync(tmp)
        if tmp.is_dir() and target.is_dir():
            old = folder / _temp_name("old", target.name)
            target.rename(old)
            try:
                tmp.rename(target)
            except BaseException:
                old.rename(target)  # the earlier output back in place
                raise
            shutil.rmtree(old, ignore_errors=True)
        else:
            if target.is_file() and tmp.is_file():  # a replaced file keeps its permissions
                shutil.copymode(target, tmp)
            os.replace(tmp, target)
        sync_folder(folder)
    except BaseException as exc:
        _remove(tmp)
        for made_folder in made:  # the folders made for this output, left empty
            try:
                made_folder.rmdir()
            except OSError:
                break
        if isinstance(exc, OSError) and not isinstance(exc, OutputError):
            raise write_failure(target, exc) from None
        raise


def _through_links(path: Path) -> Path:
    """``path``, or the path its symbolic link(s) lead to (existing or not, as a shell's
    ``>`` writes through a link); a loop of links is an OutputError."""
    if not path.is_symlink():
        return path
    try:
        return path.resolve(strict=False)
    except (OSError, RuntimeError):  # RuntimeError: a loop (Python < 3.13)
        raise OutputError(f"cannot write '{path}': a loop of symbolic links") from None


def _missing_folders(folder: Path) -> list[Path]:
    """The folders of ``folder``'s path that do not exist yet, deepest first."""
    out: list[Path] = []
    while not folder.exists() and folder != folder.parent:
        out.append(folder)
        folder = folder.parent
    return out


def clean_stale(folder: Path) -> list[str]:
    """Remove the temporary copies in ``folder`` whose writer is provably gone: a process
    of this host that no longer runs, or (names without a process id) untouched for a day.
    A replaced output set aside (``.old-…``) whose target is missing is put back instead."""
    removed: list[str] = []
    try:
        entries = [p for p in folder.iterdir() if p.name.startswith((".tmp-", ".old-"))]
    except OSError:
        return removed
    now = time.time()
    for p in entries:
        mine = _OURS.match(p.name)
        if mine is not None:
            stale = mine["host"] == _HOST and not pid_alive(int(mine["pid"]))
        else:
            legacy = _LEGACY.match(p.name)
            try:
                stale = (legacy is not None and now - p.stat().st_mtime > LEGACY_AGE
                         and _results_only(p))
            except OSError:
                stale = False
        if not stale:
            continue
        name = (mine or _LEGACY.match(p.name))["name"]  # type: ignore[index]
        if p.name.startswith(".old-") and not (folder / name).exists():
            try:
                p.rename(folder / name)
                continue
            except OSError:
                pass
        _remove(p)
        removed.append(p.name)
    if removed:
        sys.stderr.write(f"note: removed {len(removed)} temporary output(s) left in {folder} "
                         f"by interrupted runs: {', '.join(sorted(removed))}\n")
    return removed


#: what an earlier ``simulate --out`` copy holds (so no other program's file is touched)
_RESULT_FILES = {"summary.json", "jobs.csv", "timeseries.csv", "out_jobs.csv", "schedule.swf"}


def _results_only(path: Path) -> bool:
    """A folder holding nothing but results files (or nothing yet)."""
    return path.is_dir() and not path.is_symlink() and all(
        f.is_file() and (f.name in _RESULT_FILES or f.suffix == ".parquet")
        for f in path.iterdir())


def holds_results_only(path: Path) -> bool:
    """``path`` (through a symbolic link) is a folder holding nothing but what a results
    folder holds (or nothing): replacing it as a whole loses nothing else."""
    return _results_only(_through_links(path))


def _temp_name(kind: str, name: str) -> str:
    return f".{kind}-{_HOST}-{os.getpid()}-{uuid.uuid4().hex[:6]}-{name[-200:]}"


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with suppress(OSError):
            path.unlink()


def _sync(path: Path) -> None:
    """Flush ``path`` (a file, or every file of a folder) to disk before it is renamed."""
    files = [f for f in path.rglob("*") if f.is_file()] if path.is_dir() else [path]
    for f in files:
        fd = os.open(f, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    if path.is_dir():
        for d in [path, *(d for d in path.rglob("*") if d.is_dir())]:
            sync_folder(d)


def sync_folder(path: Path) -> None:
    """Flush a folder's entries (new names, renames) to disk; silent where it cannot."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
