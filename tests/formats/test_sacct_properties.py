"""Any job a sacct export can list is read back with the times and sizes it was written
with (the column-wise paths against the definition)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dispatchlab.workload.accounting import AccountingOptions
from dispatchlab.workload.slurm_sacct import load_sacct

HEADER = "JobID|Submit|Start|End|Elapsed|Timelimit|NCPUS|NNodes|Partition|User|State"
ZONE = "America/New_York"

jobs = st.lists(st.tuples(
    st.integers(1_600_000_000, 1_800_000_000),  # submit
    st.integers(0, 10 * 86400),  # wait
    st.integers(0, 40 * 86400),  # run
    st.one_of(st.integers(1, 60 * 24 * 60), st.sampled_from(["UNLIMITED", "Partition_Limit"])),
    st.integers(1, 4096),  # cpus
    st.sampled_from(["COMPLETED", "FAILED", "TIMEOUT", "CANCELLED by 7", "NODE_FAIL"]),
    st.sampled_from(["", ".batch", ".extern", ".0"]),
), min_size=1, max_size=25)


def local(unix: int) -> str:
    return datetime.fromtimestamp(unix, ZoneInfo(ZONE)).strftime("%Y-%m-%dT%H:%M:%S")


def duration(seconds: int) -> str:
    days, rest = divmod(seconds, 86400)
    body = f"{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"
    return f"{days}-{body}" if days else body


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jobs)
def test_exported_jobs_read_back(tmp_path_factory: object, rows: list[tuple]) -> None:  # type: ignore[type-arg]
    lines = [HEADER]
    expect = []
    for k, (submit, wait, run, limit, cpus, state, step) in enumerate(rows, start=1):
        start, end = submit + wait, submit + wait + run
        limit_text = limit if isinstance(limit, str) else duration(limit * 60)
        lines.append(f"{k}{step}|{local(submit)}|{local(start)}|{local(end)}|{duration(run)}|"
                     f"{limit_text}|{cpus}|1|p|u|{state}")
        if not step:
            expect.append((k, submit, start, run, limit, cpus))
    path = Path(str(tmp_path_factory.mktemp("sacct"))) / "x.txt"  # type: ignore[attr-defined]
    path.write_text("\n".join(lines) + "\n")
    wl = load_sacct(path, AccountingOptions(timezone=ZONE, rebase=False))
    rep = wl.meta["load_report"]
    assert rep["steps_skipped"] == len(rows) - len(expect)
    got = {int(j): i for i, j in enumerate(wl.job_id)}
    assert sorted(got) == [e[0] for e in expect]
    for k, submit, start, run, limit, cpus in expect:
        i = got[k]
        # local times that a DST change repeats are read as the first instant
        ambiguous = rep["ambiguous_local_times"] > 0
        if not ambiguous:
            assert wl.submit[i] == submit
            assert wl.logged_wait[i] == start - submit
        assert wl.runtime[i] == run
        assert wl.walltime[i] == (max(run, 1) if isinstance(limit, str) else limit * 60)
        assert wl.units[i] == cpus
