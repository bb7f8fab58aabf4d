"""Build the ahead-of-time Numba units in the background while a parallel test run starts.

A fresh checkout has no built units; the first test that runs a compiled loop would build its
unit (minutes of CPU) while the other workers wait for it. Under pytest-xdist the controller
starts ``python -m dispatchlab.numba_aot --prebuild`` at once, so the units' parts build in
parallel beside the first tests (the workers' own loads wait on the same per-module lock), and
stops it when the run ends early. The workers then run at a lower priority (``nice`` 5), so
the builds, whose longest part bounds the run, get most of the CPU and the tests fill what is
left. ``DISPATCHLAB_PREBUILD=0`` turns it off, ``=1`` turns it on without xdist.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from typing import Any

#: every ahead-of-time unit of the package, heaviest first
UNITS = ("dispatchlab.dispatchers.rule_based.compiled.kernel:LOOPS",
         "dispatchlab.dispatchers.variable_capacity.compiled.kernel:FIRST_FIT_LOOP",
         "dispatchlab.engine.compiled.compiled_ops:ENGINE_OPS")

#: set in the environment the xdist workers inherit while a background build runs
RUNNING = "DISPATCHLAB_PREBUILD_RUNNING"

_process: subprocess.Popen[bytes] | None = None


def wanted(config: Any) -> bool:
    """Whether this process should prebuild: the xdist controller of a parallel run (or
    ``DISPATCHLAB_PREBUILD=1``), never a worker, never without Numba or AOT."""
    if hasattr(config, "workerinput"):
        return False
    if os.environ.get("DISPATCHLAB_NO_AOT") or os.environ.get("DISPATCHLAB_NO_NUMBA"):
        return False
    forced = os.environ.get("DISPATCHLAB_PREBUILD")
    if forced is not None:
        return forced == "1"
    workers = getattr(config.option, "numprocesses", None)
    return bool(workers) and workers != 1


def start(config: Any) -> None:
    """Start the background build (its own process group) when :func:`wanted`; in a
    worker of such a run, lower this process's priority."""
    global _process
    if hasattr(config, "workerinput"):
        if os.environ.get(RUNNING) == "1":
            os.nice(5)
        return
    if _process is None and wanted(config):
        _process = subprocess.Popen(
            [sys.executable, "-m", "dispatchlab.numba_aot", "--prebuild", *UNITS],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        os.environ[RUNNING] = "1"


def stop() -> None:
    """Stop a build still running (a partial run): its temporary folders are removed."""
    global _process
    if _process is not None and _process.poll() is None:
        os.killpg(_process.pid, signal.SIGTERM)
        try:
            _process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(_process.pid, signal.SIGKILL)
    _process = None
    os.environ.pop(RUNNING, None)
