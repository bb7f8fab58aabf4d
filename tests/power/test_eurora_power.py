"""A real Eurora batch under the paper's power caps: predicted job power with the count of
jobs without a prediction, the varying cap profile, every power-aware dispatcher audited;
and the same through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dispatchlab import simulate
from dispatchlab.cli.main import app
from dispatchlab.energy.job_power import from_predictions
from dispatchlab.metrics.power_audit import it_power
from dispatchlab.platform.resolve import resolve_platform
from dispatchlab.workload.load import load_workload
from tests.conftest import missing_reason, trace_available, trace_path

PRED = "trace:eurora-power-predictions"
CAPS = "trace:eurora-power-caps/power_caps_100"
NEEDED = ("eurora-historical/100", "eurora-power-predictions", "eurora-power-caps")
pytestmark = pytest.mark.skipif(
    not all(trace_available(t) for t in NEEDED),
    reason=missing_reason(next((t for t in NEEDED if not trace_available(t)), NEEDED[0])))


def batch() -> Path:
    return sorted(trace_path("eurora-historical/100").iterdir())[0]


@pytest.mark.parametrize("disp", ["prb-power", "easy-power", "conservative-power", "easy",
                                  "fifo+poweroff:600"])
def test_a_historical_batch_under_the_varying_cap(disp: str) -> None:
    wl = load_workload(batch())
    plat = resolve_platform("eurora-8")
    src = from_predictions(PRED, wl, plat)
    res = simulate(wl, plat, disp, scenario=CAPS, power_model=src)  # audited
    assert int(res.jobs["start"].ge(0).sum()) == wl.n_jobs
    model = res.config["engine_settings"]["power"]["model"]
    assert model["jobs_without_figure"] == src.missing and model["fallback"] == "node"
    assert res.summary["energy"]["total_j"] > 0
    # each rise of the IT power happened under the cap in force
    _, watts = it_power(res.recorder)
    assert watts.max() == pytest.approx(res.summary["power"]["peak_w"])


def test_the_cli_takes_power_options(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["simulate", "-w", str(batch()), "-p", "eurora-8",
                                 "-d", "prb-power", "--job-power", str(PRED),
                                 "--scenario", str(CAPS), "--on-over-cap", "kill-youngest",
                                 "--json"])
    assert result.exit_code == 0, result.output
    s = json.loads(result.stdout)
    assert s["power"]["over_cap_seconds"] == 0.0
    assert s["energy"]["kwh"] > 0
    bad = runner.invoke(app, ["simulate", "-w", str(batch()), "-p", "eurora-8",
                              "--job-power-fallback", "soon"])
    assert bad.exit_code == 2 and "--job-power-fallback" in bad.output  # as typed
