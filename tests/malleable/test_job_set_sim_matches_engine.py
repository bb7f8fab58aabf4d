"""The dedicated kernel reproduces the general loop running the greedy dispatcher exactly:
same job ends, reconfiguration and power-off counts, and the same cost to rounding."""

from __future__ import annotations

from dataclasses import replace

import pytest

from dispatchlab import simulate
from dispatchlab.dispatchers.malleable.config import CODE_RULES, PAPER, Semantics
from dispatchlab.dispatchers.malleable.cost import malleable_platform, run_metrics
from dispatchlab.dispatchers.malleable.greedy import MalleableGreedy
from dispatchlab.dispatchers.malleable.job_set_sim import JobSetJobs, run_job_set
from dispatchlab.dispatchers.malleable.setups import setup_configs
from dispatchlab.engine.scenario import Change, Scenario
from dispatchlab.workload.generators.mejri import RESILIENCE, JobSetParams, job_set


@pytest.mark.parametrize("semantics", [PAPER, CODE_RULES], ids=lambda s: s.name)
@pytest.mark.parametrize("setup", list(setup_configs()))
def test_kernel_equals_general_loop(semantics: Semantics, setup: str) -> None:
    cfg = setup_configs(semantics)[setup]
    # a signal at 0 gives the engine the code's first decision at t = 0
    scen = Scenario([Change(0, "signal", 1.0, "tick")]) if semantics.decide_at_zero else None
    plat = malleable_platform(10, semantics.power)
    for index, params in ((0, JobSetParams()), (1, RESILIENCE), (2, JobSetParams())):
        wl = job_set(params, seed=7, index=index).to_workload()
        res = simulate(wl, plat, MalleableGreedy(cfg), seed=index, walltime_kill=False,
                       scenario=scen, tables=False)
        m = run_metrics(res.recorder, semantics.power)  # type: ignore[arg-type]
        k = run_job_set(JobSetJobs.from_workload(wl, 10), cfg, seed=index)
        assert res.recorder.end_time.tolist() == [int(e) for e in k.ends]  # type: ignore[union-attr]
        assert (k.reconfigs, k.poweroffs) == (m["reconfigs"], m["poweroffs"])
        assert k.cost == pytest.approx(m["cost"], rel=1e-12)
        assert k.energy == pytest.approx(m["energy_j"], rel=1e-12)


def test_scale_up_set_matches_too() -> None:
    cfg = setup_configs()["Swarm3"]
    params = JobSetParams(jobs=120, servers=40, dynamism=125.0)
    wl = job_set(params, seed=3).to_workload()
    res = simulate(wl, malleable_platform(40), MalleableGreedy(cfg), walltime_kill=False,
                   tables=False)
    m = run_metrics(res.recorder)  # type: ignore[arg-type]
    k = run_job_set(JobSetJobs.from_workload(wl, 40), cfg)
    assert k.cost == pytest.approx(m["cost"], rel=1e-12)
    assert (k.reconfigs, k.poweroffs) == (m["reconfigs"], m["poweroffs"])


def test_engine_clock_refuses_the_float_clock() -> None:
    with pytest.raises(Exception, match="float clock runs in the job-set simulation"):
        MalleableGreedy(replace(setup_configs()["FIFO"],
                                semantics=replace(PAPER, clock="float")))
