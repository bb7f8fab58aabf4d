"""PBS's own events wake the live cycle: a server hook on ``queuejob``, ``runjob``,
``jobobit`` and a reservation's confirmation, start and end (``resv_confirm``,
``resv_begin``, ``resv_end``) writes one line to a FIFO the adapter waits on.

The hook opens the FIFO non-blocking and gives up when nobody reads (``ENXIO``), so the
server never hangs on it; the adapter opens it read-write first (it is then never without a
reader and misses no event). The hook is installed when the command starts (``qmgr``, as a
PBS manager) and deleted when it stops; the polls stay, so an event lost (the hook not
installed, a job queued before the hook ran) costs at most one poll interval.
"""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

#: The hook's name in the server (one adapter per server).
HOOK = "dispatchlab_wake"
EVENTS = "queuejob,runjob,jobobit,resv_confirm,resv_begin,resv_end"

_BODY = '''import os
import pbs
e = pbs.event()
try:
    fd = os.open(@FIFO@, os.O_WRONLY | os.O_NONBLOCK)
    try:
        os.write(fd, b"e\\n")
    finally:
        os.close(fd)
except OSError:
    pass
e.accept()
'''


class PbsEvents:
    """The FIFO and the hook; :meth:`wait` returns early when an event arrives."""

    def __init__(self, prefix: Sequence[str] = ()):
        self.prefix = list(prefix)
        self.folder = Path(tempfile.mkdtemp(prefix="dispatchlab-pbs-events-"))
        self.folder.chmod(0o755)  # the server (root) writes the FIFO
        self.fifo = self.folder / "events.fifo"
        os.mkfifo(self.fifo, 0o600)
        self.fd = os.open(self.fifo, os.O_RDWR | os.O_NONBLOCK)
        self.installed = False
        self.events = 0

    def install(self) -> str | None:
        """Install the hook; None, or why it could not be (then the adapter only polls)."""
        script = self.folder / "hook.py"
        script.write_text(_BODY.replace("@FIFO@", repr(str(self.fifo))))
        self._qmgr(f"delete hook {HOOK}")  # one left by an adapter that was killed
        out = self._qmgr(f"create hook {HOOK}", f"set hook {HOOK} event = '{EVENTS}'",
                         f"import hook {HOOK} application/x-python default {script}")
        if out:
            return out
        self.installed = True
        return None

    def _qmgr(self, *commands: str) -> str:
        """Run qmgr commands one per call (``qmgr -c A -c B`` applies only B); the first
        error message, or ''."""
        for command in commands:
            try:
                done = subprocess.run([*self.prefix, "qmgr", "-c", command], capture_output=True,
                                      text=True, timeout=30)
            except (OSError, subprocess.TimeoutExpired) as err:
                return f"qmgr -c '{command}': {err}"
            if done.returncode != 0 and not command.startswith("delete"):
                return f"qmgr -c '{command}': {(done.stderr or done.stdout).strip()[-300:]}"
        return ""

    def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` s for an event; whether one came (all pending are read)."""
        ready, _, _ = select.select([self.fd], [], [], max(0.0, timeout))
        if not ready:
            return False
        with contextlib.suppress(BlockingIOError):
            while os.read(self.fd, 4096):
                self.events += 1
        return True

    def close(self) -> None:
        """Delete the hook (if installed) and the FIFO."""
        if self.installed:
            self._qmgr(f"delete hook {HOOK}")
            self.installed = False
        os.close(self.fd)
        self.fifo.unlink(missing_ok=True)
        for f in self.folder.iterdir():
            f.unlink()
        self.folder.rmdir()
