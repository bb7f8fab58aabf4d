"""The download path against a real HTTP server on 127.0.0.1: resume with Range requests,
dropped connections, checksum and size mismatches, 404s, an unreachable host. Whatever
fails, nothing half written is ever at the trace's path."""

from __future__ import annotations

import hashlib
import socket
from pathlib import Path

import pytest

from dispatchlab.traces.download import download, part_path
from dispatchlab.traces.errors import TraceChecksumError, TraceDownloadError
from tests.traces.http_server import Behaviour, serving

BODY = bytes(range(256)) * 800  # 204,800 bytes: several read chunks
DIGEST = hashlib.sha256(BODY).hexdigest()


def fetch(base: str, dest: Path, **kw: object) -> Path:
    return download(f"{base}/trace.swf", dest, size=len(BODY), sha256=DIGEST, **kw)  # type: ignore[arg-type]


def test_plain_download_lands_whole_and_leaves_no_part(tmp_path: Path) -> None:
    dest = tmp_path / "cache" / "swf" / "trace.swf"
    seen: list[tuple[int, int]] = []
    with serving(Behaviour(files={"/trace.swf": BODY})) as base:
        fetch(base, dest, progress=lambda got, total: seen.append((got, total)))
    assert dest.read_bytes() == BODY
    assert not part_path(dest).exists()
    assert seen[-1] == (len(BODY), len(BODY))


def test_resumes_a_part_file_with_a_range_request(tmp_path: Path) -> None:
    dest = tmp_path / "trace.swf"
    part_path(dest).write_bytes(BODY[:70_000])
    how = Behaviour(files={"/trace.swf": BODY})
    with serving(how) as base:
        fetch(base, dest)
    assert how.ranges == ["bytes=70000-"]
    assert dest.read_bytes() == BODY


def test_a_dropped_connection_is_resumed_where_it_stopped(tmp_path: Path) -> None:
    dest = tmp_path / "trace.swf"
    how = Behaviour(files={"/trace.swf": BODY}, drop_after=50_000, drops_left=2)
    with serving(how) as base:
        fetch(base, dest, attempts=3)
    assert how.ranges == [None, "bytes=50000-", "bytes=100000-"]
    assert dest.read_bytes() == BODY


def test_connection_dropping_every_time_keeps_only_the_part(tmp_path: Path) -> None:
    dest = tmp_path / "trace.swf"
    how = Behaviour(files={"/trace.swf": BODY}, drop_after=30_000, drops_left=99)
    with serving(how) as base, pytest.raises(TraceDownloadError, match=r"dropped 2 times.*resume"):
        fetch(base, dest, attempts=2)
    assert not dest.exists()
    assert part_path(dest).read_bytes() == BODY[:60_000]
    how.drops_left = 0  # the network is back: the next run picks up at 60,000
    with serving(how) as base:
        fetch(base, dest)
    assert how.ranges[-1] == "bytes=60000-"
    assert dest.read_bytes() == BODY and not part_path(dest).exists()


def test_server_ignoring_range_restarts_from_zero(tmp_path: Path) -> None:
    dest = tmp_path / "trace.swf"
    part_path(dest).write_bytes(b"x" * 1000)  # not even a prefix of the file
    with serving(Behaviour(files={"/trace.swf": BODY}, honour_range=False)) as base:
        fetch(base, dest)
    assert dest.read_bytes() == BODY


def test_checksum_mismatch_keeps_nothing(tmp_path: Path) -> None:
    dest = tmp_path / "trace.swf"
    damaged = bytearray(BODY)
    damaged[123_456] ^= 0xFF  # same size, one byte differs
    with serving(Behaviour(files={"/trace.swf": bytes(damaged)})) as base, \
            pytest.raises(TraceChecksumError, match="SHA-256"):
        fetch(base, dest)
    assert not dest.exists() and not part_path(dest).exists()


def test_a_part_whose_prefix_is_wrong_fails_the_checksum_and_is_removed(tmp_path: Path) -> None:
    dest = tmp_path / "trace.swf"
    part_path(dest).write_bytes(b"\0" * 5000)  # a stale part from some other file
    with serving(Behaviour(files={"/trace.swf": BODY})) as base, \
            pytest.raises(TraceChecksumError):
        fetch(base, dest)
    assert not dest.exists() and not part_path(dest).exists()
    with serving(Behaviour(files={"/trace.swf": BODY})) as base:  # the next try starts clean
        fetch(base, dest)
    assert dest.read_bytes() == BODY


def test_a_different_size_upstream_is_refused_before_writing(tmp_path: Path) -> None:
    dest = tmp_path / "trace.swf"
    with serving(Behaviour(files={"/trace.swf": BODY + b"more"})) as base, \
            pytest.raises(TraceChecksumError, match="204,804 bytes"):
        fetch(base, dest)
    assert not dest.exists() and not part_path(dest).exists()


def test_404_names_the_address_and_writes_nothing(tmp_path: Path) -> None:
    dest = tmp_path / "trace.swf"
    with serving(Behaviour()) as base, pytest.raises(TraceDownloadError, match="HTTP 404"):
        fetch(base, dest)
    assert not dest.exists() and not part_path(dest).exists()


def test_unreachable_host_says_offline(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dest = tmp_path / "trace.swf"
    with pytest.raises(TraceDownloadError, match=r"cannot reach 127\.0\.0\.1.*offline"):
        fetch(f"http://127.0.0.1:{port}", dest)
    assert not dest.exists()


def test_an_empty_file_downloads_as_empty(tmp_path: Path) -> None:
    dest = tmp_path / "empty"
    empty = hashlib.sha256(b"").hexdigest()
    with serving(Behaviour(files={"/empty": b""})) as base:
        download(f"{base}/empty", dest, size=0, sha256=empty)
    assert dest.read_bytes() == b"" and not part_path(dest).exists()
