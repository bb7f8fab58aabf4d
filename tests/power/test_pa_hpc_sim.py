"""PA-HPC-SIM's schedulers (``pa-list``, ``pa-easy``), its job power formula and its
chunk counting, on small hand-made inputs (the cross-check against the peer itself is
``benchmarks/pa_hpc_sim_crosscheck.py``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from dispatchlab import Workload, simulate
from dispatchlab.cli.main import app
from dispatchlab.energy.job_power import job_power_source
from dispatchlab.energy.pa_hpc_sim_power import peer_job_watts
from dispatchlab.platform.resolve import resolve_platform
from dispatchlab.workload.eurora import EuroraOptions
from dispatchlab.workload.load import load_workload
from tests.power.capped_workloads import draw_jobs

#: Two jobs: the second lists two chunks on node 8 next to 1 requested node.
BATCH = (
    "11;xxx;yyy;debug;2014-03-31 11:00:00__3;2;1;0;1048576#4;2;1;0;1048576#__"
    "2014-03-31 11:00:10;2014-03-31 11:05:10;2;4;2gb;00:30;NA;NA;COMPLETED;0\n"
    "12;xxx;yyy;debug;2014-03-31 11:00:05__8;8;0;0;204800#8;8;0;0;204800#__"
    "2014-03-31 11:00:20;2014-03-31 11:01:20;1;8;200mb;00:10;NA;NA;COMPLETED;0\n"
)


def _batch(tmp_path: Path) -> Path:
    path = tmp_path / "hist_2.log_crypt"
    path.write_text(BATCH)
    return path


def test_units_from_chunks_is_the_peers_reading(tmp_path: Path) -> None:
    path = _batch(tmp_path)
    assert load_workload(path).units.tolist() == [2, 1]
    chunks = load_workload(path, eurora=EuroraOptions(units="chunks"))
    assert chunks.units.tolist() == [2, 2]
    assert chunks.meta["options"]["units"] == "chunks"


def test_peer_power_formula(tmp_path: Path) -> None:
    wl = load_workload(_batch(tmp_path))
    # 40 W × 2 nodes + 62 W × 2 GPUs; 40 W × 1 node
    assert peer_job_watts(wl).tolist() == [204.0, 40.0]
    # a prediction above 400 W a node is cut to 400 W a node; below 1 W a node, 1 W
    assert peer_job_watts(wl, {"11": 1000.4, "12": 0.2}).tolist() == [800.0, 1.0]


def _wl(submit: list[int], runtime: list[int], walltime: list[int], units: list[int]
        ) -> Workload:
    return Workload.from_columns(submit=submit, runtime=runtime, walltime=walltime,
                                 units=units, req={"cores": [1] * len(submit)})


def test_pa_list_starts_by_walltime_and_lists_nodes_increasing() -> None:
    # 64 nodes: the peer's node order starts 48, 33, 34: a 3-unit job gets those nodes
    plat = resolve_platform("nodes=64,cores=1")
    wl = _wl([0, 0, 0], [10, 10, 10], [300, 100, 200], [3, 62, 1])
    res = simulate(wl, plat, "pa-list")
    jobs = res.jobs.set_index("job_id")
    # by wall-time: the 62-unit job, then the 1-unit one; the 3-unit job waits
    assert jobs["start"].tolist() == [10, 0, 0]


def test_pa_list_places_units_in_the_peers_node_order() -> None:
    plat = resolve_platform("nodes=64,cores=1")
    res = simulate(_wl([0], [10], [100], [3]), plat, "pa-list")
    # the peer's order starts 48, 33, 34; the decision lists them increasing
    assert res.jobs["node_list"][0] == "n33 n34 n48"


def test_pa_easy_reserves_by_the_running_jobs_actual_end() -> None:
    # 2 nodes; A runs 100 s of its 1000 s wall-time; B needs both nodes. The peer's shadow
    # time is A's actual end (100 s): C (150 s) is not backfilled, D (50 s) is; `easy`
    # (A's wall-time: 1000 s) backfills C, and B then waits for C
    plat = resolve_platform("nodes=2,cores=1")
    wl = _wl([0, 1, 2, 3], [100, 10, 150, 40], [1000, 1000, 150, 50], [1, 2, 1, 1])
    assert simulate(wl, plat, "pa-easy").jobs["start"].tolist() == [0, 100, 110, 3]
    assert simulate(wl, plat, "easy").jobs["start"].tolist()[:3] == [0, 152, 2]


@st.composite
def _small(draw: st.DrawFn) -> Workload:
    return draw_jobs(draw, 3, 2, 8)


@settings(max_examples=25, deadline=None)
@given(st.data(), st.sampled_from(["pa-list", "pa-easy"]))
def test_within_the_cap_under_the_peers_accounting(data: st.DataObject, disp: str) -> None:
    wl = data.draw(_small())
    plat = resolve_platform("nodes=3,cores=2")
    source = job_power_source("pa-hpc-sim", wl, plat)
    assert source is not None
    cap = float(data.draw(st.integers(int(max(peer_job_watts(wl))), 400)))
    res = simulate(wl, plat, disp, power_model=source, count_idle=False, power_cap=cap)
    jobs = res.jobs
    watts = peer_job_watts(wl)
    for t in jobs["start"].unique().tolist():
        on = ((jobs["start"] <= t) & (jobs["end"] > t)).to_numpy()
        assert watts[on].sum() <= cap
    assert np.isfinite(jobs["end"]).all()


def test_cli_reproduces_a_peer_setting(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, [
        "simulate", "-w", str(_batch(tmp_path)), "-p", "eurora-64", "-d", "pa-list",
        "--power-cap", "230", "--job-power", "pa-hpc-sim", "--no-idle-power",
        "--eurora-units", "chunks", "--json"])
    assert result.exit_code == 0, result.output
    # 204 W + 80 W > 230 W: the second job waits for the first to end (at 300 s)
    assert '"max_wait": 295' in result.output


@pytest.mark.parametrize("disp", ["pa-list", "pa-easy"])
def test_presets_are_registered(disp: str) -> None:
    from dispatchlab.dispatchers.registry import presets

    entry = presets()[disp]
    assert entry.family == "pa-hpc-sim"
    assert "--job-power pa-hpc-sim --no-idle-power" in entry.description


def test_cli_power_cap_takes_the_peers_cap_file(tmp_path: Path) -> None:
    caps = tmp_path / "power_caps"
    caps.write_text("0;230\n")
    args = ["simulate", "-w", str(_batch(tmp_path)), "-p", "eurora-64", "-d", "pa-easy",
            "--job-power", "pa-hpc-sim", "--no-idle-power", "--json", "--power-cap"]
    result = CliRunner().invoke(app, [*args, str(caps)])
    assert result.exit_code == 0, result.output
    assert '"max_wait": 295' in result.output
    bad = CliRunner().invoke(app, [*args, "lots"])
    assert bad.exit_code != 0
    assert "--power-cap takes a number of W or a cap profile file" in bad.output
