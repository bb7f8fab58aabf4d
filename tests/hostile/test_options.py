"""Hostile dispatcher and option values: each is refused before the run in one line naming
the parameter (exit 2, no traceback), or runs as documented. The case that crashed the
compiled authors' simulation runs in subprocesses, several times (it crashed about one
run in two)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dispatchlab.dispatchers.registry import get_dispatcher
from dispatchlab.dispatchers.variable_capacity.authors_loop import check_bounds
from dispatchlab.errors import ConfigError
from tests.hostile.cli_checks import run_cli

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _invoke(args: list[str], limit: float = 20.0) -> tuple[int, str]:
    """Run a command in this process: no traceback, done within ``limit`` s."""
    return run_cli(args, limit)


def _fails(args: list[str], *expected: str) -> str:
    """Exit 2 with one error holding every ``expected`` text."""
    code, out = _invoke(args)
    assert code == 2, out
    for text in expected:
        assert text in out, (text, out)
    return out


# ---- the authors' simulation: safe beyond the machines ------------------------------------

@pytest.fixture(scope="module")
def vc_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """400 jobs of 1-8 cores; between 1 and 8 machines alive, changing every 400 s."""
    d = tmp_path_factory.mktemp("vc")
    r = random.Random(1)
    t = 0
    lines = []
    for i in range(400):
        t += r.randint(0, 60)
        lines.append(f"j{i} {t} {r.randint(10, 3000)} {r.choice([1, 2, 4, 8])} release\n")
    (d / "jobs.txt").write_text("".join(lines))
    m, rows = 6, ["6\n"]
    for k in range(1, 60):
        m = max(1, min(8, m + r.choice([-1, 1])))
        rows.append(f"{k * 400} {m}\n")
    (d / "var.txt").write_text("".join(rows))
    return d / "jobs.txt", d / "var.txt"


def _authors_run(files: tuple[Path, Path], platform: str, spec: str
                 ) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "dispatchlab.cli.main", "simulate", "-w", str(files[0]),
           "-p", platform, "-d", spec, "--scenario", str(files[1]), "--window-start", "0",
           "--window", "20000", "--json"]
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)


def test_authors_safe_above_the_alive_machines_runs_the_same_every_time(
        vc_files: tuple[Path, Path]) -> None:
    # safe=16 on 16 machines of which at most 8 are ever alive: M_use = (alive + 16) / 2
    # points past the 8 machines the books had; the compiled loop read outside them and
    # died (exit 139 or 134) in about 3 runs of 4. The books now cover max(alive, safe)
    # machines, as simu.cc's machines vector covers the platform.
    goodputs = set()
    for _ in range(3):
        done = _authors_run(vc_files, "nodes=16,cores=16", "vc=target-asap,semantics=authors")
        assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
        got = json.loads(done.stdout)
        assert got["error"] == "" and got["stats"]["placements"] > 400
        goodputs.add(got["goodput"])
    assert len(goodputs) == 1


def test_authors_safe_above_the_platform_is_refused(vc_files: tuple[Path, Path]) -> None:
    # the case: safe=16 (the default) on 8 machines crashed about 1 run in 4
    for _ in range(2):
        done = _authors_run(vc_files, "nodes=8,cores=16", "vc=target-asap,semantics=authors")
        assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
        err = done.stdout + done.stderr
        assert "safe=16" in err and "[1, 8]" in err and "Traceback" not in err


@pytest.mark.parametrize(("spec", "field"), [
    ("vc=target-asap,semantics=authors,safe=-3", "safe"),
    ("vc=ff-aware,semantics=authors,safe=-1", "safe"),
    ("vc=target-asap,semantics=authors,neighbourhood=-1", "neighbourhood"),
    ("vc=target-asap,semantics=authors,util_low=1.5", "util_low"),
    ("vc=target-asap,semantics=authors,util_high=-0.1", "util_high"),
    ("vc=target-asap,semantics=authors,util_low=0.9,util_high=0.5", "util_low"),
])
def test_authors_negative_or_out_of_range_parameters(spec: str, field: str) -> None:
    with pytest.raises(ConfigError) as err:
        get_dispatcher(spec)
    assert err.value.field == field and field in str(err.value)


def test_authors_target_strategies_need_a_machine_alive(vc_files: tuple[Path, Path],
                                                        tmp_path: Path) -> None:
    var = tmp_path / "var0.txt"
    var.write_text("4\n100 0\n200 4\n")
    _fails(["simulate", "-w", str(vc_files[0]), "-p", "nodes=8,cores=16", "-d",
            "vc=target-asap,semantics=authors,safe=4", "--scenario", str(var),
            "--window-start", "0", "--window", "2000"], "time 100", "alive")
    _fails(["simulate", "-w", str(vc_files[0]), "-p", "nodes=8,cores=16", "-d",
            "vc=target-asap,semantics=authors,safe=0", "--scenario", str(vc_files[1]),
            "--window-start", "0", "--window", "2000"], "safe=0", "[1, 8]")


def test_authors_loop_checks_its_bounds_up_front() -> None:
    books = np.zeros((8, 4), np.int64)
    counts = np.array([4, 8], np.int64)
    check_bounds(6, counts, 8, True, 8, books)  # in bounds
    for args in ((6, counts, 16, True, 16, books),        # safe past the books
                 (6, np.array([12]), 4, True, 16, books),  # a count past the books
                 (6, counts, 8, True, 4, books),           # past the platform
                 (6, np.array([0]), 4, True, 8, books),    # M_use reaches 0
                 (6, counts, 0, True, 8, books),
                 (6, counts, -1, False, 8, books)):
        with pytest.raises(ValueError, match="authors' loop"):
            check_bounds(*args)
    check_bounds(6, np.array([0]), 0, False, 8, books)  # first fit needs no M_use


def test_slides_books_check_their_bounds_and_cut_the_neighbourhood() -> None:
    from dispatchlab import simulate
    from dispatchlab.dispatchers.variable_capacity.books import Books
    from dispatchlab.dispatchers.variable_capacity.target import TargetVC
    from dispatchlab.workload.workload import Workload

    # a neighbourhood of 10^12 machines asked for 2 × 10^12 slots of memory per batch
    wl = Workload.from_columns(submit=[0, 0, 5], runtime=[10, 20, 5], walltime=[10, 20, 5],
                               units=[1, 1, 1], req={"cores": [2, 4, 4]})
    wide = simulate(wl, "nodes=4,cores=4", TargetVC("asap", neighbourhood=10**12))
    near = simulate(wl, "nodes=4,cores=4", TargetVC("asap", neighbourhood=3))
    assert wide.jobs["start"].tolist() == near.jobs["start"].tolist()
    books = Books([4, 4])
    one = np.ones(1, np.int64)
    for ranks, muse in ((np.array([0, 5]), 2), (np.array([0, 1]), 3)):
        with pytest.raises(ValueError, match="place_jobs"):
            books.place(one, 0 * one, one, np.ones(1), ranks, muse, 1, 1, 1, 0, 1.0)
    with pytest.raises(ConfigError, match="safe=-3"):
        TargetVC("asap", safe=-3)


# ---- seeds ----------------------------------------------------------------------------------

KTH = str(Path(__file__).resolve().parents[2] / "src" / "dispatchlab" / "data" / "traces" /
          "KTH-SP2-1996-2.1-cln.slice.swf.gz")


@pytest.mark.parametrize("disp", ["dardis-profile", "mejri-rand1", "ff-unaware", "fifo"])
def test_a_negative_seed_is_refused_before_the_run(disp: str) -> None:
    # was numpy's "ValueError: expected non-negative integer" traceback (not for fifo,
    # which ran with it)
    _fails(["simulate", "-w", KTH, "--limit", "50", "-p", "nodes=100,cores=1", "-d", disp,
            "--seed", "-1"], "seed", "≥ 0", "-1")


def test_a_negative_seed_in_a_generator_or_dispatcher_spec_is_refused(
        vc_files: tuple[Path, Path]) -> None:
    _fails(["simulate", "-w", "gen:mejri:seed=-1", "-d", "mejri-rand1"], "seed", "≥ 0")
    for spec in ("dardis=hybrid-dardis100,seed=-1", "offline=heuristic,seed=-1",
                 "vc=ff-unaware,semantics=authors,clock_seed=-5"):
        with pytest.raises(ConfigError, match="≥ 0") as err:
            get_dispatcher(spec)
        assert err.value.field in ("seed", "clock_seed"), spec
    _fails(["simulate", "-w", str(vc_files[0]), "-p", "nodes=8,cores=16", "-d",
            "vc=ff-unaware,semantics=authors", "--scenario", str(vc_files[1]),
            "--window-start", "0", "--window", "2000", "--seed", "-1"], "seed", "≥ 0")


@pytest.mark.parametrize(("spec", "field"), [
    ("dardis=dardis-profile,slot=0", "slot"), ("dardis=dardis-profile,retries=-1", "retries"),
    ("dardis=dardis-profile,depth=-2", "depth"), ("offline=heuristic,chunk=0", "chunk"),
    ("offline=heuristic,step=-1", "step"), ("offline=heuristic,delay=-1", "delay"),
])
def test_out_of_range_family_parameters_are_named(spec: str, field: str) -> None:
    # were "slot must be > 0, retries and depth ≥ 0" (field 'dardis') and "chunk, step
    # and delay must be > 0" (field 'offline')
    with pytest.raises(ConfigError) as err:
        get_dispatcher(spec)
    assert err.value.field == field and f"{field}=" in str(err.value)


@pytest.mark.parametrize("extra", [["--power-cap", "500"], ["--cooling", "air"],
                                   ["--no-walltime-kill"], ["--on-abort", "fail"],
                                   ["--limit", "5"]])
def test_authors_semantics_refuses_the_engine_options(vc_files: tuple[Path, Path],
                                                      extra: list[str]) -> None:
    # --power-cap 500 was ignored: the run printed its figures without any cap
    _fails(["simulate", "-w", str(vc_files[0]), "-p", "nodes=8,cores=16", "-d",
            "vc=target-asap,semantics=authors,safe=4", "--scenario", str(vc_files[1]),
            "--window-start", "0", "--window", "2000", *extra], f"drop {extra[0]}")


@pytest.mark.parametrize("disp", ["dardis-profile", "dardis-throughput", "dardis70"])
def test_dardis_waits_for_nodes_to_come_back(disp: str) -> None:
    # job 2 needs the 4 nodes while 2 are alive (from 5 to 300): "DARDIS: job 2 fits no
    # start even on the empty machine (4 units of [1] over 2 usable nodes)"; it now waits
    # and runs once the nodes are back, as docs/composition.md says DARDIS supports
    from dispatchlab import simulate
    from dispatchlab.engine.scenario import Change, Scenario
    from dispatchlab.workload.workload import Workload

    wl = Workload.from_columns(submit=[0, 10, 20], runtime=[50, 30, 30],
                               walltime=[60, 40, 40], units=[1, 4, 2], req={"cores": [1] * 3})
    leave = Scenario([Change(5, "alive_nodes", 2), Change(300, "alive_nodes", 4)])
    res = simulate(wl, "nodes=4,cores=1", disp, scenario=leave)
    starts = dict(zip(res.jobs["job_id"].tolist(), res.jobs["start"].tolist(), strict=True))
    assert len(starts) == 3 and starts[2] >= 300
    assert res.summary["dispatcher_stats"]["held_for_nodes"] >= 1


def test_dardis_profile_on_a_capacity_walk() -> None:
    # the run: on this walk (72 to 100 nodes) dardis-profile stopped at job 150
    # ("fits no start even on the empty machine (79 units of [1] over 78 usable nodes)");
    # every job now runs
    code, out = _invoke(["simulate", "-w", KTH, "--limit", "200", "-p", "nodes=100,cores=1",
                         "-d", "dardis-profile", "--json", "--scenario",
                         "gen:capacity-walk:mean=86,range=14,period=3600,until=400000"],
                        limit=60)
    assert code == 0, out
    got = json.loads(out)
    assert got["jobs_run"] == 200 and got["dispatcher_stats"]["held_for_nodes"] >= 1


def test_dispatchers_family_names_the_families_and_the_readme_topics() -> None:
    # `--family power` (the README's "power capping" row) was an unknown family: the error
    # now lists the families and the presets named like it, and the README says which
    # family builds each topic's presets
    out = _fails(["dispatchers", "--family", "power"], "rule-based", "variable-capacity",
                 "prb-power")
    assert "easy-power" in out
    code, out = _invoke(["dispatchers", "--family", "Variable_Capacity"])
    assert code == 0 and "target-asap" in out
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    from dispatchlab.dispatchers.registry import families
    for fam in families():
        assert f"`{fam.name}`" in readme, fam.name


# ---- pricing inputs -------------------------------------------------------------------------

PRICED = ["simulate", "-w", KTH, "--limit", "20", "-p", "nodes=100,cores=1", "--cooling", "air"]


@pytest.mark.parametrize(("extra", "field"), [
    (["--prices", "nope"], "prices"), (["--prices", "-1,2"], "prices"),
    (["--temperature", "/nonexistent/t.csv"], "temperature"),
])
def test_pricing_errors_name_their_input(extra: list[str], field: str) -> None:
    # --prices errors said field 'cooling'; a --temperature file's said field 'scenario'
    temp = [] if field == "temperature" else [
        "--temperature", "gen:temperature:season=summer,days=3"]
    out = _fails([*PRICED, *temp, *extra], f"field '--{field}'")
    assert "field 'cooling'" not in out and "field 'scenario'" not in out


def test_it_power_is_checked_without_cooling() -> None:
    # --it-power nope ran without --cooling (the value was never read)
    _fails(["simulate", "-w", KTH, "--limit", "20", "-p", "nodes=100,cores=1",
            "--it-power", "nope"], "it_power", "nope", "auto")


@pytest.mark.parametrize(("extra", "flag"), [
    ([], "--watts-per-core"), (["--watts-per-core", "-1"], "--watts-per-core"),
    (["--watts-per-core", "3", "--runs", "0"], "--runs"),
    (["--watts-per-core", "3", "--time", "-1"], "--time"),
    (["--watts-per-core", "3", "--cp-det-time", "0"], "--cp-det-time"),
    (["--watts-per-core", "3", "--prices", "nope"], "--prices"),
])
def test_plan_speaks_in_its_flags(extra: list[str], flag: str) -> None:
    # "give watts_per_core for such jobs" / field 'watts_per_core' while the flag is
    # --watts-per-core (and field 'runs', 'time', 'cp_det_time', 'prices' likewise)
    out = _fails(["plan", "-w", KTH, "--limit", "20", "-p", "nodes=100,cores=1", *extra],
                 flag)
    assert "watts_per_core" not in out and "cp_det_time" not in out


def test_jobs_left_queued_come_with_their_cause() -> None:
    # "left 208 job(s) queued on an idle machine with no pending event" said no why
    from dispatchlab import simulate
    from dispatchlab.engine.scenario import Change, Scenario
    from dispatchlab.errors import DispatchlabError
    from dispatchlab.workload.workload import Workload

    wl = Workload.from_columns(submit=[10, 20], runtime=[50, 30], walltime=[60, 40],
                               units=[4, 1], req={"cores": [1, 1]})
    gone = Scenario([Change(5, "alive_nodes", 2)])  # two of the four nodes never come back
    with pytest.raises(DispatchlabError) as err:
        simulate(wl, "nodes=4,cores=1", "fifo", scenario=gone, loop="general")
    text = str(err.value)
    assert "left 2 job(s)" in text
    assert "1 need more than the 2 alive nodes hold (e.g. job 1: 4 units of [1]" in text
    assert "1 fit the alive nodes, yet the dispatcher started none of them (e.g. job 2)" \
        in text
    with pytest.raises(DispatchlabError) as err:
        simulate(wl, "nodes=4,cores=1", "easy", scenario=gone, loop="general")
    assert "left 1 job(s)" in str(err.value) and "e.g. job 1: 4 units" in str(err.value)
    assert "fit the alive nodes" not in str(err.value)


@pytest.mark.parametrize(("spec", "accepted"), [
    ("order=fifo,select=easy,bogus=1", "accepted: preset, order, select, alloc, depth"),
    ("preset=easy,bogus=1", "accepted: preset, order"),
    ("offline=heuristic,bogus=1", "known: offline, chunk"),
    ("plan=p.parquet,bogus=1", "plan= and compress="),
    ("cp=hcp3,bogus=1", "known: "), ("dardis=dardis-profile,bogus=1", "known: "),
    ("vc=target-asap,semantics=authors,bogus=1", "known: quantiles, safe"),
    ("bogus=1", "cp (cp); dec (dec); dardis (dardis); vc (variable-capacity)"),
])
def test_an_unknown_dispatcher_key_is_singled_out(spec: str, accepted: str) -> None:
    # "-d order=fifo,select=easy,bogus=1": "no dispatcher family accepts the keys order,
    # select, bogus"; offline/plan specs said field 'dispatcher'
    with pytest.raises(ConfigError) as err:
        get_dispatcher(spec)
    assert err.value.field == "bogus" and "bogus" in str(err.value)
    assert accepted in str(err.value)
    assert "order, select, bogus" not in str(err.value)
