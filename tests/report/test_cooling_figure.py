"""The report's cooling figure: IT power, cooling power and temperature from real runs,
and a compare report that finds the runs' cooling tables."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import numpy as np

from dispatchlab import simulate
from dispatchlab.report.figures import RunView, cooling_figure, has_cooling
from tests.conftest import jobs

TEMP = "gen:temperature:season=summer,days=1,step=600"


def view(label: str, color: str, dispatcher: str, cooling: str | None) -> RunView:
    wl = jobs((0, 3600, 3600, 2), (0, 3600, 3600, 2), (10, 1800, 1800, 1),
              power=[500.0, 500.0, 200.0])
    res = simulate(wl, "nodes=2,cores=2", dispatcher, cooling=cooling,
                   temperature=TEMP if cooling else None)
    return RunView(label, color, res.jobs, res.timeseries, {"cores": 4}, 2,
                   cooling=res.tables.get("cooling"))


def test_cooling_figure_panels() -> None:
    plain = view("plain", "#1f77b4", "fifo", None)
    assert not has_cooling([plain])
    a = view("fifo", "#1f77b4", "fifo", "air:scaled")
    b = view("easy", "#ff7f0e", "easy", "hybrid:scaled")
    assert has_cooling([plain, a, b])
    fig = cooling_figure([plain, a, b])
    it_ax, cool_ax, temp_ax = fig.axes[:3]
    labels = [line.get_label() for line in it_ax.get_lines()]
    assert [x.split(" (mean PUE")[0] for x in labels] == ["fifo", "easy"]
    # air cools at PUE ≈ 1.4 in summer, hybrid ≈ 1.1: more cooling power for the same load
    ya, yb = (np.nanmax(line.get_ydata()) for line in cool_ax.get_lines())
    assert ya > 2 * yb > 0
    # the same ambient temperature is drawn once, within the summer range
    assert len(temp_ax.get_lines()) == 1
    t = temp_ax.get_lines()[0].get_ydata()
    assert np.nanmin(t) > 19 and np.nanmax(t) < 33
