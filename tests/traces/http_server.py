"""A tiny HTTP file server on 127.0.0.1 for the download tests: Range requests, 404s, and
connections it drops on purpose after a number of bytes."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Behaviour:
    """What the server does: its files, how many responses to cut short and where."""

    files: dict[str, bytes] = field(default_factory=dict)
    drop_after: int | None = None  # bytes of body sent before the connection is cut
    drops_left: int = 0  # how many responses are cut (then it serves normally)
    honour_range: bool = True
    ranges: list[str | None] = field(default_factory=list)  # each request's Range header


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        how = self.server.behaviour
        how.ranges.append(self.headers.get("Range"))
        body = how.files.get(self.path)
        if body is None:
            self.send_error(404, "Not Found")
            return
        start = 0
        wanted = self.headers.get("Range")
        if wanted and how.honour_range:
            start = int(wanted.removeprefix("bytes=").split("-")[0])
            if start >= len(body):
                self.send_error(416, "Range Not Satisfiable")
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(len(body) - start))
        self.end_headers()
        rest = body[start:]
        if how.drops_left > 0 and how.drop_after is not None:
            how.drops_left -= 1
            self.wfile.write(rest[: how.drop_after])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(rest)

    def log_message(self, format: str, *args: object) -> None:  # quiet
        return


class _Server(ThreadingHTTPServer):
    behaviour: Behaviour
    daemon_threads = True


@contextmanager
def serving(behaviour: Behaviour) -> Iterator[str]:
    """Serve ``behaviour`` on a free port of 127.0.0.1; yields the base URL."""
    server = _Server(("127.0.0.1", 0), _Handler)
    server.behaviour = behaviour
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
