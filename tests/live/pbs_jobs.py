"""Small helpers for tests against the local OpenPBS: start or skip, submit, wait, and the
server's accounting log (starts, ends, CPUs per vnode over time)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import pytest

from dispatchlab.live import pbs_build
from dispatchlab.live.pbs_local import LocalPbs
from dispatchlab.live.pbs_state import exec_vnode, job_number


def start_or_skip(**settings: object) -> LocalPbs:
    """A started local PBS; the test is skipped when there is no build or not root."""
    reason = pbs_build.unavailable_reason()
    if reason:
        pytest.skip(f"OpenPBS: {reason}")
    if os.geteuid() != 0:
        pytest.skip("the local PBS runs in a network namespace and needs root")
    return LocalPbs(**settings).start()  # type: ignore[arg-type]  # built: a failure is a failure


def submit(cluster: LocalPbs, cpus: int, seconds: float, walltime: str = "00:01:00") -> int:
    """A ``sleep seconds`` job of ``cpus`` one-CPU chunks in queue workq; its number."""
    out = subprocess.run(cluster.as_user([
        "qsub", "-q", "workq", "-l", f"select={cpus}:ncpus=1", "-l", "place=free",
        "-l", f"walltime={walltime}", "-j", "oe", "-o", "/dev/null", "-N", "t", "--",
        "/bin/sleep", str(seconds)]), capture_output=True, text=True, check=True)
    return job_number(out.stdout.strip())


def qstat(cluster: LocalPbs) -> dict[int, str]:
    """Job number → PBS state letter, finished jobs included (``qstat -x``)."""
    out = subprocess.run(cluster.wrap(["qstat", "-x", "-f", "-F", "json"]), capture_output=True,
                         text=True, check=True)
    return {job_number(k): v["job_state"] for k, v in
            (json.loads(out.stdout).get("Jobs") or {}).items()}


def wait_for(test: Callable[[], bool], timeout: float = 60.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if test():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what or test}")


def all_finished(cluster: LocalPbs, jobs: list[int]) -> bool:
    states = qstat(cluster)
    return all(states.get(j) in ("F", "X") for j in jobs)


def records(cluster: LocalPbs) -> list[tuple[str, int, dict[str, str]]]:
    """The accounting log's (type, job number, attributes) records, oldest first."""
    out = []
    for path in sorted(cluster.accounting.glob("*")):
        for line in path.read_text().splitlines():
            parts = line.split(";", 3)
            if len(parts) == 4 and parts[1] in ("S", "E"):
                attrs = dict(a.split("=", 1) for a in parts[3].split() if "=" in a)
                out.append((parts[1], job_number(parts[2]), attrs))
    return out


def starts_and_peak(cluster: LocalPbs) -> tuple[dict[int, int], dict[str, int]]:
    """How often each ended job ran (its E record's ``run_count``), and each vnode's peak
    CPUs in use, a job holding its ``exec_vnode`` from its first S record's start to its E
    record's end (an end before a start at the same second). A server restarted while
    jobs ran writes their S record again, with the recovery time as start (and the E
    record's start too): the first S record is the real start."""
    recs = records(cluster)
    runs: dict[int, int] = {}
    first: dict[int, tuple[int, list[tuple[str, int]]]] = {}
    events: list[tuple[int, int, str, int]] = []
    for kind, job, attrs in recs:
        if kind == "S" and job not in first:
            first[job] = (int(attrs["start"]), exec_vnode(attrs["exec_vnode"]))
            events += [(first[job][0], 1, n, c) for n, c in first[job][1]]
        elif kind == "E" and job in first:
            runs[job] = int(attrs.get("run_count", 1))
            events += [(int(attrs["end"]), 0, n, -c) for n, c in first[job][1]]
    use: dict[str, int] = defaultdict(int)
    peak: dict[str, int] = defaultdict(int)
    for _, _, node, cpus in sorted(events):
        use[node] += cpus
        peak[node] = max(peak[node], use[node])
    return runs, dict(peak)


def logged_starts(log: str) -> dict[int, int]:
    """How many ``start`` events each job has in an adapter's JSON-lines log."""
    out: dict[int, int] = defaultdict(int)
    for line in log.splitlines():
        if line.startswith("{"):
            event = json.loads(line)
            if event.get("event") == "start":
                out[int(event["job"])] += 1
    return dict(out)


def accounting_files(cluster: LocalPbs) -> list[Path]:
    return sorted(cluster.accounting.glob("*"))
