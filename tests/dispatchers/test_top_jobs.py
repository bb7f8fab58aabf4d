"""PBS ``backfill_depth`` (top-jobs selection): reservations for the first N jobs that
cannot run, backfilling for every other queued job; the window reading kept apart."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from dispatchlab import Platform, Workload, simulate
from dispatchlab.dispatchers import get_dispatcher
from dispatchlab.errors import ConfigError
from tests.conftest import jobs
from tests.dispatchers.strategies import instances

# 4 cores. R holds 2 until 100. T1..T10 (3 cores, 100 s) cannot run: as top jobs they are
# reserved back to back at 100, 200, …, 1000, each leaving 1 core free. T11 needs all 4.
# L (1 core, 2000 s), the 12th waiting job, fits now on a core no top job needs.
R = (0, 100, 100, 2)
TOPS = [(1, 100, 100, 3)] * 10
T11 = (1, 100, 100, 4)
L = (2, 2000, 2000, 1)
QUEUE = jobs(R, *TOPS, T11, L)
L_ID, T11_ID = 12, 11


def starts(wl: Workload, dispatcher: str, platform: str = "nodes=4,cores=1") -> list[int]:
    return simulate(wl, platform, dispatcher).jobs["start"].tolist()


def test_low_job_backfills_past_the_tenth_when_it_delays_none_of_the_top_ten() -> None:
    got = starts(QUEUE, "pbs-fifo")
    assert got[L_ID] == 2  # backfilled at once, past 11 waiting jobs
    assert got[1:11] == [100 * k for k in range(1, 11)]  # no top job delayed
    assert got[T11_ID] == 2002  # not a top job: L may delay it


def test_a_job_that_would_delay_a_top_job_waits() -> None:
    # With 11 top jobs, T11 is reserved at 1100 on all 4 cores: L would overlap it.
    got = starts(QUEUE, "order=fifo,select=top-jobs,depth=11")
    assert got[L_ID] > 2
    assert got[T11_ID] == 1100
    assert got[1:11] == [100 * k for k in range(1, 11)]
    # A 2-core job fitting now would overlap T1's reservation at 100 on 3 of 4 cores.
    wl = jobs(R, *TOPS, (2, 150, 150, 2))
    assert starts(wl, "pbs-fifo")[11] > 2


def test_window_reading_does_not_look_past_the_tenth() -> None:
    # EASY limited to the head and the 9 jobs after it: L (12th waiting) is not looked
    # at until two top jobs have started, then fills T3's spare core at 200.
    got = starts(QUEUE, "pbs-fifo-window")
    assert got[L_ID] == 200
    assert got[1:11] == [100 * k for k in range(1, 11)]


def test_presets_name_both_readings() -> None:
    def sel(name: str) -> tuple[str, str, int | None]:
        d = get_dispatcher(name).describe()
        return d["ordering"]["name"], d["selection"]["name"], d["selection"].get("depth")

    assert sel("pbs-fifo") == ("fifo", "top-jobs", 10)
    assert sel("pbs-walltime") == ("sjf", "top-jobs", 400)
    assert sel("pbs-fifo-window") == ("fifo", "easy", 10)
    assert sel("pbs-walltime-window") == ("sjf", "easy", 400)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances())
def test_depth_one_is_easy_on_slot_machines(inst: tuple[Workload, Platform]) -> None:
    """One top job is EASY's head: same reservation, same backfilling rule (slots)."""
    wl, plat = inst
    if len(plat.resources) > 1:
        return
    top = simulate(wl, plat, "order=fifo,select=top-jobs,depth=1", on_infeasible="reject")
    easy = simulate(wl, plat, "easy", on_infeasible="reject")
    a, b = top.jobs["start"].tolist(), easy.jobs["start"].tolist()
    assert a == b


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances())
def test_runs_everywhere_and_every_feasible_job_runs(
    inst: tuple[Workload, Platform]
) -> None:
    """Node matrices, GPUs, killed jobs: every job runs (the engine checks capacity)."""
    wl, plat = inst
    for spec in ("pbs-fifo", "order=sjf,select=top-jobs", "order=fifo,select=top-jobs,depth=2"):
        res = simulate(wl, plat, spec, on_infeasible="reject")
        ran = res.jobs["start"] >= 0
        assert res.recorder is not None
        assert int(ran.sum()) == wl.n_jobs - len(res.recorder.rejected)
        assert (res.jobs["start"][ran] >= res.jobs["submit"][ran]).all()


def test_depth_must_be_positive() -> None:
    with pytest.raises(ConfigError, match="depth"):
        get_dispatcher("order=fifo,select=top-jobs,depth=0")
