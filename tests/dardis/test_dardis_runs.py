"""DARDIS and the profile-aware baselines on small runs: audited schedules, every job
run, reproducible with a seed, the baselines' starts under the profile, summary blocks."""

from __future__ import annotations

import numpy as np
import pytest

from dispatchlab.dispatchers.dardis import Dardis
from dispatchlab.dispatchers.dardis.presets import PRESETS
from dispatchlab.dispatchers.dardis.rule_based import ProfileRuleBased
from dispatchlab.engine.decisions import Start
from dispatchlab.engine.scenario import Change, Scenario
from dispatchlab.simulation import simulate
from dispatchlab.workload.workload import Workload

PROFILE = Scenario([Change(0, "desired_utilization", 0.9),
                    Change(4 * 3600, "desired_utilization", 0.4),
                    Change(10 * 3600, "desired_utilization", 0.9)])


def workload(n: int = 120, seed: int = 1) -> Workload:
    rng = np.random.default_rng(seed)
    wt = rng.integers(600, 4 * 3600, n)
    return Workload.from_columns(
        submit=np.sort(rng.integers(0, 12 * 3600, n)), walltime=wt,
        runtime=(wt * rng.uniform(0.2, 1.0, n)).astype(int), units=rng.integers(1, 24, n),
        req={"cores": np.ones(n, int)}, queues={"q": 1800})


@pytest.mark.parametrize("name", list(PRESETS))
def test_presets_run_every_job_under_audit(name: str) -> None:
    res = simulate(workload(), "nodes=6,cores=8", name, seed=2, scenario=PROFILE)
    s = res.summary
    assert s["jobs_run"] == 120 and s["audited"]
    prof = s["profile"]["cores"]
    assert prof["over_utilization"] >= 0 and 0 <= prof["dissimilarity"] <= 1
    assert prof["late_jobs_lst"] == s["late_jobs"]  # lst = arrival + the queue's ewt here


@pytest.mark.parametrize("name", ["dardis-profile", "dardis-balanced", "dardis-throughput"])
def test_same_seed_same_schedule(name: str) -> None:
    a = simulate(workload(), "nodes=6,cores=8", name, seed=5, scenario=PROFILE)
    b = simulate(workload(), "nodes=6,cores=8", name, seed=5, scenario=PROFILE)
    assert a.jobs["start"].tolist() == b.jobs["start"].tolist()
    assert a.summary["dispatcher_stats"]["messages"] == b.summary["dispatcher_stats"]["messages"]


def test_seed_changes_the_randomized_setup() -> None:
    a = simulate(workload(), "nodes=6,cores=8", "dardis-profile", seed=5, scenario=PROFILE)
    b = simulate(workload(), "nodes=6,cores=8", "dardis-profile", seed=6, scenario=PROFILE)
    assert a.jobs["start"].tolist() != b.jobs["start"].tolist()


def test_messages_are_three_per_node_per_round() -> None:
    res = simulate(workload(), "nodes=6,cores=8", Dardis("uniform", "random"), seed=1,
                   scenario=PROFILE)
    st = res.summary["dispatcher_stats"]
    assert st["messages"] == 3 * 6 * st["rounds"]
    assert st["scheduling"]["total_s"] > 0 and st["dispatching"]["total_s"] > 0


def test_a_lone_job_starts_in_its_window_on_an_empty_machine() -> None:
    wl = Workload.from_columns(submit=[100], walltime=[3600], runtime=[1000], units=[20],
                               req={"cores": [1]}, queues={"q": 600})
    for name in PRESETS:
        res = simulate(wl, "nodes=4,cores=8", name, seed=0)
        start = res.jobs["start"].tolist()[0]
        if name in ("dardis-profile", "dardis-balanced"):  # drawn in [est, lst]
            assert 100 <= start <= 700 and (start == 100 or start % 60 == 0), name
        else:
            assert start == 100, name


class CheckedBaseline(ProfileRuleBased):
    """Checks, before the engine applies them, that its starts fit the profile now."""

    def decide(self, view, events):  # type: ignore[no-untyped-def]
        out = super().decide(view, events)
        share = PROFILE.value_at("desired_utilization", view.now)
        used = view.capacity - view.free
        for d in out:
            if isinstance(d, Start):
                used[d.nodes] += d.counts[:, None]
                assert (used[d.nodes] <= np.floor(8 * share)).all(), (view.now, d)
        return out


@pytest.mark.parametrize("order", ["est", "lst", "walltime"])
def test_baselines_start_under_the_profile(order: str) -> None:
    res = simulate(workload(200, seed=3), "nodes=6,cores=8", CheckedBaseline(order), seed=0,
                   scenario=PROFILE)
    assert res.summary["jobs_run"] == 200
    # the profile drops at 4 h under running jobs: the only over-use the baselines make
    assert res.summary["profile"]["cores"]["over_utilization"] > 0


def test_dardis_respects_the_profile_when_it_can() -> None:
    # few small jobs: the profile is never worth breaking, so nothing goes above it
    wl = Workload.from_columns(submit=[0, 10, 20, 4 * 3600 + 5], walltime=[1800] * 4,
                               runtime=[1800] * 4, units=[4, 4, 4, 4],
                               req={"cores": [1] * 4}, queues={"q": 6 * 3600})
    for name in ("dardis-throughput", "dardis-profile", "dardis-balanced"):
        res = simulate(wl, "nodes=2,cores=8", name, seed=1, scenario=PROFILE)
        assert res.summary["profile"]["cores"]["over_utilization"] == 0, name
        assert res.summary["dispatcher_stats"]["soft_placements"] == 0


def test_time_series_and_report_figure_show_the_desired_profile() -> None:
    from dispatchlab.report.figures import RunView, utilization_figure

    res = simulate(workload(40), "nodes=6,cores=8", "rb-fcfs", seed=0, scenario=PROFILE)
    ts = res.timeseries
    share = np.array([PROFILE.value_at("desired_utilization", int(t)) for t in ts["time"]])
    assert ts["desired_cores"].tolist() == pytest.approx((share * 48).tolist())
    run = RunView("rb-fcfs", "#4C9BE8", res.jobs, ts, {"cores": 48}, 6)
    fig = utilization_figure([run])
    dashed = [ln for ln in fig.axes[0].get_lines() if ln.get_linestyle() == "--"]
    assert len(dashed) == 1 and "desired profile" in fig.get_suptitle()
    plain = simulate(workload(40), "nodes=6,cores=8", "rb-fcfs", seed=0)
    assert "desired_cores" not in plain.timeseries and "profile" not in plain.summary


def _two_jobs(first_walltime: int) -> Workload:
    return Workload.from_columns(submit=[0, 10], walltime=[first_walltime, 600],
                                 runtime=[first_walltime, 600], units=[1, 1],
                                 req={"cores": [1, 1]}, queues={"q": 600})


def test_retry_window_after_the_latest_start() -> None:
    # B's window [10, 610] is taken by A until 1500; the first retry, [610, 1810], holds
    # A's end
    res = simulate(_two_jobs(1500), "nodes=1,cores=1", Dardis(slot=60), seed=0)
    assert res.jobs["start"].tolist() == [0, 1500]
    st = res.summary["dispatcher_stats"]
    assert (st["retried_jobs"], st["after_last_termination"]) == (1, 0)


def test_after_three_retries_the_job_goes_after_the_last_termination() -> None:
    # retries [610, 1810], [1810, 4210], [4210, 9010] all fall inside A (until 10000,
    # reserved to the end of its last 60 s slot, 10020)
    res = simulate(_two_jobs(10_000), "nodes=1,cores=1", Dardis(slot=60), seed=0)
    assert res.jobs["start"].tolist() == [0, 10_020]
    st = res.summary["dispatcher_stats"]
    assert (st["retried_jobs"], st["after_last_termination"]) == (1, 1)
    assert st["rounds"] == 1 + 4 + 1  # A; B's four windows; B after the last end


@pytest.mark.parametrize("full", [False, True])
def test_backfilling_at_a_termination_moves_the_next_job_forward(full: bool) -> None:
    # A asks 1 h, runs 10 min; B (window 60 s) is planned after A's reserved end, 3600
    wl = Workload.from_columns(submit=[0, 10], walltime=[3600, 600], runtime=[600, 600],
                               units=[1, 1], req={"cores": [1, 1]}, queues={"q": 60})
    plain = simulate(wl, "nodes=1,cores=1", Dardis(slot=60), seed=0)
    assert plain.jobs["start"].tolist() == [0, 3600]
    res = simulate(wl, "nodes=1,cores=1", Dardis(slot=60, backfill=True, full_window=full),
                   seed=0)
    assert res.jobs["start"].tolist() == [0, 600]
    st = res.summary["dispatcher_stats"]
    assert st["backfill_moves"] == 1 and st["messages"] == 3 * st["rounds"] + 3


def test_a_job_larger_than_the_profile_ever_allows_runs_against_capacity() -> None:
    half = Scenario([Change(0, "desired_utilization", 0.5)])
    wl = Workload.from_columns(submit=[0, 5], walltime=[600, 600], runtime=[600, 600],
                               units=[6, 2], req={"cores": [1, 1]}, queues={"q": 60})
    res = simulate(wl, "nodes=1,cores=8", "rb-fcfs", seed=0, scenario=half)
    assert res.jobs["start"].tolist() == [0, 600]  # the second waits: 6 + 2 > 4
    assert res.summary["dispatcher_stats"]["profile_exempt"] == 1


def test_cli_simulate_shows_and_saves_the_profile_metrics(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json

    from typer.testing import CliRunner

    from dispatchlab.cli.main import app
    from tests.conftest import shared_trace

    trace = shared_trace("KTH-SP2-1996-2.1-cln.swf.gz")
    args = ["simulate", "-w", str(trace), "-p", "nodes=100,cores=1", "-d",
            "dardis-throughput", "--limit", "300", "--scenario",
            "gen:day-night:what=desired_utilization,day=0.5,night=1,days=30"]
    shown = CliRunner().invoke(app, args)
    assert shown.exit_code == 0, shown.output
    assert "over desired profile (cores)" in shown.output
    saved = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "run"), "--json"])
    assert saved.exit_code == 0, saved.output
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())["summary"]
    assert summary["profile"]["cores"]["dissimilarity"] >= 0
    assert summary["dispatcher_stats"]["messages"] > 0


def test_a_job_sent_after_the_last_termination_keeps_its_nodes_while_others_idle() -> None:
    # The Curie makespan mechanism (docs/dardis.md, "Makespan on Curie"), by hand on
    # 2 × 1 core, 60 s slots: A holds node 0 for 10,000 s; B asks node 1 for 20,000 s
    # but runs 100 s (ends at 105). C (window 60 s) finds no start in [10, 70] or its
    # three retries (up to 910 s), so it goes after the last planned termination, B's
    # reserved end 20,040, on node 0 (first fit). B's end at 105 frees node 1, which
    # holds no plan: nobody is told, and C, tied to node 0, moves only at A's
    # termination (10,000). EASY starts C on node 1 at 105.
    wl = Workload.from_columns(submit=[0, 5, 10], walltime=[10_000, 20_000, 600],
                               runtime=[10_000, 100, 600], units=[1, 1, 1],
                               req={"cores": [1, 1, 1]}, queues={"q": 60})
    res = simulate(wl, "nodes=2,cores=1", Dardis(slot=60, backfill=True), seed=0)
    assert res.jobs["start"].tolist() == [0, 5, 10_000]
    st = res.summary["dispatcher_stats"]
    assert (st["retried_jobs"], st["after_last_termination"], st["backfill_moves"]) == (1, 1, 1)
    easy = simulate(wl, "nodes=2,cores=1", "easy", seed=0)
    assert easy.jobs["start"].tolist() == [0, 5, 105]


def test_the_per_node_last_resort_uses_the_node_that_frees_first() -> None:
    # 2 × 1 core, 60 s slots: A holds node 0 for 20,000 s, B node 1 for 10,000 s (both
    # run their whole wall-time). C (600 s, window 60 s) fits in none of [10, 70] and its
    # three retries (up to 910 s). The thesis's last resort sends it after the machine's
    # last planned termination, A's end 20,000 (slot 334: 20,040), on node 0 (first fit);
    # B's end frees node 1, which holds no plan, so C moves only at A's end: 20,000.
    # Per node, node 1 holds nothing from slot ceil(10,000 / 60) = 167 (10,020 s): C is
    # planned there at 10,020 and moves to 10,000 when B ends (backfilling), as EASY does.
    wl = Workload.from_columns(submit=[0, 0, 10], walltime=[20_000, 10_000, 600],
                               runtime=[20_000, 10_000, 600], units=[1, 1, 1],
                               req={"cores": [1, 1, 1]}, queues={"q": 60})
    starts = {}
    for how in ("machine", "nodes"):
        res = simulate(wl, "nodes=2,cores=1", Dardis(slot=60, backfill=True, last_resort=how),
                       seed=0)
        assert res.summary["dispatcher_stats"]["after_last_termination"] == 1
        starts[how] = res.jobs["start"].tolist()
    assert starts == {"machine": [0, 0, 20_000], "nodes": [0, 0, 10_000]}
    assert simulate(wl, "nodes=2,cores=1", "easy", seed=0).jobs["start"].tolist() == \
        [0, 0, 10_000]


def test_the_per_node_last_resort_counts_units_per_node() -> None:
    # 3 × 2 cores: A (2 units of 1 core) fills node 0 until 3,000 s, B node 1 until
    # 6,000 s, D node 2 until 9,000 s. C asks 3 units of 1 core with a 60 s window: no
    # start before the nodes empty out. Node 0 alone (2 units) is not enough; with node 1
    # (free from 6,000) the 3 units fit: C is planned from 6,000, not from 9,000 (the
    # machine's last termination, where first fit puts it on nodes 0 and 1). Both start
    # C at B's end, 6,000: the thesis's plan through backfilling at that termination
    # (one move), the per-node one as planned.
    wl = Workload.from_columns(submit=[0, 0, 0, 10], walltime=[3_000, 6_000, 9_000, 600],
                               runtime=[3_000, 6_000, 9_000, 600], units=[2, 2, 2, 3],
                               req={"cores": [1, 1, 1, 1]}, queues={"q": 60})
    res = simulate(wl, "nodes=3,cores=2", Dardis(slot=60, backfill=True, last_resort="nodes"),
                   seed=0)
    assert res.jobs["start"].tolist() == [0, 0, 0, 6_000] and res.summary["audited"]
    assert res.summary["dispatcher_stats"]["backfill_moves"] == 0
    thesis = simulate(wl, "nodes=3,cores=2", Dardis(slot=60, backfill=True), seed=0)
    assert thesis.jobs["start"].tolist() == [0, 0, 0, 6_000]
    assert thesis.summary["dispatcher_stats"]["backfill_moves"] == 1


@pytest.mark.parametrize("how", ["machine", "nodes"])
def test_short_windows_send_jobs_to_the_last_resort_and_all_run(how: str) -> None:
    wl = workload(200, seed=4)
    wl = Workload.from_columns(submit=wl.submit, walltime=wl.walltime, runtime=wl.runtime,
                               units=wl.units, req={"cores": wl.req[:, 0]}, queues={"q": 60})
    res = simulate(wl, "nodes=6,cores=8", Dardis(backfill=True, retries=1, last_resort=how),
                   seed=3, scenario=PROFILE)
    assert res.summary["jobs_run"] == 200 and res.summary["audited"]
    assert res.summary["dispatcher_stats"]["after_last_termination"] > 0


def test_an_unknown_last_resort_is_refused() -> None:
    with pytest.raises(ValueError, match="last_resort"):
        Dardis(last_resort="cluster")


def test_the_per_node_last_resort_with_a_random_generator_always_places_the_job() -> None:
    # Regression (issue 28): 40 × 1 core, A holds 38 nodes until 30,000 s, B (2 units,
    # planned at a random start of its 6,000 s window) the other two; C (2 units) fits
    # nowhere in its window, and with no retry goes to the per-node last resort: the two
    # nodes B frees. DARDIS Balanced's exponential generator lets each node offer 3 starts
    # drawn from the 101 of the window, so the two often offer none in common: the run
    # stopped with "fits no start even on the empty machine". The last resort now offers
    # its start alone.
    wl = Workload.from_columns(submit=[0, 0, 10], walltime=[30_000, 10_000, 600],
                               runtime=[30_000, 10_000, 600], units=[38, 2, 2],
                               req={"cores": [1, 1, 1]}, queues={"q": 6000})
    fallbacks = 0
    for seed in range(6):
        disp = Dardis("exponential", "max-probability", slot=60, retries=0,
                      last_resort="nodes")
        res = simulate(wl, "nodes=40,cores=1", disp, seed=seed)
        assert res.summary["jobs_run"] == 3 and res.summary["audited"]
        st = res.summary["dispatcher_stats"]
        assert st["after_last_termination"] >= 1
        fallbacks += st["last_resort_at_est"]
    assert fallbacks > 0  # the case that crashed did occur
