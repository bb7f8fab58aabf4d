"""A workload's ``pricing`` list: one row per run × pricing scenario, the schedule simulated
once for a dispatcher that does not read pricing inputs and once per scenario for one that
does (the offline planner); validation, resume and the stored scenario definitions."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd
import pytest

from dispatchlab.dispatchers.base import BaseDispatcher
from dispatchlab.dispatchers.registry import get_dispatcher
from dispatchlab.engine.capabilities import capabilities_of
from dispatchlab.errors import ConfigError
from dispatchlab.experiments import RunStore, parse_experiment, plan, run_campaign, runs_table
from dispatchlab.experiments.campaign import simulation_groups
from dispatchlab.experiments.config import PlannedRun
from dispatchlab.experiments.worker import execute_run
from dispatchlab.stats.metrics import TIMING_KEYS
from tests.conftest import needs_curie

T = TypeVar("T")
R = TypeVar("R")

pytestmark = needs_curie

WORKLOAD = "gen:curie-thesis:level=low,seed=0"
SUMMER = "gen:temperature:season=summer,days=3,seed={seed}"
WINTER = "gen:temperature:season=winter,days=3,seed={seed}"
SCENARIOS = [
    {"name": "summer-air", "cooling": "air", "temperature": SUMMER, "prices": "cheap"},
    {"name": "summer-hybrid", "cooling": "hybrid", "temperature": SUMMER,
     "prices": "expensive"},
    {"name": "winter-air", "cooling": "air", "temperature": WINTER, "prices": "cheap"},
]
BLIND = ["fifo", "easy"]


def experiment(pricing: list[dict[str, Any]] | None = None, *, dispatchers: Sequence[str] = BLIND,
               single: list[dict[str, Any]] | None = None, **workload: Any) -> dict[str, Any]:
    """300 jobs of the low Curie workload on the thesis machine, priced per ``pricing``
    (one entry) or per ``single`` (one single-scenario entry each)."""
    base = {"path": WORKLOAD, "limit": 300, "it_power": "jobs", **workload}
    if single is not None:
        entries = [{**base, "name": s["name"], **{k: v for k, v in s.items() if k != "name"}}
                   for s in single]
    else:
        entries = [{**base, "name": "low", "pricing": pricing or SCENARIOS}]
    return {"name": "pricing", "platforms": ["thesis-300"], "dispatchers": list(dispatchers),
            "seeds": [1], "workloads": entries}


class InlineEngine:
    """Runs every item in this process (so the simulations can be counted)."""

    name = "inline"

    def __enter__(self) -> InlineEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def map_unordered(self, fn: Callable[[T], R], items: Sequence[T],
                      key: Callable[[T], str]) -> Iterator[tuple[T, R | BaseException]]:
        for item in items:
            try:
                yield item, fn(item)
            except Exception as exc:
                yield item, exc


@pytest.fixture
def count_simulations(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Dispatcher specs of every ``simulate`` call from now on."""
    import dispatchlab.simulation as simulation

    calls: list[str] = []
    real = simulation.simulate

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(str(args[2]))
        return real(*args, **kwargs)

    monkeypatch.setattr(simulation, "simulate", counted)
    return calls


def campaign(runs: list[PlannedRun], out: Path) -> Any:
    with InlineEngine() as eng:
        return run_campaign(runs, RunStore(out), eng)


def _figures(summary: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in summary.items()
            if k not in TIMING_KEYS and k not in ("dispatcher_stats", "sim_seconds")}


# --- validation ---------------------------------------------------------------------------


def _scen(**change: Any) -> list[dict[str, Any]]:
    return [SCENARIOS[0], {**SCENARIOS[1], **change}]


@pytest.mark.parametrize(("spec", "field", "words"), [
    (experiment(_scen(cooling="water")), "workloads[0].pricing[1].cooling",
     "expected 'air', 'hybrid' or a CSV"),
    (experiment(_scen(prices="free")), "workloads[0].pricing[1].prices", "K1,K2"),
    (experiment(_scen(temperature=None)), "workloads[0].pricing[1].cooling",
     "no ambient temperature"),
    (experiment(_scen(name="summer-air")), "workloads[0].pricing[1].name", "named twice"),
    (experiment(_scen(name="summer air")), "workloads[0].pricing[1].name", "use letters"),
    (experiment(_scen(name="again", cooling="air", prices="cheap")), "workloads[0].pricing[1]",
     "as 'summer-air' does"),
    (experiment(_scen(cool="air")), "workloads[0].pricing[1].cool", "unknown key"),
    (experiment(_scen(it_power="grid")), "workloads[0].pricing[1].it_power", "'auto'"),
    (experiment([{"name": "x"}]), "workloads[0].pricing[0].cooling", "missing"),
    (experiment(SCENARIOS, cooling="air"), "workloads[0].pricing",
     "either 'pricing' or the single-scenario key 'cooling'"),
    (experiment(SCENARIOS, prices="cheap"), "workloads[0].pricing", "'prices'"),
    ({**experiment(), "workloads": [{"path": WORKLOAD, "pricing": []}]},
     "workloads[0].pricing", "at least 1"),
    (experiment(_scen(cooling="{cooling}")), "workloads[0]", "undefined parameter '{cooling}'"),
])
def test_bad_pricing_names_file_and_field(spec: dict[str, Any], field: str, words: str) -> None:
    with pytest.raises(ConfigError) as err:
        plan(parse_experiment(spec, source="exp.toml"), source="exp.toml")
    assert err.value.field == field
    assert str(err.value).startswith(f"exp.toml: field '{field}': ")
    assert words in str(err.value)


def test_scenarios_take_parameters() -> None:
    spec = experiment([{"name": "s-{cooling}", "cooling": "{cooling}", "temperature": SUMMER}])
    spec["parameters"] = {"cooling": ["air", "hybrid"]}
    runs = plan(parse_experiment(spec))
    assert sorted({(r.labels.pricing, r.config.workload.cooling["cooling"])  # type: ignore[index]
                   for r in runs}) == [("s-air", "air"), ("s-hybrid", "hybrid")]


# --- the plan: rows, hashes, sharing property ----------------------------------------------


def test_plan_one_run_per_scenario_hashed_like_single_entries() -> None:
    runs = plan(parse_experiment(experiment()))
    single = plan(parse_experiment(experiment(single=SCENARIOS)))
    assert len(runs) == len(SCENARIOS) * len(BLIND)
    # the pricing scenario is the run's configuration, its name only a label
    assert [r.key for r in runs] == [r.key for r in single]
    assert {r.labels.workload for r in runs} == {"low"}
    assert [r.labels.pricing for r in runs[:: len(BLIND)]] == [s["name"] for s in SCENARIOS]
    assert len({r.labels.block for r in runs}) == len(SCENARIOS)  # a set per scenario
    assert all("|pricing=" in r.labels.block and r.labels.block.endswith("|seed=1")
               for r in runs)
    assert all(r.shares_simulation for r in runs)
    assert len(simulation_groups(runs)) == len(BLIND)
    assert len({r.config.simulation_key for r in runs}) == len(BLIND)


def test_reads_pricing_is_a_declared_property() -> None:
    assert BaseDispatcher().reads_pricing is False
    assert not capabilities_of(get_dispatcher("easy")).reads_pricing
    assert not capabilities_of(get_dispatcher("hybrid-dardis70")).reads_pricing  # Alg. 5 planner
    assert capabilities_of(get_dispatcher(
        "dardis=hybrid-dardis70,planner=multi,cooling=air,temperature=summer,prices=cheap")
    ).reads_pricing
    assert capabilities_of(get_dispatcher("offline-heuristic")).reads_pricing
    assert capabilities_of(get_dispatcher("offline=delay,temperature=summer,runs=5")).reads_pricing
    # declares nothing: reads nothing of the pricing
    assert not capabilities_of(object()).reads_pricing


# --- running: shared simulation = separate runs -------------------------------------------


def test_shared_simulation_prices_exactly_as_separate_runs(
    tmp_path: Path, count_simulations: list[str]
) -> None:
    runs = plan(parse_experiment(experiment()))
    outcome = campaign(runs, tmp_path)
    assert outcome.ok and outcome.stored == len(runs)
    assert sorted(count_simulations) == sorted(BLIND)  # once per dispatcher
    store = RunStore(tmp_path)
    by_key = {rec.key: rec for rec in store.records()}
    count_simulations.clear()
    for run in runs:  # each run alone, as a single-scenario entry runs it
        alone = execute_run(run.config)
        rec = by_key[run.key]
        assert _figures(rec.summary) == json.loads(json.dumps(_figures(alone.summary)))
        pd.testing.assert_frame_equal(pd.read_parquet(rec.path / "cooling.parquet"),
                                      alone.tables["cooling"], check_dtype=False)
        pd.testing.assert_frame_equal(rec.jobs(), alone.jobs, check_dtype=False)
        shared = rec.doc["worker"]["shared_simulation"]
        assert shared["runs"] == len(SCENARIOS)
        assert rec.doc["pricing"]["name"] == run.labels.pricing
    assert len(count_simulations) == len(runs)
    # the scenarios price one schedule differently
    profits = {by_key[r.key].labels["pricing"]: by_key[r.key].summary["profit"]
               for r in runs if r.labels.dispatcher == "fifo"}
    assert profits["summer-air"]["core_hours"] == profits["winter-air"]["core_hours"]
    assert profits["summer-air"]["cooling_kwh"] > profits["winter-air"]["cooling_kwh"]
    assert profits["summer-hybrid"]["cooling_kwh"] < profits["summer-air"]["cooling_kwh"]


def test_offline_planner_is_simulated_once_per_scenario(
    tmp_path: Path, count_simulations: list[str]
) -> None:
    offline = "offline=heuristic,temperature=summer,seed=1"
    spec = experiment(SCENARIOS[:2], dispatchers=["fifo", offline], limit=40)
    runs = plan(parse_experiment(spec))
    assert {r.labels.dispatcher: r.shares_simulation for r in runs} == {
        "fifo": True, offline: False}
    outcome = campaign(runs, tmp_path)
    assert outcome.ok and outcome.stored == 4
    assert sorted(count_simulations) == ["fifo", offline, offline]
    recs = [r for r in RunStore(tmp_path).records() if r.labels["dispatcher"] == offline]
    assert sorted(r.labels["pricing"] for r in recs) == ["summer-air", "summer-hybrid"]
    assert all("shared_simulation" not in r.doc["worker"] for r in recs)


# --- resume, stored definitions, failures, tables ------------------------------------------


def test_adding_a_scenario_runs_only_it(tmp_path: Path, count_simulations: list[str]) -> None:
    first = campaign(plan(parse_experiment(experiment(SCENARIOS[:2]))), tmp_path)
    assert first.stored == 4 and len(count_simulations) == 2
    count_simulations.clear()
    runs = plan(parse_experiment(experiment(SCENARIOS)))
    again = campaign(runs, tmp_path)
    assert (again.skipped, again.stored) == (4, 2)
    assert len(count_simulations) == 2  # one shared simulation per dispatcher for the new one
    new = [r for r in RunStore(tmp_path).records() if r.labels["pricing"] == "winter-air"]
    assert len(new) == 2
    assert new[0].doc["pricing"] == {"name": "winter-air", "cooling": "air",
                                     "temperature": WINTER, "prices": "cheap",
                                     "it_power": "jobs"}
    assert new[0].doc["config"]["workload"]["cooling"]["temperature"] == WINTER
    # a changed definition under the same name is another run, not the stored one
    changed = plan(parse_experiment(experiment(_scen(prices="0.02,0.2"))))
    assert changed[2].labels.pricing == "summer-hybrid"
    assert not RunStore(tmp_path).is_done(changed[2].key)


def test_a_failing_scenario_fails_only_its_runs(tmp_path: Path) -> None:
    temps = tmp_path / "temps.csv"
    temps.write_text("time,what,value\n0,temperature,12\n43200,temperature,25\n")
    scen = [SCENARIOS[0], {"name": "file", "cooling": "air", "temperature": str(temps)}]
    runs = plan(parse_experiment(experiment(scen)))
    temps.unlink()  # gone between planning and running
    outcome = campaign(runs, tmp_path / "out")
    assert outcome.stored == 2 and len(outcome.failures) == 2
    failed = {r.labels.pricing for r in runs if r.key in outcome.failures}
    assert failed == {"file"}
    assert all("temps.csv" in why for why in outcome.failures.values())


def test_results_table_has_pricing_factor(tmp_path: Path) -> None:
    runs = plan(parse_experiment(experiment(SCENARIOS[:2])))
    campaign(runs, tmp_path)
    table = runs_table(RunStore(tmp_path).records())
    assert list(table["pricing"]) == ["summer-air"] * 2 + ["summer-hybrid"] * 2
    assert list(table["pricing_cooling"]) == ["air"] * 2 + ["hybrid"] * 2
    assert table["block"].nunique() == 2 and table["profit"].notna().all()
    # a schedule is shared, its price is not
    fifo = table[table["dispatcher"] == "fifo"]
    assert fifo["result_digest"].nunique() == 2 and fifo["mean_wait"].nunique() == 1


def test_entries_turned_into_a_pricing_list_reuse_runs_under_new_labels(
    tmp_path: Path, count_simulations: list[str]
) -> None:
    store = RunStore(tmp_path)
    old = plan(parse_experiment(experiment(single=SCENARIOS[:2])))
    store.write_plan({}, old)
    assert campaign(old, tmp_path).stored == 4
    assert len(count_simulations) == 2  # single entries differing in pricing share too
    new = plan(parse_experiment(experiment(SCENARIOS[:2])))
    store.write_plan({}, new)
    assert campaign(new, tmp_path).skipped == 4
    recs = list(store.records({r.key for r in new}))
    assert {(r.labels["workload"], r.labels["pricing"]) for r in recs} == {
        ("low", "summer-air"), ("low", "summer-hybrid")}
    assert {r.doc["stored_labels"]["workload"] for r in recs} == {"summer-air", "summer-hybrid"}


def test_dry_run_counts_scenarios_and_simulations(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from dispatchlab.cli.main import app

    lines = ['name = "p"', 'platforms = ["thesis-300"]', 'dispatchers = ["fifo", "easy"]',
             "[[workloads]]", f'path = "{WORKLOAD}"', "limit = 300", 'it_power = "jobs"',
             "pricing = ["]
    lines += [f'  {{ name = "{s["name"]}", cooling = "{s["cooling"]}", '
              f'temperature = "{s["temperature"]}" }},' for s in SCENARIOS]
    exp = tmp_path / "exp.toml"
    exp.write_text("\n".join([*lines, "]", ""]))
    result = CliRunner().invoke(app, ["run-experiment", str(exp), "--dry-run"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "6 runs (1 workloads × 3 pricing scenarios ×" in text
    assert "; 2 simulations)" in text
    assert sum("|pricing=winter-air|" in ln for ln in result.output.splitlines()) == 2


def test_statistics_count_one_schedule_once_for_schedule_metrics() -> None:
    from dispatchlab.stats.ranking import analyze_sets

    rows = []
    for seed in (0, 1):
        for scen, factor in (("a", 1.0), ("b", 2.0), ("c", 3.0)):
            for d, wait in (("x", 10.0 + seed), ("y", 20.0 - seed), ("z", 30.0)):
                rows.append({"dispatcher": d, "seed": seed, "result_digest": f"{d}{seed}{scen}",
                             "block": f"w|p|pricing={scen}|seed={seed}", "mean_wait": wait,
                             "profit": factor * wait})
    st = analyze_sets(pd.DataFrame(rows), ["mean_wait", "profit"])
    assert st.repeated_pricing == {"mean_wait": 4}  # 3 scenarios → 1 set, per seed
    assert st.rankings["mean_wait"].n_blocks == 2
    assert st.rankings["profit"].n_blocks == 6
    n = st.means.set_index(["dispatcher", "metric"])["n"]
    assert n[("x", "mean_wait")] == 2 and n[("x", "profit")] == 6
    assert list(st.means["dispatcher"]) == ["x", "x", "y", "y", "z", "z"]
