"""Issue 19 defect 4: SIGKILL of a campaign must not leave its workers (or their resource
tracker) running."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

CHILD = """
import glob, multiprocessing, os, sys, threading, time
from dispatchlab.experiments.backends import LocalBackend
eng = LocalBackend(2)
it = eng.map_unordered(time.sleep, [60, 60], key=str)
threading.Thread(target=lambda: list(it), daemon=True).start()
while len(multiprocessing.active_children()) < 2:
    time.sleep(0.05)
time.sleep(1.0)  # the workers are running their initializer and the sleeps
kids = set()  # the workers and the resource tracker
for f in glob.glob(f"/proc/{os.getpid()}/task/*/children"):
    kids |= set(open(f).read().split())
print(len(multiprocessing.active_children()), " ".join(sorted(kids)), flush=True)
time.sleep(120)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie waiting for init to reap it counts as gone
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_workers_leave_when_the_campaign_is_killed() -> None:
    proc = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    workers, *kids = proc.stdout.readline().split()
    pids = [int(p) for p in kids]
    assert int(workers) == 2 and len(pids) == 3  # two workers, one resource tracker
    assert all(_alive(p) for p in pids)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.1)
    left = [p for p in pids if _alive(p)]
    for p in left:  # never leave them behind, even when the test fails
        os.kill(p, signal.SIGKILL)
    assert not left, f"processes {left} outlived their killed parent"
