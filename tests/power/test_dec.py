"""DEC and DEC-feedback (Borghesi et al. 2015 §5): the relaxation, the mapper that postpones
what idle power does not let start, the feedback's conflict sets, the cap on a real Eurora
batch (audited), determinism and the presets."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dispatchlab import Platform, Workload, simulate
from dispatchlab.dispatchers.dec.power import LinearPower
from dispatchlab.dispatchers.registry import get_dispatcher, presets
from dispatchlab.energy.job_power import from_predictions
from dispatchlab.engine.scenario import Change, Scenario
from dispatchlab.metrics.power_audit import it_power
from dispatchlab.platform.power import NodePowerSpec
from dispatchlab.platform.resolve import resolve_platform
from dispatchlab.workload.load import load_workload
from tests.conftest import missing_reason, trace_available, trace_path
from tests.power.capped_workloads import draw_jobs, hungriest_job_w

PRED = "trace:eurora-power-predictions"
EURORA_HERE = trace_available("eurora-historical/100") and trace_available(PRED[6:])

# idle 100 W per node; a full 4-core node adds 4 × 50 W
NODE = NodePowerSpec(idle=100.0, core_first=50.0, core=50.0)


def two_nodes(spec: NodePowerSpec = NODE) -> Platform:
    return Platform.homogeneous(2, {"cores": 4}).with_node_model(spec)


def two_full_node_jobs() -> Workload:
    return Workload.from_columns(submit=[0, 0], runtime=[100, 100], walltime=[100, 100],
                                 units=[1, 1], req={"cores": [4, 4]})


def stats(res: object) -> dict:  # type: ignore[type-arg]
    return res.summary["dispatcher_stats"]  # type: ignore[attr-defined,no-any-return]


def test_the_linear_figure_is_a_lower_bound_exact_on_a_full_node() -> None:
    # first core 26.25 W, the next 6.25 W, 16 cores: 6.25 + 20/16 = 7.5 W per core
    spec = NodePowerSpec(idle=40.0, core_first=26.25, core=6.25, gpu=50.0)
    plat = Platform.homogeneous(3, {"cores": 16, "gpu": 2}).with_node_model(spec)
    lp = LinearPower(SimpleNamespace(platform=plat, power_model=None))  # type: ignore[arg-type]
    assert lp.rates[0].tolist() == [7.5, 50.0]
    per_unit = 3 * 7.5 + 50.0
    assert lp.node_figure(np.array([3, 1]), 2) == pytest.approx(2 * per_unit)
    table = plat.power_table
    assert table is not None
    for k in range(1, 17):  # k busy cores on a node: linear ≤ the model, equal when full
        true = float(table.active(np.array([0]), np.array([[k, 0]]))[0])
        assert k * lp.rates[0, 0] <= true + 1e-9
        assert (k == 16) == (abs(k * lp.rates[0, 0] - true) < 1e-9)


def test_the_mapper_postpones_what_idle_power_does_not_let_start() -> None:
    # cap 500 W: idle machine 200 W; one full node 300 + 100 = 400 W; both 600 W > 500 W.
    # The relaxed model (active power only: 200 + 200 = 400 W ≤ 500 W) starts both at 0;
    # the mapper places job 0 and postpones job 1 to job 0's end.
    wl = two_full_node_jobs()
    res = simulate(wl, two_nodes(), "dec", power_cap=500.0)
    assert res.jobs["start"].tolist() == [0, 100]
    st = stats(res)
    assert st["postponed_by_mapper"] >= 1
    assert st["conflict_sets"] == 0 and st["feedback_iterations"] == 0
    assert res.summary["power"]["peak_w"] == pytest.approx(400.0)
    assert res.summary["power"]["over_cap_seconds"] == 0.0
    # without idle power both fit: the relaxation is then exact and nothing is postponed
    free = simulate(wl, two_nodes(), "dec", power_cap=500.0, count_idle=False)
    assert free.jobs["start"].tolist() == [0, 0]
    assert stats(free)["postponed_by_mapper"] == 0


def test_feedback_adds_the_conflict_set_and_is_no_worse() -> None:
    wl = two_full_node_jobs()
    plain = simulate(wl, two_nodes(), "dec", power_cap=500.0)
    fb = simulate(wl, two_nodes(), "dec-feedback", power_cap=500.0)
    st = stats(fb)
    # the mapped plan (0, 100) gave the conflict set {0, 1}; with it the model must not run
    # both together and must beat Σ w·s of the mapped plan: impossible, so the search proves
    # there is nothing better and the mapped plan stays
    assert st["conflict_sets"] == 1 and st["feedback_iterations"] == 1
    assert st["feedback_statuses"] == {"INFEASIBLE": 1}
    assert fb.summary["weighted_queue_time"] <= plain.summary["weighted_queue_time"] + 1e-9
    assert fb.jobs["start"].tolist() == [0, 100]


def test_feedback_on_four_jobs_is_no_worse_than_dec_or_prb() -> None:
    # only one full node runs at a time under the cap (idle counted), two in the relaxation:
    # the mapper postpones at two decision points; feedback adds conflict sets and proves
    # (INFEASIBLE under the strictly-better bound) that no relaxed plan maps better
    wl = Workload.from_columns(submit=[0, 0, 0, 0], runtime=[300, 50, 120, 30],
                               walltime=[300, 60, 120, 30], units=[1, 1, 1, 1],
                               req={"cores": [4, 4, 4, 2]})
    prb = simulate(wl, two_nodes(), "prb-power", power_cap=500.0)
    plain = simulate(wl, two_nodes(), "dec", power_cap=500.0)
    fb = simulate(wl, two_nodes(), "dec-feedback", power_cap=500.0)
    assert stats(plain)["postponed_by_mapper"] == 2
    st = stats(fb)
    assert st["conflict_sets"] >= 2 and set(st["feedback_statuses"]) == {"INFEASIBLE"}
    wqt = [r.summary["weighted_queue_time"] for r in (prb, plain, fb)]
    assert wqt[2] <= wqt[1] + 1e-12 and wqt[1] <= wqt[0] + 1e-12
    assert fb.jobs["start"].tolist() == [170, 0, 50, 0]
    assert fb.summary["power"]["over_cap_seconds"] == 0.0


def test_the_cp_plan_keeps_a_short_queue_job_from_waiting_behind_a_long_one() -> None:
    # job 0 holds node 0 until t = 100. At t = 1 job 1 (queue ewt 60 s: weight 600) needs
    # both nodes and job 2 (ewt 36,000 s: weight 1) one node for 1000 s. PRB, non-strict,
    # starts job 2 on the free node and job 1 waits until 1001; DEC's plan (weighted queue
    # time) keeps node 1 free, starts job 1 at 100 and job 2 after it
    from dispatchlab.workload.workload import Queue

    wl = Workload.from_columns(submit=[0, 1, 1], runtime=[100, 100, 1000],
                               walltime=[100, 100, 1000], units=[1, 2, 1],
                               req={"cores": [4, 4, 4]}, queue=["debug", "debug", "long"],
                               queues=[Queue("debug", 60), Queue("long", 36000)])
    prb = simulate(wl, two_nodes(), "prb-power", power_cap=1000.0)
    dec = simulate(wl, two_nodes(), "dec", power_cap=1000.0)
    assert prb.jobs["start"].tolist() == [0, 1001, 1]
    assert dec.jobs["start"].tolist() == [0, 100, 200]
    assert dec.summary["weighted_queue_time"] < prb.summary["weighted_queue_time"] / 5


def test_an_announced_cap_drop_is_planned_for() -> None:
    # active power only (no idle): a 100 s full-node job draws 200 W. The cap is 600 W, falls
    # to 150 W over [50, 200) (announced) and is 600 W again after. PRB starts the job now
    # and runs over the cap for 50 s; DEC's padding intervals see the drop and plan it at 200
    wl = Workload.from_columns(submit=[0], runtime=[100], walltime=[100], units=[1],
                               req={"cores": [4]})
    scen = Scenario([Change(0, "power_cap", 600.0), Change(50, "power_cap", 150.0),
                     Change(200, "power_cap", 600.0)])
    prb = simulate(wl, two_nodes(), "prb-power", scenario=scen, count_idle=False)
    assert prb.jobs["start"].tolist() == [0]
    assert prb.summary["power"]["over_cap_seconds"] == 50.0
    dec = simulate(wl, two_nodes(), "dec", scenario=scen, count_idle=False)
    assert dec.jobs["start"].tolist() == [200]
    assert dec.summary["power"]["over_cap_seconds"] == 0.0
    # decision points: 0, 50 and 200 (cap changes; woken at 200, not every second), 300
    assert dec.summary["decision_points"] == 4


@pytest.mark.skipif(not EURORA_HERE, reason=missing_reason("eurora-historical"))
@pytest.mark.parametrize("disp", ["dec", "dec-feedback-2"])
def test_a_real_eurora_batch_stays_under_the_cap(disp: str) -> None:
    # 64-node Eurora, predicted job power, no idle power (PA-HPC-SIM's accounting): at
    # 3000 W the cap binds (the first 40 jobs of the batch wait 3× longer than uncapped)
    wl = load_workload(sorted(trace_path("eurora-historical/100").iterdir())[0]).take(slice(0, 40))
    plat = resolve_platform("eurora")
    src = from_predictions(PRED, wl, plat)
    capped = simulate(wl, plat, disp, power_cap=3000.0, power_model=src, count_idle=False)
    free = simulate(wl, plat, disp, power_model=src, count_idle=False)
    assert capped.summary["mean_wait"] > free.summary["mean_wait"]  # the cap binds
    _, watts = it_power(capped.recorder)  # the audit's own rebuild of the IT power
    assert watts.max() <= 3000.0 + 1e-6
    assert capped.summary["power"]["over_cap_seconds"] == 0.0
    assert int(capped.jobs["start"].ge(0).sum()) == wl.n_jobs
    # jobs without a prediction draw their nodes' idle power too: the mapper postpones some
    assert stats(capped)["postponed_by_mapper"] > 0 and stats(capped)["solves"] >= 1
    again = simulate(wl, plat, disp, power_cap=3000.0, power_model=src, count_idle=False)
    assert again.jobs["start"].tolist() == capped.jobs["start"].tolist()  # deterministic
    assert stats(capped)["reproducible"] is True


def test_presets_family_and_names() -> None:
    fam = {k for k, v in presets().items() if v.family == "dec"}
    assert {"dec", "dec-feedback", "dec-paper", "dec-feedback-paper", "dec-feedback-10"} <= fam
    assert get_dispatcher("dec-feedback").name == "dec-feedback"
    paper = get_dispatcher("dec-paper")
    assert paper.config.search.deterministic is False  # type: ignore[attr-defined]
    assert paper.config.search.delta == 5.0 and paper.config.search.delta_max == 60.0  # type: ignore[attr-defined]
    assert math.isclose(get_dispatcher("dec-feedback-3").dec.feedback, 3)  # type: ignore[attr-defined]


def test_specs_and_the_family_in_the_cli() -> None:
    from dispatchlab.cli.compare_cmd import split_dispatchers
    from dispatchlab.errors import ConfigError

    assert {"dec", "dec-feedback", "dec-paper"} <= set(split_dispatchers(["family:dec"]))
    d = get_dispatcher("dec=dec-feedback,feedback=4,m=50,delta_max=0.64")
    assert d.name == "dec-feedback-4" and d.dec.feedback == 4  # type: ignore[attr-defined]
    assert d.config.m == 50 and d.config.search.delta_max == 0.64  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match="not a DEC preset"):
        get_dispatcher("dec=dek")
    with pytest.raises(ConfigError, match="unknown DEC parameter 'foo'"):
        get_dispatcher("dec=dec,foo=1")


@pytest.mark.skipif(not EURORA_HERE, reason=missing_reason("eurora-historical"))
def test_the_cli_runs_dec_under_a_cap(tmp_path: Path) -> None:
    import json

    from typer.testing import CliRunner

    from dispatchlab.cli.main import app

    wl = load_workload(sorted(trace_path("eurora-historical/100").iterdir())[0]).take(slice(0, 10))
    csv = tmp_path / "ten.csv"
    wl.to_frame().to_csv(csv, index=False)
    result = CliRunner().invoke(app, ["simulate", "-w", str(csv), "-p", "eurora-8",
                                      "-d", "dec-feedback-2", "--job-power", str(PRED),
                                      "--power-cap", "2500", "--json"])
    assert result.exit_code == 0, result.output
    s = json.loads(result.stdout)
    assert s["jobs"] == 10 and s["power"]["over_cap_seconds"] == 0.0
    assert s["dispatcher_stats"]["reproducible"] is True
    assert {"solves", "conflict_sets", "feedback_iterations"} <= set(s["dispatcher_stats"])


@st.composite
def capped_cases(draw: st.DrawFn) -> tuple[Workload, Platform, float, str]:
    """A small machine with the node model, a few jobs, a cap every job fits alone."""
    n_nodes = draw(st.integers(2, 3))
    cores = draw(st.sampled_from([2, 4]))
    spec = NodePowerSpec(idle=draw(st.sampled_from([0.0, 10.0, 50.0])),
                         core_first=draw(st.sampled_from([5.0, 30.0])),
                         core=draw(st.sampled_from([0.0, 2.0, 7.5])))
    plat = Platform.homogeneous(n_nodes, {"cores": cores}).with_node_model(spec)
    wl = draw_jobs(draw, n_nodes, cores, 8)
    need = hungriest_job_w(wl, spec)
    cap = n_nodes * spec.idle + need + draw(st.floats(0.0, 100.0))
    return wl, plat, cap, draw(st.sampled_from(["dec", "dec-feedback-2"]))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=capped_cases())
def test_dec_keeps_under_any_fixed_cap(case: tuple[Workload, Platform, float, str]) -> None:
    wl, plat, cap, disp = case
    res = simulate(wl, plat, disp, power_cap=cap)  # audited
    _, watts = it_power(res.recorder)
    assert watts.max() <= cap + 1e-6
    assert res.summary["power"]["over_cap_seconds"] == 0.0
    assert int(res.jobs["start"].ge(0).sum()) == wl.n_jobs
    assert stats(res)["errors"] == 0 and stats(res)["invalid_dropped"] == 0
