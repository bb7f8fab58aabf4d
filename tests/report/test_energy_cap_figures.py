"""Report figures for power studies: energy per dispatcher and waiting against the cap.

A hand-computed campaign: three 16-core jobs at t = 0 on ``eurora-8`` (idle machine 416 W;
a 16-core job adds 26.25 + 15 × 6.25 = 120 W on any node). Under a 600 W cap only one
runs at a time (416 + 2 × 120 > 600): waits 0, 100, 200 s, run 300 s at 536 W =
160,800 J. Under 1200 W all three run together: waits 0, run 100 s at 776 W = 77,600 J.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import numpy as np
import pytest

from dispatchlab.experiments import RunStore, execute_run, parse_experiment, plan
from dispatchlab.experiments.collect import runs_table
from dispatchlab.report import build_comparison, write_report
from dispatchlab.report.figures import (
    cap_curves_figure,
    energy_figure,
    has_cap_sweep,
    has_energy,
)

KWH = 3.6e6
COLORS = {"fifo": "#1f77b4", "easy": "#ff7f0e"}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("capsweep")
    trace = out / "three.csv"
    trace.write_text("job_id,submit,walltime,runtime,units,req_cores,queue,ewt\n"
                     + "".join(f"{i},0,100,100,1,16,debug,3600\n" for i in (1, 2, 3)))
    spec = parse_experiment({
        "name": "caps", "platforms": ["eurora-8"], "dispatchers": ["fifo", "easy"],
        "parameters": {"cap": [600, 1200]},
        "workloads": [{"path": str(trace), "name": "three",
                       "scenario": "gen:constant:what=power_cap,value={cap}"}],
    })
    rs = RunStore(out / "store")
    for run in plan(spec):
        rs.save(run, execute_run(run.config), backend="inline")
    return out / "store"


def test_runs_table_has_energy_and_cap_columns(store: Path) -> None:
    runs = runs_table(RunStore(store).records()).sort_values(["dispatcher", "power_cap_mean_w"])
    assert runs["power_cap_mean_w"].tolist() == [600.0, 1200.0, 600.0, 1200.0]
    assert np.allclose(runs["energy_kwh"], [160_800 / KWH, 77_600 / KWH] * 2)
    assert np.allclose(runs["energy_idle_kwh"] + runs["energy_busy_kwh"], runs["energy_kwh"])
    assert runs["mean_wait"].tolist() == [100.0, 0.0, 100.0, 0.0]
    assert np.allclose(runs["mean_weighted_queue_time"], [100 / 3600, 0.0] * 2)


def test_energy_figure_bars_are_the_mean_energy(store: Path) -> None:
    runs = runs_table(RunStore(store).records())
    assert has_energy(runs)
    fig = energy_figure(runs, ["fifo", "easy"], COLORS)
    ax = fig.axes[0]
    ends: dict[float, float] = {}
    for bar in ax.patches:  # stacked parts: the right end of the last part is the total
        y = round(bar.get_y() + bar.get_height() / 2, 3)
        ends[y] = max(ends.get(y, 0.0), bar.get_x() + bar.get_width())
    mean = (160_800 + 77_600) / 2 / KWH
    assert np.allclose(sorted(ends.values()), [mean, mean])
    assert [t.get_text() for t in ax.get_yticklabels()] == ["fifo", "easy"]


def test_cap_curves_show_each_dispatcher_per_cap(store: Path) -> None:
    runs = runs_table(RunStore(store).records())
    assert has_cap_sweep(runs)
    assert not has_cap_sweep(runs[runs["power_cap_mean_w"] == 600.0])  # one cap: no curve
    fig = cap_curves_figure(runs, ["fifo", "easy"], COLORS)
    wait_ax, wqt_ax = fig.axes[:2]
    for line in wait_ax.get_lines():
        assert np.allclose(line.get_xdata(), [0.6, 1.2])
        assert np.allclose(line.get_ydata(), [100 / 60, 0.0])  # minutes
    for line in wqt_ax.get_lines():
        assert np.allclose(line.get_ydata(), [100 / 3600, 0.0])


@pytest.mark.slow
def test_report_adds_the_figures_only_when_the_data_has_them(store: Path) -> None:
    records = list(RunStore(store).records())
    cmp = build_comparison(records, title="caps", order=["fifo", "easy"])
    files = write_report(cmp, store.parent / "report")
    names = {f.name for f in files.figures}
    assert {"energy", "wait_vs_cap", "power"} <= names
    page = files.html.read_text()  # the interactive page: the energy section, nothing else
    assert all(f'id="{x}"' in page for x in ("energy", "web-energy", "web-cap-sweep",
                                             "web-power"))
    assert not any(f'id="{x}"' in page for x in ("capacity", "profile", "profit", "malleable"))
    one = [r for r in records if r.labels["params"]["cap"] == 600]
    cmp1 = build_comparison(one, title="one cap", order=["fifo", "easy"])
    assert has_energy(cmp1.runs) and not has_cap_sweep(cmp1.runs)
    assert not has_energy(cmp1.runs.drop(columns=["energy_kwh"]))  # no power model
