"""Family sections of the interactive report: shown only with their data, numbers from the
runs (profit per pricing scenario, the malleable cost, daily over-use of a desired
profile)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dispatchlab.experiments import RunStore, execute_run, parse_experiment, plan
from dispatchlab.report import build_comparison
from dispatchlab.report.figures import RunView
from dispatchlab.report.web.families import family_sections
from dispatchlab.report.web.families.profile import daily_overuse
from tests.conftest import needs_curie

SCENARIOS = ["summer-air", "winter-hybrid"]


@pytest.fixture(scope="module")
def priced(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two dispatchers on 60 jobs, each schedule priced in two scenarios."""
    out = tmp_path_factory.mktemp("priced")
    temp = "gen:temperature:season={s},days=10,seed=1"
    spec = parse_experiment({
        "name": "priced", "platforms": ["thesis-300"], "dispatchers": ["fifo", "easy"],
        "workloads": [{"name": "low", "path": "gen:curie-thesis:level=low,seed=0",
                       "limit": 60, "it_power": "jobs", "pricing": [
                           {"name": SCENARIOS[0], "cooling": "air",
                            "temperature": temp.format(s="summer"), "prices": "cheap"},
                           {"name": SCENARIOS[1], "cooling": "hybrid",
                            "temperature": temp.format(s="winter"), "prices": "cheap"}]}]})
    store = RunStore(out)
    for run in plan(spec):
        store.save(run, execute_run(run.config), backend="inline")
    return out


@needs_curie
def test_profit_is_broken_down_per_pricing_scenario(priced: Path) -> None:
    cmp = build_comparison(list(RunStore(priced).records()), title="p", order=["fifo", "easy"])
    sections = {sec.id: (sec, figs) for sec, figs in family_sections(cmp, [], {})}
    assert set(sections) >= {"profit"} and not {"energy", "capacity", "malleable"} & set(
        sections)
    sec, figs = sections["profit"]
    html = "".join(p for p in sec.parts if isinstance(p, str))
    assert "Profit per pricing scenario" in html and "Mean PUE per pricing scenario" in html
    for s in SCENARIOS:
        assert f">{s}</th>" in html
    runs = cmp.runs
    for d in ("fifo", "easy"):
        for s in SCENARIOS:
            value = float(runs[(runs["dispatcher"] == d) & (runs["pricing"] == s)]["profit"]
                          .mean())
            assert f'data-v="{value}">{value:,.0f}</td>' in html
    bars = figs[0].data
    assert [b["name"] for b in bars] == ["fifo", "easy"]
    assert all(b["x"] == SCENARIOS for b in bars)
    assert len(set(re.findall(r"<h3>(.*?) per pricing", html))) == 2


MALLEABLE = ["mejri-fifo", "mejri-fifo-rcfg-poff"]


def test_malleable_cost_is_each_dispatchers_stored_summary(tmp_path: Path) -> None:
    """Two malleable presets on 30 Mejri jobs: the table and the bar chart show each run's
    stored cost, mean stretch and normalised power."""
    spec = parse_experiment({
        "name": "mall", "platforms": ["mejri-10"], "dispatchers": MALLEABLE,
        "workloads": [{"path": "gen:mejri:jobs=30,seed=1", "walltime_kill": False}]})
    store = RunStore(tmp_path)
    for run in plan(spec):
        store.save(run, execute_run(run.config), backend="inline")
    records = list(RunStore(tmp_path).records())
    cmp = build_comparison(records, title="m", order=MALLEABLE)
    sections = {sec.id: (sec, figs) for sec, figs in family_sections(cmp, [], {})}
    sec, figs = sections["malleable"]
    html = "".join(p for p in sec.parts if isinstance(p, str))
    stored = {r.labels["dispatcher"]: r.summary["malleable"] for r in records}
    assert set(stored) == set(MALLEABLE)
    for d in MALLEABLE:
        for key in ("cost", "mean_stretch", "norm_power"):
            value = float(stored[d][key])
            assert f'data-v="{value}">{value:,.3f}</td>' in html, (d, key)
    cost = next(f for f in figs if f.name == "web-malleable-cost")
    (bars,) = cost.data
    assert bars["x"] == MALLEABLE
    assert np.allclose(bars["y"], [stored[d]["cost"] for d in MALLEABLE], rtol=1e-3)
    assert np.allclose(bars["customdata"], [[stored[d]["mean_stretch"],
                                             stored[d]["norm_power"]] for d in MALLEABLE],
                       rtol=1e-3)
    assert stored["mejri-fifo"]["cost"] != stored["mejri-fifo-rcfg-poff"]["cost"]


def test_daily_overuse_integrates_use_above_the_profile() -> None:
    """10 cores used while 4 are desired for a day, then 2 used under 4 desired."""
    ts = pd.DataFrame({"time": [0, 86400], "used_cores": [10, 2], "desired_cores": [4, 4]})
    jobs = pd.DataFrame({"start": [0], "end": [2 * 86400], "rejected": [False]})
    view = RunView("r", "#000", jobs, ts, {"cores": 16}, 1)
    days, over = daily_overuse(view, "cores")
    assert days.tolist() == [0, 1]
    assert np.allclose(over, [6 * 24, 0.0])
