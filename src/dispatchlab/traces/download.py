"""Download one file to its place, resuming, checking size and SHA-256, never leaving half.

The bytes go to ``<dest>.part``; an interrupted download keeps it and the next attempt asks
for the rest (HTTP ``Range``). Only a ``.part`` whose size and SHA-256 are the catalogue's is
renamed (atomically) to ``<dest>``; a wrong one is deleted. A lock file (``.<name>.lock``,
removed when released) keeps two processes from writing the same ``.part``.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

from dispatchlab.atomic_output import write_failure
from dispatchlab.traces.checksum import file_sha256
from dispatchlab.traces.errors import TraceChecksumError, TraceDownloadError

CHUNK = 1 << 16
USER_AGENT = "dispatchlab-traces/1 (+https://github.com; research simulator)"

Progress = Callable[[int, int], None]


class _Dropped(Exception):
    """The connection ended before the whole file came; the ``.part`` is kept."""


def part_path(dest: Path) -> Path:
    """Where ``dest``'s bytes are gathered until they are checked."""
    return dest.with_name(dest.name + ".part")


def download(url: str, dest: Path, *, size: int, sha256: str, attempts: int = 3,
             timeout: float = 60.0, progress: Progress | None = None) -> Path:
    """Fetch ``url`` into ``dest`` (resuming a ``.part``); raise when it is not the file."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = part_path(dest)
    with _locked(dest):
        if dest.is_file() and dest.stat().st_size == size and file_sha256(dest) == sha256:
            return dest  # another process finished it while we waited
        for _ in range(attempts):
            try:
                _fetch_into(url, part, size, timeout, progress)
                break
            except _Dropped:
                continue
        else:
            kept = part.stat().st_size if part.exists() else 0
            raise TraceDownloadError(
                f"{url}: the connection dropped {attempts} times; {kept:,} of {size:,} bytes "
                f"are kept in {part}; run the command again to resume")
        got = file_sha256(part)
        if got != sha256:
            part.unlink()
            raise TraceChecksumError(
                f"{url}: SHA-256 {got} is not the catalogue's {sha256} (the file changed "
                "upstream or was damaged on the way); nothing was kept")
        os.replace(part, dest)
    return dest


def _fetch_into(url: str, part: Path, size: int, timeout: float,
                progress: Progress | None) -> None:
    """Append the missing bytes to ``part``; _Dropped when the connection ends early."""
    have = part.stat().st_size if part.exists() else 0
    if have > size:
        part.unlink()
        have = 0
    if have == size:  # complete already (or an empty file: nothing to ask for)
        part.touch()
        return
    headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "identity"}
    if have:
        headers["Range"] = f"bytes={have}-"
    try:
        response = urllib.request.urlopen(urllib.request.Request(url, headers=headers),
                                          timeout=timeout)
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and have:  # our .part is not a prefix the server knows: restart
            part.unlink()
            raise _Dropped from None
        hint = " (the archive may have moved it: see docs/traces.md to get it by hand)" \
            if exc.code in (404, 410) else ""
        raise TraceDownloadError(f"{url}: HTTP {exc.code} {exc.reason}{hint}") from None
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, TimeoutError):
            raise _Dropped from None
        host = urllib.parse.urlsplit(url).netloc
        raise TraceDownloadError(
            f"cannot reach {host} ({exc.reason}): offline? Fetch the file elsewhere and put "
            "it in $DISPATCHLAB_TRACES (see docs/traces.md)") from None
    except (TimeoutError, ConnectionError, http.client.HTTPException):
        raise _Dropped from None
    with response:
        offset, total = _range_of(response, have)
        if total is not None and total != size:
            if part.exists():
                part.unlink()
            raise TraceChecksumError(
                f"{url}: the server offers {total:,} bytes, the catalogue's file has {size:,} "
                "(the file changed upstream); nothing was kept")
        _write_body(response, part, offset, size, progress)


def _range_of(response: http.client.HTTPResponse, have: int) -> tuple[int, int | None]:
    """Where the body starts in the file (``have`` for a 206, else 0) and the file's size."""
    if response.status == 206:
        text = response.headers.get("Content-Range", "")
        unit, _, spec = text.partition(" ")
        span, _, total = spec.partition("/")
        start = span.partition("-")[0]
        if unit != "bytes" or not start.isdigit() or int(start) != have:
            raise TraceDownloadError(f"{response.url}: unusable Content-Range '{text}'")
        return have, int(total) if total.isdigit() else None
    length = response.headers.get("Content-Length")
    return 0, int(length) if length and length.isdigit() else None


def _write_body(response: http.client.HTTPResponse, part: Path, offset: int, size: int,
                progress: Progress | None) -> None:
    got = offset
    try:
        out = open(part, "ab" if offset else "wb")  # noqa: SIM115
    except OSError as exc:
        raise write_failure(part, exc) from None
    with out:
        while True:
            try:
                block = response.read(CHUNK)
            except (OSError, http.client.HTTPException):
                raise _Dropped from None
            if not block:
                break
            try:  # a full disk is not a dropped connection: say so, keep what came
                out.write(block)
                out.flush()
            except OSError as exc:
                raise write_failure(part, exc) from None
            got += len(block)
            if progress is not None:
                progress(got, size)
    if got < size:
        raise _Dropped


@contextlib.contextmanager
def _locked(dest: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``<dest>.lock`` (POSIX; no lock elsewhere)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover  (Windows)
        yield
        return
    lock = dest.with_name(f".{dest.name}.lock")
    while True:
        fh = open(lock, "a")  # noqa: SIM115
        try:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:  # the holder before us removed the file: lock the new one instead
                same = os.fstat(fh.fileno()).st_ino == os.stat(lock).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
        except BaseException:
            fh.close()
            raise
        fh.close()
    try:
        yield
    finally:
        with contextlib.suppress(OSError):  # removed while held: nothing is left behind
            lock.unlink()
        fh.close()
