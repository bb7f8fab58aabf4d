"""Opening an input file the same way everywhere: what the path is, reading it once.

Every reader (workloads, platforms, experiments, scenarios) starts here, so a missing file,
a folder, a symbolic-link loop, a device such as ``/dev/zero`` or a pipe nobody writes to
gets the same one-line answer from every command. A pipe (a FIFO, or a shell process
substitution ``<(…)``) is read once, with a limit on how long it may stay silent, and kept
in a temporary file for the readers that open their input more than once.
"""

from __future__ import annotations

import errno
import os
import select
import shutil
import stat
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from dispatchlab.errors import DispatchlabError

#: Seconds a pipe may stay silent (no writer yet, or no new bytes) before it is an error.
PIPE_WAIT = 30.0
#: Largest input read whole into memory (TOML / JSON configuration files, pipes).
MAX_TEXT_BYTES = 256 * 2**20
#: Largest pipe copied to a temporary file (``<(cat /dev/zero)`` must not fill the disk).
MAX_PIPE_BYTES = 8 * 2**30

Fail = Callable[[str], Exception]

_KINDS = ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))


def input_problem(path: Path, *, folder_message: str | None = None) -> str | None:
    """Why ``path`` cannot be read as an input file, in a few words (None: it can; pipes
    can too, see :func:`is_pipe`)."""
    try:
        st = os.stat(path)
    except OSError as exc:
        return os_reason(exc)
    if stat.S_ISDIR(st.st_mode):
        return folder_message or "is a folder, not a file"
    for test, kind in _KINDS:
        if test(st.st_mode):
            return f"not a regular file ({kind}); give a file"
    if not stat.S_ISFIFO(st.st_mode) and not os.access(path, os.R_OK):
        return "permission denied: cannot read it"
    return None


def folder_problem(path: Path) -> str | None:
    """Why ``path`` cannot be read as a folder (None: it can)."""
    try:
        st = os.stat(path)
    except OSError as exc:
        return "folder not found" if exc.errno == errno.ENOENT else os_reason(exc)
    if stat.S_ISDIR(st.st_mode):
        return None
    kind = next((k for test, k in (*_KINDS, (stat.S_ISFIFO, "a pipe")) if test(st.st_mode)),
                "a file")
    return f"not a folder ({kind})"


def os_reason(exc: OSError) -> str:
    """A short sentence for an operating-system error (no raw errno text)."""
    reasons = {errno.ENOENT: "file not found", errno.ELOOP: "a symbolic link loop",
               errno.EACCES: "permission denied: cannot read it",
               errno.ENOTDIR: "file not found (a part of the path is not a folder)",
               errno.ENAMETOOLONG: "file name too long", errno.EISDIR: "is a folder, not a file"}
    return reasons.get(exc.errno or 0, (exc.strerror or "cannot read it").lower())


def is_pipe(path: Path) -> bool:
    """True when ``path`` is a FIFO or a process substitution (read once, in order)."""
    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        return False


def read_bytes(path: Path, fail: Fail, *, limit: int | None = MAX_TEXT_BYTES) -> bytes:
    """The whole content of a file or pipe, at most ``limit`` bytes (None: no limit);
    ``fail(reason)`` is raised otherwise."""
    problem = input_problem(path)
    if problem:
        raise fail(problem)
    if is_pipe(path):
        return b"".join(_pipe_chunks(path, fail, limit))
    if limit is not None and os.path.getsize(path) > limit:
        raise fail(f"larger than {limit // 2**20} MB: not an input file of this kind")
    try:
        return path.read_bytes()
    except OSError as exc:
        raise fail(os_reason(exc)) from None


def read_text(path: Path, fail: Fail, *, limit: int | None = MAX_TEXT_BYTES) -> str:
    """The content of a UTF-8 text file or pipe (a byte-order mark is dropped); bytes that
    are not UTF-8 are ``fail``ed with their line and byte."""
    return decode_utf8(read_bytes(path, fail, limit=limit), fail)


def decode_utf8(data: bytes, fail: Fail) -> str:
    """``data`` decoded as UTF-8, or ``fail("line N: not UTF-8 text …")``."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        byte = data[exc.start]
        raise fail(f"line {line}: not UTF-8 text (byte 0x{byte:02x}); save the file as "
                   "UTF-8") from None


@contextmanager
def readable_path(path: Path, fail: Fail, *, folder_message: str | None = None,
                  limit: int | None = MAX_PIPE_BYTES) -> Iterator[Path]:
    """``path`` itself for a regular file; for a pipe, a temporary copy of what it gave (of
    the same name, so readers that tell formats by name still can), removed afterwards;
    errors raised meanwhile name ``path``, not the copy."""
    problem = input_problem(path, folder_message=folder_message)
    if problem:
        raise fail(problem)
    if not is_pipe(path):
        yield path
        return
    folder = Path(tempfile.mkdtemp(prefix="dispatchlab-pipe-"))
    try:
        copy = folder / (path.name or "pipe")
        with open(copy, "wb") as out:
            for chunk in _pipe_chunks(path, fail, limit):
                out.write(chunk)
        try:
            yield copy
        except DispatchlabError as exc:  # name what the user gave, not the copy
            exc.args = tuple(a.replace(str(copy), str(path)) if isinstance(a, str) else a
                             for a in exc.args)
            if getattr(exc, "source", None) == str(copy):
                exc.source = str(path)  # type: ignore[attr-defined]
            raise
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _pipe_chunks(path: Path, fail: Fail, limit: int | None) -> Iterator[bytes]:
    """The bytes of a pipe as they come; silent for :data:`PIPE_WAIT` s is an error (a FIFO
    nobody writes to would otherwise block for ever)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN | select.POLLHUP)
        total, quiet_since = 0, time.monotonic()
        while True:
            left = PIPE_WAIT - (time.monotonic() - quiet_since)
            if left <= 0 or not poller.poll(max(1, int(left * 1000))):
                what = "nothing written to the pipe" if total == 0 else "the pipe went silent"
                raise fail(f"{what} for {PIPE_WAIT:g} s (is a program writing to it?)")
            try:
                chunk = os.read(fd, 1 << 20)
            except BlockingIOError:
                continue
            if not chunk:
                if total == 0 and not _writer_gone(poller):
                    continue
                return
            total += len(chunk)
            if limit is not None and total > limit:
                raise fail(f"more than {limit // 2**20} MB from the pipe: not an input of "
                           "this kind")
            quiet_since = time.monotonic()
            yield chunk
    finally:
        os.close(fd)


def _writer_gone(poller: select.poll) -> bool:
    """True once a writer has come and gone (Linux reports POLLHUP only after that)."""
    return any(ev & select.POLLHUP for _, ev in poller.poll(0))
