"""The small cases the hostile rounds left open: each one counted, refused in one line
naming what the user typed (exit 2, no traceback, before any run), or written as the
user asked."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hostile.cli_checks import assert_refused, run_cli

SACCT = ("JobID|Submit|Start|End|Elapsed|Timelimit|NCPUS|NNodes|State\n"
         "1|2024-01-01T00:00:00|2024-01-01T00:00:10|2024-01-01T01:00:11|{elapsed}|{limit}|4|1|"
         "COMPLETED\n"
         "2|2024-01-01T00:00:05|2024-01-01T00:00:10|2024-01-01T00:10:10|00:10:00|00:30:00|4|1|"
         "COMPLETED\n")
JOBCOMP = ("JobId={id} UserId=u(1) GroupId=g(1) Name=j JobState=COMPLETED Partition=main "
           "TimeLimit={limit} StartTime=2026-01-01T00:00:10 EndTime=2026-01-01T00:10:10 "
           "NodeList=n1 NodeCnt=1 ProcCnt=2 SubmitTime=2026-01-01T00:00:00\n")
PBS = ("03/01/2024 09:00:10;E;{id};user=a queue=q qtime=1709280000 start=1709280010 "
       "end=1709283610 Resource_List.ncpus=8 Resource_List.walltime={limit} Exit_status=0 "
       "resources_used.walltime={used}\n")


def _converted(path: Path, fmt: str, tmp_path: Path) -> tuple[str, list[str]]:
    """convert's output and the SWF records it wrote."""
    out = tmp_path / "o.swf"
    code, text = run_cli(["convert", str(path), str(out), "--from", fmt])
    assert code == 0, text
    return text, [x for x in out.read_text().splitlines() if x and not x.startswith(";")]


@pytest.mark.parametrize(("fmt", "text", "rounded", "fields"), [
    # sacct: a fractional run time (Elapsed) and, in another file, a fractional limit
    ("sacct", SACCT.format(elapsed="01:00:00.5", limit="02:00:00"), 1, (3, 3601)),
    ("sacct", SACCT.format(elapsed="01:00:01", limit="02:00:00.25"), 1, (8, 7201)),
    ("sacct", SACCT.format(elapsed="01:00:01", limit="02:00:00"), 0, (3, 3601)),
    # jobcomp: a time limit in duration form with a fraction
    ("jobcomp", JOBCOMP.format(id=1, limit="00:30:00.5") + JOBCOMP.format(id=2, limit="30"),
     1, (8, 1801)),
    # PBS: both the used and the requested wall-time fractional on one job
    ("pbs", PBS.format(id=1, limit="02:00:00.5", used="01:00:00.2")
     + PBS.format(id=2, limit="02:00:00", used="01:00:00"), 1, (3, 3601)),
])
def test_fractional_accounting_durations_are_rounded_up_and_counted(
        tmp_path: Path, fmt: str, text: str, rounded: int, fields: tuple[int, int]) -> None:
    """They were rounded up without a word; the SWF reader counts the same rounding."""
    path = tmp_path / f"log.{fmt}"
    path.write_text(text)
    out, rows = _converted(path, fmt, tmp_path)
    assert (f"fractional_rounded={rounded}" in out) == bool(rounded), out
    column, seconds = fields  # the first job's run time (3) or requested time (8), up
    assert int(rows[0].split()[column]) == seconds


SMALL = str(Path(__file__).resolve().parents[2] / "src/dispatchlab/data/traces"
            / "KTH-SP2-1996-2.1-cln.slice.swf.gz")


def _cap_scenario(tmp_path: Path) -> Path:
    scenario = tmp_path / "cap.csv"
    scenario.write_text("time,what,value\n0,power_cap,60\n3000,power_cap,40\n")
    return scenario


def test_compare_refuses_a_varying_cap_without_job_power_before_any_run(tmp_path: Path
                                                                         ) -> None:
    """Each run failed on its own ('no run of the whole workload finished', exit 1)."""
    out = tmp_path / "cmp"
    code, text = run_cli(["compare", "-w", SMALL, "--limit", "20", "-p", "nodes=100,cores=1",
                          "-d", "fifo", "-d", "easy", "--scenario", str(_cap_scenario(tmp_path)),
                          "--no-progress", "--out", str(out)])
    assert_refused(code, text, "'--scenario'", "job 15", "power_cap rows")
    assert "failed:" not in text and not out.exists()


def test_an_experiment_with_a_varying_cap_and_no_job_power_is_refused(tmp_path: Path) -> None:
    toml = tmp_path / "e.toml"
    toml.write_text(f'name = "e"\ndispatchers = ["fifo", "easy"]\n'
                    f'platforms = ["nodes=100,cores=1"]\n[[workloads]]\nname = "kth"\n'
                    f'path = "{SMALL}"\nlimit = 20\n'
                    f'scenario = "{_cap_scenario(tmp_path)}"\n')
    code, text = run_cli(["run-experiment", str(toml), "--out", str(tmp_path / "out")])
    assert_refused(code, text, "workloads[0].scenario", "platforms[0]", "power_cap rows")
    assert not (tmp_path / "out").exists()


@pytest.mark.slow  # a whole run (4-14 s with the machine shared)
def test_a_varying_cap_with_job_power_still_runs(tmp_path: Path) -> None:
    """The check refuses only what cannot run: on a platform with a node power model the
    capped runs finish."""
    scenario = tmp_path / "cap.csv"
    scenario.write_text("time,what,value\n0,power_cap,9000\n3000,power_cap,8000\n")
    code, text = run_cli(["compare", "-w", SMALL, "--limit", "20", "-p", "eurora",
                          "-d", "fifo", "-d", "easy", "--scenario", str(scenario),
                          "--no-progress", "--no-report", "--out", str(tmp_path / "cmp")],
                         limit=120)
    assert code == 0, text
    assert (tmp_path / "cmp" / "results.csv").exists()


def test_simulate_names_the_seed_flag_as_typed() -> None:
    """It said field 'seed' where the user typed --seed."""
    code, text = run_cli(["simulate", "-w", SMALL, "--limit", "20", "--seed", "-1"])
    assert_refused(code, text, "field '--seed'", "whole number ≥ 0")


def test_compare_names_its_own_flags() -> None:
    code, text = run_cli(["compare", "-w", SMALL, "-d", "fifo,easy", "--seed", "-1"])
    assert_refused(code, text, "field '--seeds'", "'-1'")


@pytest.mark.parametrize(("args", "words"), [
    (["simulate", "-w", SMALL, "-p", "nodes=100,cores=1", "-d",
      "offline=heuristic,chunk=1000000000000"], ("field 'chunk'", "366 days")),
    (["simulate", "-w", SMALL, "-p", "nodes=100,cores=1", "-d",
      "offline=delay,chunk=31622401"], ("field 'chunk'", "31,622,401")),
    (["compare", "-w", SMALL, "-p", "nodes=100,cores=1", "-d", "fifo", "-d",
      "offline=multi,chunk=99999999999", "--no-progress"], ("key 'chunk'", "366 days")),
    (["plan", "-w", SMALL, "--window", "1000000000000"], ("field '--window'", "366 days")),
])
def test_a_huge_plan_window_is_refused_at_once(args: list[str], words: tuple[str, ...]
                                               ) -> None:
    """chunk=1e12 cut its profit window into 2.8e8 hourly segments: it never finished."""
    code, text = run_cli(args)
    assert_refused(code, text, *words)


@pytest.mark.slow  # a whole run (4-14 s with the machine shared)
def test_a_year_long_chunk_still_plans() -> None:
    """The bound is the largest chunk allowed, not below it."""
    code, text = run_cli(["simulate", "-w", SMALL, "--limit", "8", "-p", "nodes=100,cores=1",
                          "-d", "offline=heuristic,chunk=31622400,wpc=10,temperature=summer"],
                         limit=60)
    assert code == 0, text


@pytest.mark.parametrize("dispatchers", [["fifo,easy,fifo"], ["fifo", "fifo"],
                                         ["order=sjf,select=easy", "order=sjf,select=easy"]])
def test_compare_refuses_a_dispatcher_given_twice(tmp_path: Path, dispatchers: list[str]
                                                  ) -> None:
    """The second 'fifo' was dropped without a word (an experiment refuses the repeat)."""
    args = [x for d in dispatchers for x in ("-d", d)]
    code, text = run_cli(["compare", "-w", SMALL, "--limit", "20", *args, "--no-progress",
                          "--out", str(tmp_path / "cmp")])
    assert_refused(code, text, "'--dispatchers'", "given twice")
    assert not (tmp_path / "cmp").exists()


def test_compare_runs_a_family_member_also_named_once(tmp_path: Path) -> None:
    """'-d family:X -d A' with A in family X is what the user asked for: A runs once."""
    from dispatchlab.cli.compare_cmd import split_dispatchers

    names = split_dispatchers(["family:rule-based", "easy"])
    assert names.count("easy") == 1 and len(names) == len(set(names)) > 2


def test_an_output_through_a_symbolic_link_replaces_the_file_it_points_to(tmp_path: Path
                                                                           ) -> None:
    """convert replaced the link itself with a regular file (the linked file kept its old
    content)."""
    real = tmp_path / "store" / "kth.swf"
    real.parent.mkdir()
    real.write_text("old\n")
    link = tmp_path / "o.swf"
    link.symlink_to(real)
    code, text = run_cli(["convert", SMALL, str(link), "--limit", "5"])
    assert code == 0, text
    assert link.is_symlink() and link.resolve() == real.resolve()
    assert real.read_text().count("\n") > 5 and "old" not in real.read_text()
    assert not [p for p in real.parent.iterdir() if p.name.startswith(".tmp-")]


def test_the_atomic_writer_writes_through_links_and_refuses_a_loop(tmp_path: Path) -> None:
    from dispatchlab.atomic_output import atomic_output
    from dispatchlab.errors import OutputError

    dangling = tmp_path / "new.txt"  # a link to a file not written yet: written there
    dangling.symlink_to(tmp_path / "target.txt")
    with atomic_output(dangling) as tmp:
        tmp.write_text("new\n")
    assert dangling.is_symlink() and (tmp_path / "target.txt").read_text() == "new\n"
    folder_link = tmp_path / "results"  # a link to a folder: the folder is replaced
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "summary.json").write_text("{}")
    folder_link.symlink_to(tmp_path / "real")
    with atomic_output(folder_link) as tmp:
        tmp.mkdir()
        (tmp / "jobs.csv").write_text("x\n")
    assert folder_link.is_symlink()
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == ["jobs.csv"]
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    with pytest.raises(OutputError, match="loop of symbolic links"), atomic_output(loop) as tmp:
        tmp.write_text("x")


def _results() -> object:
    import dispatchlab as dl
    from dispatchlab.workload import SwfOptions, load_swf

    return dl.simulate(load_swf(SMALL, SwfOptions(limit=20)), "nodes=100,cores=1", "fifo")


def test_results_save_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A failure half-way through Results.save left a half-written folder."""
    from dispatchlab.errors import OutputError
    from dispatchlab.metrics.results import Results

    res = _results()
    out = tmp_path / "kth"
    res.save(out)  # type: ignore[attr-defined]
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert "summary.json" in before and "jobs.parquet" in before
    write_files = Results.write_files

    def full_disk(self: Results, folder: Path, *, csv: bool = True) -> Path:
        write_files(self, folder, csv=csv)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Results, "write_files", full_disk)
    with pytest.raises(OutputError, match="no space left on device"):
        res.save(out)  # type: ignore[attr-defined]
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert [p.name for p in tmp_path.iterdir()] == ["kth"]  # no temporary copy left
    monkeypatch.undo()
    res.save(out)  # type: ignore[attr-defined]  # a results folder is replaced whole
    assert sorted(p.name for p in out.iterdir()) == sorted(before)


def test_results_save_keeps_a_folder_of_other_files(tmp_path: Path) -> None:
    """Replacing the folder as a whole would remove what the user keeps there."""
    from dispatchlab.errors import OutputError

    (tmp_path / "notes.txt").write_text("mine\n")
    with pytest.raises(OutputError, match="not results"):
        _results().save(tmp_path)  # type: ignore[attr-defined]
    assert (tmp_path / "notes.txt").read_text() == "mine\n"


def test_a_slurm_conf_run_is_keyed_by_the_file_content(tmp_path: Path) -> None:
    """An edited slurm.conf was served from the runs of the old one (the key held the
    path only)."""
    from dispatchlab.experiments.config import RunConfig, WorkloadRef

    example = Path(__file__).resolve().parents[2] / "examples/platforms/kth-slurm.conf"
    conf = tmp_path / "slurm.conf"
    conf.write_text(example.read_text())

    def key(path: Path) -> str:
        return RunConfig(workload=WorkloadRef(path=SMALL), platform="nodes=100,cores=1",
                         dispatcher=f"slurm:conf={path}").key

    first = key(conf)
    assert key(conf) == first
    moved = tmp_path / "elsewhere.conf"
    moved.write_text(conf.read_text())
    assert key(moved) == first  # the same settings: the same run
    conf.write_text(conf.read_text().replace("PriorityWeightAge=1000", "PriorityWeightAge=0"))
    assert key(conf) != first
    from dispatchlab.dispatchers.registry import canonical_spec

    for spec in ("order=sjf,select=easy", "fifo"):  # no file: the spelling as before
        assert RunConfig(workload=WorkloadRef(path=SMALL), platform="nodes=100,cores=1",
                         dispatcher=spec).identity()["dispatcher"] == canonical_spec(spec)


@pytest.mark.slow  # two compare runs of the slurm family (15-30 s with the machine shared)
def test_compare_reruns_a_slurm_conf_that_was_edited(tmp_path: Path) -> None:
    example = Path(__file__).resolve().parents[2] / "examples/platforms/kth-slurm.conf"
    conf = tmp_path / "slurm.conf"
    conf.write_text(example.read_text())
    args = ["compare", "-w", SMALL, "--limit", "20", "-d", f"slurm:conf={conf}",
            "--no-progress", "--no-report", "--out", str(tmp_path / "cmp")]
    code, text = run_cli(args, limit=120)
    assert code == 0 and "1 run now" in text, text
    conf.write_text(conf.read_text().replace("PriorityWeightAge=1000", "PriorityWeightAge=0"))
    code, text = run_cli(args, limit=120)
    assert code == 0 and "1 run now, 0 already done" in text, text
