"""Failed reads in a row: logged, then said loudly, then fatal (no Slurm needed)."""

from __future__ import annotations

import time

import pytest

from dispatchlab.live.outage import Outage, SlurmUnreachable


def test_failures_are_logged_then_loud_then_back(capsys: pytest.CaptureFixture[str]) -> None:
    events: list[str] = []
    watch = Outage(lambda event, **_: events.append(event), limit=None, loud_after=3)
    for _ in range(4):
        watch.failed("squeue --json --all reports slurm_load_jobs: Unspecified error")
    assert events == ["read_failed", "read_failed", "controller_unreachable"]  # reminded later
    assert "Slurm controller unreachable for 0 s (3 failed reads" in capsys.readouterr().err
    with pytest.raises(SlurmUnreachable, match="stopped while unable to read Slurm"):
        watch.finish()
    watch.ok()
    assert events[-1] == "controller_back" and watch.failures == 0
    watch.finish()  # reads work again: a normal end


def test_an_outage_beyond_the_bound_is_fatal_and_a_run_never_attempted_is_not() -> None:
    watch = Outage(lambda *a, **k: None, limit=0.05)
    watch.failed("x")
    time.sleep(0.06)
    with pytest.raises(SlurmUnreachable, match=r"Slurm controller unreachable: 2 failed reads"):
        watch.failed("x")
    Outage(lambda *a, **k: None).finish()
