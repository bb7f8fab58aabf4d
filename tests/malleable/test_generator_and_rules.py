"""The job-set generator (Mejri et al. §5.2) and the decision conditions of Algorithm 1."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from dispatchlab.dispatchers.malleable.algorithm1 import (
    code_reconfiguration_time,
    paper_reconfiguration_time,
    power_off_duration,
    wants_power_off,
    wants_reconfiguration,
)
from dispatchlab.dispatchers.malleable.config import CODE, GreedyConfig
from dispatchlab.errors import ConfigError, WorkloadError
from dispatchlab.workload.generators import generate
from dispatchlab.workload.generators.mejri import (
    SCALE_UP,
    JobSetParams,
    job_set,
    job_sets,
)


def test_code_seeding_reproduces_the_authors_generator() -> None:
    # Experiments._generate_jobs(50, 10, 3) in the authors' code (its own environment):
    # job0 = JobRequest(sub_time=332.23348234979477, alpha=0.6189823135459457,
    # data=276.6723203950164, mass=83.19702101536197, min 2, max 7), job49.sub_time =
    # 25190.26334071532; random.random() right after it gives 0.5125873869945238.
    js = job_set(JobSetParams(), seed=3, seeding="code")
    assert js.submit[0] == 332.23348234979477 and js.alpha[0] == 0.6189823135459457
    assert js.data[0] == 276.6723203950164 and js.mass[0] == 83.19702101536197
    assert (js.min_servers[0], js.max_servers[0]) == (2, 7)
    assert js.submit[49] == 25190.26334071532
    rnd = random.Random()
    rnd.setstate(js.code_random_state)
    assert rnd.random() == 0.5125873869945238
    # the code's sets overlap: set i + 1 holds the jobs 1… of set i (masses shifted by one)
    nxt = job_set(JobSetParams(), seed=4, seeding="code")
    assert nxt.mass[:49].tolist() == js.mass[1:].tolist()


def test_independent_sets_follow_the_tables_distributions() -> None:
    sets = job_sets(200, seed=11)
    gaps = np.concatenate([np.diff(np.r_[0.0, s.submit]) for s in sets])
    mass = np.concatenate([s.mass for s in sets])
    assert gaps.mean() == pytest.approx(500, rel=0.08)  # dynamism
    assert mass.mean() == pytest.approx(1700, rel=0.15)  # mass; heavy tail: loose
    assert mass.mean() / np.median(mass) == pytest.approx(3.8, rel=0.2)  # disparity
    alpha = np.concatenate([s.alpha for s in sets])
    lo = np.concatenate([s.min_servers for s in sets])
    hi = np.concatenate([s.max_servers for s in sets])
    assert alpha.min() >= 0.5 and alpha.max() < 1
    assert (lo == np.ceil(alpha / 3 * 9)).all() and (lo <= hi).all() and hi.max() == 9
    assert sets[0].mass.tolist() != [*sets[1].mass[1:].tolist(), 0]
    big = job_set(SCALE_UP, seed=1)
    assert len(big) == 500 and big.min_servers.min() >= 17 and big.max_servers.max() <= 99


def test_workload_rounds_up_to_whole_seconds() -> None:
    js = job_set(JobSetParams(jobs=20), seed=5)
    wl = js.to_workload()
    assert (wl.submit >= js.submit).all() and (wl.submit - js.submit < 1).all()
    engine_mass = wl.runtime * wl.units.astype(float) ** wl.alpha
    assert (engine_mass >= js.mass - 1e-6).all()
    assert (wl.walltime == wl.runtime).all() and (wl.units == wl.min_units).all()


def test_generator_spec() -> None:
    wl = generate("gen:mejri:jobs=30,servers=10,seed=2,index=4")
    assert wl.n_jobs == 30 and wl.is_malleable and "index=4" in wl.source
    with pytest.raises(WorkloadError, match="unknown seeding"):
        generate("gen:mejri:seeding=other")
    with pytest.raises(WorkloadError, match="disparity"):
        generate("gen:mejri:disparity=0.5")


def test_reconfiguration_times_of_the_paper_and_of_the_code() -> None:
    # eq. 3: 2 → 4 moves (D/4)(2 − 1); the code: D/4 · floor(4/2) — twice as long
    assert paper_reconfiguration_time(40.0, 2, 4) == 10.0
    assert code_reconfiguration_time(40.0, 2, 4) == 20.0
    # 2 → 3: (D/3)(ceil(1.5) − 1) = D/3 both ways
    assert paper_reconfiguration_time(30.0, 2, 3) == code_reconfiguration_time(30.0, 2, 3)


def test_conditions_by_hand() -> None:
    c1 = GreedyConfig(condition=1, w_n=0.5, w_alpha=1.0, s_reconfig=0.9)
    # (6/9)^0.5 · 0.9 · 0.9 = 0.6614 > 0.5; (2/9)^0.5 · 0.9 · 0.9 = 0.38
    assert wants_reconfiguration(c1, 6, 9, 0.9, 100.0)
    assert not wants_reconfiguration(c1, 2, 9, 0.9, 100.0)
    c2 = GreedyConfig(condition=2, w_n=0.5, w_alpha=1.0, s_reconfig=0.9, w_d=1.0)
    # × (100/500)^1 = 0.13
    assert not wants_reconfiguration(c2, 6, 9, 0.9, 100.0)
    assert wants_reconfiguration(c2, 9, 9, 1.0, 500.0)
    c3 = GreedyConfig(condition=3, w_n=1.0, w_alpha=1.0, w_d=0.0, bias=0.1)
    # tanh(1 · 1 · 1 + 0.1) = 0.80; tanh(3/9 + 0.1) = 0.41
    assert wants_reconfiguration(c3, 9, 9, 1.0, 10.0)
    assert not wants_reconfiguration(c3, 3, 9, 1.0, 10.0)
    assert math.tanh(3 / 9 + 0.1) < 0.5
    off = GreedyConfig(power_off=True, decide_poweroff=True, w_off=1.0, s_off=0.8,
                       t1=400.0, t2=2000.0, p_t1=0.25)
    assert wants_power_off(off, 7, 10) and not wants_power_off(off, 6, 10)  # 0.56 / 0.48
    assert power_off_duration(off, lambda: 0.1) == 400.0
    assert power_off_duration(off, lambda: 0.9) == 2000.0
    assert wants_power_off(GreedyConfig(power_off=True), 1, 10)


def test_config_validation() -> None:
    with pytest.raises(ConfigError, match="condition"):
        GreedyConfig(condition=4)
    with pytest.raises(ConfigError, match="shorter than a shutdown and a boot"):
        GreedyConfig(power_off=True, t1=100.0)
    GreedyConfig(power_off=True, t1=200.0, semantics=CODE)  # the code's 157 s
