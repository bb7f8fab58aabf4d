"""Power caps counting idle power: a cap that blocks a start, a varying cap read from the
Eurora profile file, the over-cap policies, job power from a prediction file."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from dispatchlab import Platform, Workload, simulate
from dispatchlab.dispatchers.base import BaseDispatcher
from dispatchlab.energy.job_power import from_column, from_predictions
from dispatchlab.engine.decisions import Decision, Start
from dispatchlab.engine.events import Events
from dispatchlab.engine.scenario import load_scenario
from dispatchlab.engine.state import SystemView
from dispatchlab.errors import ConfigError, InvalidDecision
from dispatchlab.metrics.power_audit import it_power
from dispatchlab.platform.power import NodePowerSpec
from tests.conftest import missing_reason, trace_available, trace_path

CAPS = "trace:eurora-power-caps/power_caps_100"
CAPS_HERE = trace_available(CAPS[6:])
SMALL = NodePowerSpec(idle=10.0, core_first=8.0, core=2.0)
BIG = NodePowerSpec(idle=100.0, core_first=50.0, core=25.0)  # full 16-core node: 525 W


def two_nodes() -> Platform:
    return Platform.homogeneous(2, {"cores": 4}).with_node_model(SMALL)


def starts(res: object) -> list[int]:
    return res.jobs["start"].tolist()  # type: ignore[attr-defined,no-any-return]


def test_a_cap_blocks_a_start_counting_idle_power() -> None:
    # idle machine 20 W; job 0 fills node 0: 10 + 8 + 3·2 = 24 W → 34 W in all; job 1 on
    # idle node 1 adds its first core (8 W) → 42 W > 40 W: it waits for job 0's end
    wl = Workload.from_columns(submit=[0, 0], runtime=[100, 10], walltime=[100, 10],
                               units=[1, 1], req={"cores": [4, 1]})
    assert starts(simulate(wl, two_nodes(), "fifo-nonstrict")) == [0, 0]
    res = simulate(wl, two_nodes(), "fifo-nonstrict", power_cap=40.0)
    assert starts(res) == [0, 100]
    assert res.summary["power"]["peak_w"] == pytest.approx(34.0)
    assert res.summary["power"]["over_cap_seconds"] == 0.0
    # idle power is what blocks it: without counting idle, 24 + 8 fits under 40 W
    free = simulate(wl, two_nodes(), "fifo-nonstrict", power_cap=40.0, count_idle=False,
                    power_model=from_column(
                        Workload.from_columns(submit=[0, 0], runtime=[100, 10],
                                              walltime=[100, 10], units=[1, 1],
                                              req={"cores": [4, 1]}, power=[24.0, 8.0])))
    assert starts(free) == [0, 0]
    # node model without idle power: 24 − 10 + 8 = 22 W ≤ 25 W, both start; the audit's
    # rebuilt power is the active part only
    active = simulate(wl, two_nodes(), "fifo-nonstrict", power_cap=25.0, count_idle=False)
    assert starts(active) == [0, 0]
    _, w = it_power(active.recorder)
    assert w.max() == pytest.approx(22.0)


class Forced(BaseDispatcher):
    name = "forced"

    def decide(self, view: SystemView, events: Events) -> Sequence[Decision]:
        return [Start(j, np.array([j]), np.array([1])) for j in events.submitted]


def test_the_engine_refuses_a_start_over_the_cap() -> None:
    wl = Workload.from_columns(submit=[0, 0], runtime=[100, 10], walltime=[100, 10],
                               units=[1, 1], req={"cores": [4, 1]})
    with pytest.raises(InvalidDecision, match="power cap 40 W"):
        simulate(wl, two_nodes(), Forced(), power_cap=40.0)


def capped_workload(runtime_c: int) -> Workload:
    # A: one full node from 0 for 5000 s; C: two full nodes at 1050; B: two full nodes at 1500
    return Workload.from_columns(submit=[0, 1050, 1500], runtime=[5000, runtime_c, 100],
                                 walltime=[5000, runtime_c, 100], units=[1, 2, 2],
                                 req={"cores": [16, 16, 16]})


def four_big() -> Platform:
    return Platform.homogeneous(4, {"cores": 16}).with_node_model(BIG)


@pytest.mark.skipif(not CAPS_HERE, reason=missing_reason("eurora-power-caps"))
def test_a_varying_cap_from_the_eurora_profile() -> None:
    scen = load_scenario(trace_path(CAPS[6:]))
    assert [(c.time, c.value) for c in scen.changes][:3] == [(100, 2200.0), (1000, 4000.0),
                                                               (1100, 3000.0)]
    # base 400 W; A → 825 W; C at 1050 (cap 4000) → 1675 W, ends 1150; B at 1500 needs
    # 1675 W: cap 1600 (1500), 1500 (2000), then 2000 W at 3000 → starts at 3000
    res = simulate(capped_workload(100), four_big(), "fifo", scenario=CAPS)
    assert starts(res) == [0, 1050, 3000]
    assert res.summary["power"]["over_cap_seconds"] == 0.0
    _, w = it_power(res.recorder)
    assert w.max() == pytest.approx(1675.0)


@pytest.mark.skipif(not CAPS_HERE, reason=missing_reason("eurora-power-caps"))
def test_over_cap_policies() -> None:
    # C runs 1050–2050: the cap falls to 1600 W at 1500 under its 1675 W
    wait = simulate(capped_workload(1000), four_big(), "fifo", scenario=CAPS)
    assert starts(wait) == [0, 1050, 3000]
    assert wait.summary["power"]["over_cap_seconds"] == pytest.approx(550.0)
    kill = simulate(capped_workload(1000), four_big(), "fifo", scenario=CAPS,
                    on_over_cap="kill-youngest")
    assert kill.summary["power"]["over_cap_seconds"] == 0.0
    seg = kill.recorder.segments
    assert seg.t1[seg.job == 1].tolist() == [1500]  # C, the youngest, stopped at the drop
    assert kill.config["engine_settings"]["power"]["on_over_cap"] == "kill-youngest"
    assert kill.summary["failed"] == 1 and kill.summary["power"]["over_cap_seconds"] == 0.0
    assert starts(kill)[2] == 3000
    requeue = simulate(capped_workload(1000), four_big(), "fifo", scenario=CAPS,
                       on_over_cap="requeue-youngest")
    # C goes back to the queue ahead of B and restarts when 1675 W fit again (3000)
    rs = requeue.recorder.segments
    assert rs.t0[rs.job == 1].tolist() == [1050, 3000]
    with pytest.raises(ConfigError, match="on_over_cap"):
        simulate(capped_workload(10), four_big(), "fifo", on_over_cap="panic")


def test_power_from_a_prediction_file_with_a_fallback(tmp_path: Path) -> None:
    pred = tmp_path / "pred"
    pred.write_text("7.node129;30.0\n8.node129;12.5\n")
    wl = Workload.from_columns(submit=[0, 0, 0], runtime=[10, 10, 10], walltime=[10, 10, 10],
                               units=[1, 1, 1], req={"cores": [1, 1, 2]}, job_id=[7, 8, 9])
    src = from_predictions(pred, wl, two_nodes(), fallback="node")
    assert src.describe()["jobs_without_figure"] == 1
    one = np.array([1])
    assert src.job_power(0, one, one) == 30.0
    assert src.job_power(2, one, one) == pytest.approx(10 + 8 + 2)  # node model, 2 cores
    res = simulate(wl, two_nodes(), "fifo", power_cap=1e6, power_model=src)
    model = res.config["engine_settings"]["power"]["model"]
    assert model["jobs_without_figure"] == 1 and model["fallback"] == "node"
    with pytest.raises(ConfigError, match="1 job"):
        from_predictions(pred, wl, two_nodes(), fallback="error")
    fixed = from_predictions(pred, wl, two_nodes(), fallback=99.0)
    assert fixed.job_power(2, one, one) == 99.0
