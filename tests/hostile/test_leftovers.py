"""Cases of the hostile round that the earlier fixes left: each refused in one line naming
the right thing (exit 2, no traceback)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hostile.cli_checks import run_cli


def _fails(args: list[str]) -> str:
    """Exit 2 with one line and no traceback; the line."""
    code, out = run_cli(args)
    assert code == 2, out
    assert out.count("\n") == 1, out
    return out


SMALL = str(Path(__file__).resolve().parents[2] / "src/dispatchlab/data/traces"
            / "KTH-SP2-1996-2.1-cln.slice.swf.gz")


@pytest.mark.parametrize("command", [
    ["simulate", "-w", SMALL, "--limit", "20"],
    ["compare", "-w", SMALL, "--limit", "20", "-d", "fifo", "-d", "easy", "--no-progress"],
])
def test_it_power_without_a_cooling_model_is_refused(command: list[str]) -> None:
    # --it-power shapes only the profit entry of a cooling model: without --cooling it ran
    # (exit 0) and was silently unused, while --prices alone was refused
    out = _fails([*command, "-p", "nodes=100,cores=1", "--it-power", "jobs"])
    assert "it_power" in out and "cooling" in out


def test_it_power_without_a_cooling_model_is_refused_in_an_experiment(tmp_path: Path) -> None:
    toml = tmp_path / "e.toml"
    toml.write_text(f'name = "e"\ndispatchers = ["fifo", "easy"]\n'
                    f'platforms = ["nodes=100,cores=1"]\n[[workloads]]\nname = "kth"\n'
                    f'path = "{SMALL}"\nlimit = 20\nit_power = "nodes"\n')
    out = _fails(["run-experiment", str(toml), "--out", str(tmp_path / "out")])
    assert "workloads[0].cooling" in out and "it_power" in out
    assert not (tmp_path / "out").exists()


def test_compare_refuses_a_power_cap_without_job_power_before_the_run(tmp_path: Path) -> None:
    # simulate refuses it before the run; compare ran every run into the same error, then
    # ended with exit 1 and "no run of the whole workload finished" (an empty folder left)
    out = _fails(["compare", "-w", SMALL, "--limit", "20", "-p", "nodes=100,cores=1", "-d",
                  "fifo", "-d", "easy", "--power-cap", "50", "--no-progress", "--out",
                  str(tmp_path / "cmp")])
    assert "--power-cap" in out and "power" in out and "job 15" in out
    assert not (tmp_path / "cmp").exists()


def test_an_experiment_with_a_power_cap_and_no_job_power_is_refused(tmp_path: Path) -> None:
    toml = tmp_path / "e.toml"
    toml.write_text(f'name = "e"\ndispatchers = ["fifo", "easy"]\n'
                    f'platforms = ["nodes=100,cores=1"]\n[[workloads]]\nname = "kth"\n'
                    f'path = "{SMALL}"\nlimit = 20\npower_cap = 50.0\n')
    out = _fails(["run-experiment", str(toml), "--out", str(tmp_path / "out")])
    assert "workloads[0].power_cap" in out and "platforms[0]" in out
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", [
    ["simulate", "-w", SMALL, "--limit", "20"],
    ["compare", "-w", SMALL, "--limit", "20", "-d", "fifo", "-d", "easy", "--no-progress"],
])
@pytest.mark.parametrize(("flag", "value", "words"), [
    ("--prices", "nope", "'cheap', 'expensive' or 'K1,K2'"),
    ("--temperature", "nope", "nope: file not found"),
])
def test_a_bad_pricing_input_names_its_own_flag(command: list[str], flag: str, value: str,
                                                words: str) -> None:
    # a bad --prices was reported as field 'cooling' (compare: "field '--cooling': field
    # 'prices': …") or by its Python name (simulate: field 'prices')
    args = {"--prices": "cheap", "--temperature": "gen:temperature:season=summer", flag: value}
    out = _fails([*command, "-p", "nodes=100,cores=1", "--cooling", "air",
                  *[x for k, v in args.items() for x in (k, v)]])
    assert f"field '{flag}': " in out and words in out and out.count("field '") == 1, out


@pytest.mark.parametrize(("more", "flag"), [
    (["--release-timeout", "-1"], "--release-timeout"), (["--duration", "-3"], "--duration"),
    (["--poll", "5"], "--poll"), (["--predict"], "--out"),
    (["--predict", "--out", "p.csv", "--estimate", "nosuch"], "--estimate"),
    (["--predict", "--out", "p.csv", "--history", "/nonexistent"], "--history"),
    (["-d", "nosuch"], "--dispatcher"),
])
def test_live_errors_name_the_flag_as_typed(more: list[str], flag: str) -> None:
    # live said field 'release-timeout', 'history', 'estimate', … where simulate and
    # compare name the flag ('--power-cap')
    out = _fails(["live", "slurm", "--partition", "main", *more])
    assert out.startswith(f"error: field '{flag}': "), out


@pytest.mark.parametrize(("more", "words"), [
    (["-d", "nosuch"], "unknown dispatcher 'nosuch'"),
    (["--seed", "-1"], "a seed is a whole number ≥ 0"),
])
def test_simulate_checks_the_dispatcher_and_seed_before_reading_the_workload(
        more: list[str], words: str) -> None:
    # without -p, "platform nodes=100,cores=1 (from the SWF header …)" was printed first
    out = _fails(["simulate", "-w", SMALL, *more])
    assert words in out
