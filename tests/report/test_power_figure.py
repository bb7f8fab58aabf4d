"""The report's power figure: IT power per run and the cap in force, from real runs."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import numpy as np

from dispatchlab import simulate
from dispatchlab.engine.scenario import cap_from_series
from dispatchlab.report.figures import RunView, has_power, power_figure
from tests.conftest import jobs


def view(label: str, color: str, dispatcher: str, capped: bool) -> RunView:
    wl = jobs((0, 100, 100, 2), (0, 100, 100, 2), (10, 50, 50, 1),
              power=[500.0, 500.0, 200.0])
    scenario = cap_from_series([0, 150], [800.0, 2000.0]) if capped else None
    res = simulate(wl, "nodes=2,cores=2", dispatcher, scenario=scenario)
    return RunView(label, color, res.jobs, res.timeseries, {"cores": 4}, 2)


def test_power_figure_draws_each_run_and_the_cap_once() -> None:
    plain = view("plain", "#1f77b4", "fifo", capped=False)
    assert not has_power([plain])  # no budget, no power series: no figure
    a = view("fifo", "#1f77b4", "fifo", capped=True)
    b = view("easy", "#ff7f0e", "easy", capped=True)
    assert has_power([plain, a, b])
    fig = power_figure([plain, a, b])
    ax = fig.axes[0]
    labels = [line.get_label() for line in ax.get_lines()]
    # one line per run with power, the shared cap drawn once
    assert [x.split(" (mean ")[0] for x in labels if "(mean " in x] == ["fifo", "easy"]
    assert labels.count("power cap") == 1 and len(labels) == 3
    cap = ax.get_lines()[labels.index("power cap")]
    # the cap steps from 0.8 kW to 2 kW at t = 150 s (the x axis is in the run's time unit)
    assert set(np.round(cap.get_ydata(), 3)) == {0.8, 2.0}
    # under the 800 W cap the second 500 W job waits for the first: never above the cap
    assert a.timeseries["power_used"].max() <= 800.0
    assert (a.timeseries["power_used"] <= a.timeseries["power_cap"]).all()
