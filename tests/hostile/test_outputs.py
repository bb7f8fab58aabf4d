"""Writers under hostile conditions: a full disk, an output path that is a file, a writer
killed half-way. Every output is written atomically (complete or untouched), a failure is
one ``error:`` line with exit code 2 and no traceback, and no temporary copy is left."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dispatchlab.cli.main import app
from tests.cli.test_hostile_inputs import _fails

runner = CliRunner()
SRC = Path(__file__).resolve().parents[2] / "src"
KTH = SRC / "dispatchlab" / "data" / "traces" / "KTH-SP2-1996-2.1-cln.slice.swf.gz"


@pytest.fixture
def full_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder on a 16 kB tmpfs (mounted when we may), else one whose writes fail with
    ENOSPC when flushed, as a full disk may only say at ``fsync``."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", str(disk)],
                             capture_output=True).returncode == 0
    if not mounted:
        import dispatchlab.atomic_output as atomic

        def no_space(_path: Path) -> None:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        monkeypatch.setattr(atomic, "_sync", no_space)
    try:
        yield disk
    finally:
        if mounted:
            subprocess.run(["umount", str(disk)], check=True)


@pytest.mark.parametrize("name", ["out.csv", "out.swf", "out.json", "out.parquet"])
def test_convert_on_a_full_disk_leaves_nothing(full_disk: Path, name: str) -> None:
    """Was an OSError traceback and a truncated target (64 kB of a 300 kB CSV)."""
    target = full_disk / name
    _fails(["convert", str(KTH), str(target)],
           f"cannot write '{target}': no space left on device")
    assert list(full_disk.iterdir()) == []


def test_convert_on_a_full_disk_keeps_the_old_target(full_disk: Path) -> None:
    target = full_disk / "out.swf"
    target.write_text("; earlier\n1 0 0 1 1 -1 -1 1 1 -1 1 1 1 1 1 1 -1 -1\n")
    before = target.read_bytes()
    _fails(["convert", str(KTH), str(target)], "no space left on device")
    assert target.read_bytes() == before
    assert [p.name for p in full_disk.iterdir()] == ["out.swf"]


def test_simulate_out_on_a_full_disk(full_disk: Path) -> None:
    out = full_disk / "run"
    _fails(["simulate", "-w", str(KTH), "--limit", "200", "--json", "--out", str(out)],
           f"cannot write '{out}': no space left on device")
    assert list(full_disk.iterdir()) == []


@pytest.mark.parametrize("name", ["out.csv", "out.swf", "out.json", "out.parquet"])
def test_a_failed_writer_removes_the_folders_it_made(full_disk: Path, name: str) -> None:
    # the folders made for the output (a/b) stayed behind, empty, after the failed write
    result = runner.invoke(app, ["convert", str(KTH), str(full_disk / "a" / "b" / name)])
    assert result.exit_code == 2 and "no space left" in result.output, result.output
    assert list(full_disk.iterdir()) == []


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


_KILLED_WRITER = """
import os, signal, sys
from dispatchlab.atomic_output import atomic_output
with atomic_output(sys.argv[1]) as tmp:
    tmp.mkdir()
    (tmp / "jobs.csv").write_text("half")
    os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_killed_writers_temporary_folder_is_removed_by_the_next_run(tmp_path: Path) -> None:
    """SIGKILL during ``simulate --out`` left ``.tmp-*`` folders that nothing removed."""
    out = tmp_path / "run"
    killed = subprocess.run([sys.executable, "-c", _KILLED_WRITER, str(out)],
                            env={**os.environ, "PYTHONPATH": str(SRC)})
    assert killed.returncode == -signal.SIGKILL
    (stale,) = [p.name for p in tmp_path.iterdir()]
    assert stale.startswith(".tmp-") and stale.endswith("-run")
    # a writer still running (this process) and an old-style name of today are kept
    from dispatchlab.atomic_output import _temp_name

    alive = tmp_path / _temp_name("tmp", "other")
    alive.mkdir()
    recent_legacy = tmp_path / ".tmp-run-0123abcd"
    recent_legacy.mkdir()
    result = runner.invoke(app, ["simulate", "-w", str(KTH), "--limit", "100", "--json",
                                 "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert f"removed 1 temporary output(s) left in {tmp_path} by interrupted runs: {stale}" \
        in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [".tmp-run-0123abcd", alive.name, "run"])


def test_a_set_aside_output_of_a_killed_writer_is_restored(tmp_path: Path) -> None:
    """Killed between moving the old results aside and moving the new ones in: the old
    results are put back, not deleted."""
    from dispatchlab.atomic_output import _HOST, clean_stale

    aside = tmp_path / f".old-{_HOST}-{_dead_pid()}-abcdef-run"
    aside.mkdir()
    (aside / "summary.json").write_text("{}")
    assert clean_stale(tmp_path) == []
    assert [p.name for p in tmp_path.iterdir()] == ["run"]
    assert (tmp_path / "run" / "summary.json").read_text() == "{}"


# --- the trace cache --------------------------------------------------------------------


@pytest.fixture
def damaged_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache whose KTH-SP2 copy has one byte flipped (and no other place to look in)."""
    from dispatchlab.traces import locations
    from dispatchlab.traces.catalogue import find_trace

    monkeypatch.setenv("DISPATCHLAB_DATA", str(tmp_path / "data"))
    monkeypatch.delenv("DISPATCHLAB_TRACES", raising=False)
    monkeypatch.setattr(locations, "sibling_dir", lambda: None)
    file = find_trace("KTH-SP2")[0].file("")
    copy = tmp_path / "data" / "traces" / file.path
    copy.parent.mkdir(parents=True)
    body = bytearray(KTH.read_bytes()[:file.size].ljust(file.size, b"\0"))
    body[1000] ^= 0xFF
    copy.write_bytes(bytes(body))
    return copy


def test_a_damaged_cached_trace_is_named_as_damaged(damaged_cache: Path) -> None:
    """Was "not found locally (looked in …)", as if there were no copy."""
    from dispatchlab.traces.catalogue import find_trace

    line = _fails(["traces", "path", "KTH-SP2"], f"the copy at {damaged_cache} is damaged",
                  f"expected {find_trace('KTH-SP2')[0].file('').sha256}",
                  "dispatchlab traces fetch KTH-SP2")
    assert "not found locally" not in line
    assert [p.name for p in damaged_cache.parent.iterdir()] == [damaged_cache.name]


def test_traces_fetch_of_an_unknown_name_exits_2_like_path() -> None:
    """``traces fetch NOPE`` exited 1, ``traces path NOPE`` 2."""
    _fails(["traces", "path", "NOPE"], "no trace 'NOPE'")
    _fails(["traces", "fetch", "NOPE"], "no trace 'NOPE'")
    _fails(["traces", "fetch", "KTH-SP2", "NOPE"], "no trace 'NOPE'")


def test_a_download_leaves_no_lock_file(tmp_path: Path) -> None:
    """The ``.NAME.lock`` beside every fetched trace stayed for ever."""
    from dispatchlab.traces.checksum import file_sha256
    from dispatchlab.traces.download import download

    dest = tmp_path / "cache" / "kth.swf.gz"
    download(KTH.as_uri(), dest, size=KTH.stat().st_size, sha256=file_sha256(KTH))
    assert [p.name for p in dest.parent.iterdir()] == ["kth.swf.gz"]
    assert dest.read_bytes() == KTH.read_bytes()


# --- report of a store with damaged run folders ---------------------------------------


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("store") / "cmp"
    result = runner.invoke(app, ["compare", "-w", str(KTH), "--limit", "40", "-d",
                                 "fifo,sjf,easy", "--no-report", "--workers", "1", "--json",
                                 "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


def _damaged_copy(store: Path, tmp_path: Path, count: int) -> tuple[Path, list[str]]:
    import shutil

    copy = tmp_path / "cmp"
    shutil.copytree(store, copy)
    names = sorted(p.name for p in (copy / "runs").iterdir())[:count]
    for name in names:
        (copy / "runs" / name / "jobs.parquet").write_bytes(b"PAR1 cut")
    return copy, names


def test_report_warns_about_damaged_run_folders_as_results_does(three_runs: Path,
                                                               tmp_path: Path) -> None:
    """Was exit 0 with the intact runs only and not a word about the others."""
    store, damaged = _damaged_copy(three_runs, tmp_path, 2)
    report = runner.invoke(app, ["report", str(store), "--gantt-max-jobs", "0"])
    assert report.exit_code == 0, report.output
    (warning,) = [x for x in report.output.splitlines() if x.startswith("warning:")]
    assert warning.startswith("warning: 2 damaged run folder(s) left out: ")
    for name in damaged:
        assert f"{name} (" in warning and "truncated jobs.parquet" in warning
    assert "fifo: " in warning or "sjf: " in warning or "easy: " in warning
    results = runner.invoke(app, ["results", str(store)])
    assert results.exit_code == 0, results.output
    assert warning in results.output.splitlines()


def test_report_with_every_run_damaged_fails(three_runs: Path, tmp_path: Path) -> None:
    store, _ = _damaged_copy(three_runs, tmp_path, 3)
    result = runner.invoke(app, ["report", str(store)])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert lines[0].startswith("warning: 3 damaged run folder(s) left out")
    assert lines[-1].startswith("error: ") and "no usable runs" in lines[-1]
    assert not (store / "report").exists()


# --- names in experiment files, and in compare's own terms ----------------------------


def _experiment(tmp_path: Path, head: str, entries: str) -> Path:
    toml = tmp_path / "exp.toml"
    toml.write_text(f'name = "e"\n{head}\n{entries}')
    return toml


def test_two_workloads_of_the_same_name_are_refused(tmp_path: Path) -> None:
    """Were merged: their runs carried the same labels and were averaged together."""
    entry = f'[[workloads]]\npath = "{KTH}"\nname = "kth"\nlimit = 30\n'
    toml = _experiment(tmp_path, 'dispatchers = ["fifo"]',
                       entry + entry.replace("limit = 30", "skip = 30\nlimit = 30"))
    _fails(["run-experiment", str(toml), "--dry-run"], f"{toml}: field 'workloads[1]'",
           "two workloads are both named 'kth' (workloads[0] and workloads[1])")
    # named by their file: the same trace twice without names
    entry = f'[[workloads]]\npath = "{KTH}"\nlimit = 30\n'
    toml = _experiment(tmp_path, 'dispatchers = ["fifo"]',
                       entry + entry.replace("limit = 30", "limit = 40"))
    _fails(["run-experiment", str(toml), "--dry-run"],
           "both named 'KTH-SP2-1996-2.1-cln.slice'", "without it, the name comes from the file")


def test_two_platforms_or_dispatchers_of_the_same_name_are_refused(tmp_path: Path) -> None:
    work = f'[[workloads]]\npath = "{KTH}"\nlimit = 30\n'
    toml = _experiment(tmp_path, 'dispatchers = ["fifo"]\nplatforms = [{spec = "nodes=100,'
                       'cores=1", name = "m"}, {spec = "nodes=200,cores=1", name = "m"}]', work)
    _fails(["run-experiment", str(toml), "--dry-run"], "field 'platforms[1]'",
           "two platforms are both named 'm' (platforms[0] and platforms[1])")
    toml = _experiment(tmp_path, 'dispatchers = ["fifo", {spec = "sjf", name = "fifo"}]', work)
    _fails(["run-experiment", str(toml), "--dry-run"], "field 'dispatchers[1]'",
           "two dispatchers are both named 'fifo' (dispatchers[0] and dispatchers[1])")


@pytest.mark.parametrize(("options", "expected"), [
    (["--limit", "100", "--windows", "500"], "field '--windows': 500 windows need"),
    (["--swf-procs", "bogus"], "field '--swf-procs': procs must be"),
    (["-p", "nodes=4"], "field '--platform': key 'cores': missing"),
    (["--seeds", "1,1"], "field '--seeds': seeds must be distinct"),
    (["-d", "sjf,nope"], "field '--dispatchers': unknown dispatcher 'nope'"),
])
def test_compare_speaks_in_its_options(tmp_path: Path, options: list[str], expected: str) -> None:
    """``compare --windows 500`` blamed ``workloads[1]``, an experiment file nobody wrote."""
    args = ["compare", "-w", str(KTH), "-d", "fifo", *options, "--out", str(tmp_path / "o")]
    line = _fails(args, expected)
    assert "workloads[" not in line and "platforms[" not in line
    assert not (tmp_path / "o").exists()


# --- make bench --------------------------------------------------------------------------

BENCH = SRC.parent / "benchmarks"
#: the scripts that read the shared traces (../shared/traces or the trace catalogue)
NEEDS_TRACES = {"bench_changing_machines", "bench_conservative", "bench_conservative_overloaded",
                "bench_core", "bench_cp", "bench_dec", "bench_dispatchers", "bench_general_loop",
                "bench_hotspots", "bench_loop_floor", "bench_power_cap", "bench_startup"}


def test_every_benchmark_script_takes_the_runners_arguments(tmp_path: Path) -> None:
    """``make bench`` passed ``--out`` to four scripts that refused it, bench_cp crashed on
    it (int('--out')), and scripts crashed instead of skipping without the shared traces.
    Each script is called as the runner calls it, plus ``--check-data`` (parse, look for
    the data, stop): exit 0 and one ``ready:`` or ``skipped:`` line."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("run_all", BENCH / "run_all.py")
    assert spec is not None and spec.loader is not None
    run_all = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run_all)
    env = {k: v for k, v in os.environ.items() if k != "DISPATCHLAB_TRACES"}
    env.update(DISPATCHLAB_DATA=str(tmp_path / "no-cache"), DISPATCHLAB_OFFLINE="1",
               PYTHONPATH=str(SRC))
    scripts = sorted(BENCH.glob("bench_*.py"))
    said: dict[str, str] = {}
    for k in range(0, len(scripts), 4):  # four at a time: the machine is shared
        batch = [(s, subprocess.Popen([*run_all.command(s, tmp_path / f"{s.stem}.md"),
                                       "--check-data"], stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True, env=env))
                 for s in scripts[k:k + 4]]
        for script, proc in batch:
            out, _ = proc.communicate(timeout=120)
            assert proc.returncode == 0, f"{script.name}: {out}"
            lines = out.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith(("ready: ", "skipped: ")), \
                f"{script.name}: {out}"
            said[script.stem] = lines[0]
    assert not list(tmp_path.glob("*.md"))  # --check-data writes nothing
    assert set(said) >= NEEDS_TRACES
    if not (SRC.parent.parent / "shared" / "traces").is_dir():  # absent here: all skip
        assert {n for n, line in said.items() if line.startswith("skipped: ")} >= NEEDS_TRACES


def test_live_predictions_on_a_full_disk_keep_whole_cycles(
        full_disk: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``live --predict --out`` appends a cycle of rows at a time: a disk that fills up
    half-way through a cycle left a cut row. The file is cut back to the last whole cycle
    and the error is one line. (Slurm's side is stood in for: only the writing is under
    test.)"""
    import dispatchlab.live.predict as live
    from dispatchlab.errors import OutputError

    if not os.path.ismount(full_disk):
        pytest.skip("needs a real full disk (a tmpfs mounted as root)")
    from dispatchlab.live.slurm_client import SlurmClient

    rows: list[list[live.Prediction]] = [
        [live.Prediction(1_700_000_000, j, 1_700_000_060, 1_700_000_030, 1_700_000_090, 60, "80%")
         for j in range(n)] for n in (20, 5000)]
    monkeypatch.setattr(live, "predict", lambda *_a, **_k: rows.pop(0))
    out = full_disk / "pred.csv"
    shadow = live.ShadowPredictor(SlurmClient(), "main", "easy", estimate="walltime", out=out,
                                  log=lambda *a, **k: None)
    shadow.cycle(None)  # type: ignore[arg-type]
    whole = out.read_bytes()
    assert whole.count(b"\n") == 21
    with pytest.raises(OutputError, match=f"cannot write '{out}': no space left on device"):
        shadow.cycle(None)  # type: ignore[arg-type]
    assert out.read_bytes() == whole


def test_a_download_onto_a_full_disk_says_so(full_disk: Path) -> None:
    """A full disk while fetching was taken for a dropped connection: retried three times,
    then "the connection dropped 3 times"."""
    from dispatchlab.errors import OutputError
    from dispatchlab.traces.checksum import file_sha256
    from dispatchlab.traces.download import download

    if not os.path.ismount(full_disk):
        pytest.skip("needs a real full disk (a tmpfs mounted as root)")
    dest = full_disk / "kth.swf.gz"
    with pytest.raises(OutputError, match=f"cannot write '{dest}.part': no space left"):
        download(KTH.as_uri(), dest, size=KTH.stat().st_size, sha256=file_sha256(KTH))
    assert not dest.exists() and not (full_disk / ".kth.swf.gz.lock").exists()


def test_report_onto_a_full_disk(three_runs: Path, full_disk: Path) -> None:
    result = runner.invoke(app, ["report", str(three_runs), "--gantt-max-jobs", "0",
                                 "--out", str(full_disk / "report")])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: cannot write '{full_disk}/report/")
    assert "no space left on device" in lines[0]
    assert not [p for p in full_disk.rglob("*") if p.name.startswith((".tmp-", ".old-"))]


def test_run_experiment_out_naming_a_file_is_refused(tmp_path: Path) -> None:
    toml = tmp_path / "exp.toml"
    toml.write_text(f'name = "e"\ndispatchers = ["fifo"]\n[[workloads]]\npath = "{KTH}"\n'
                    "limit = 20\n")
    a_file = tmp_path / "a-file"
    a_file.write_text("keep me")
    _fails(["run-experiment", str(toml), "--out", str(a_file)], "--out",
           "a-file is a file, not a folder")
    assert a_file.read_text() == "keep me"


def test_a_replaced_file_keeps_its_permissions(tmp_path: Path) -> None:
    """Writing through a temporary file must not reset a target's mode to the umask's."""
    target = tmp_path / "out.swf"
    target.write_text("; earlier\n")
    target.chmod(0o640)
    result = runner.invoke(app, ["convert", str(KTH), str(target), "--limit", "10"])
    assert result.exit_code == 0, result.output
    assert target.stat().st_mode & 0o777 == 0o640
    assert "earlier" not in target.read_text()


def test_copies_left_by_earlier_versions_are_removed_only_when_old_and_results(
        tmp_path: Path) -> None:
    """Earlier versions named ``simulate --out``'s copy ``.tmp-NAME-XXXXXXXX`` (no process
    id): removed once a day old and holding only results files; anything else is kept."""
    from dispatchlab.atomic_output import clean_stale

    old = os.path.getmtime(tmp_path) - 2 * 86400
    results = tmp_path / ".tmp-run-0123abcd"
    results.mkdir()
    (results / "jobs.parquet").write_bytes(b"PAR1")
    other = tmp_path / ".tmp-notes-89abcdef"
    other.mkdir()
    (other / "notes.txt").write_text("not ours")
    a_file = tmp_path / ".tmp-file-deadbeef"
    a_file.write_text("not ours")
    for p in (results / "jobs.parquet", results, other, a_file):
        os.utime(p, (old, old))
    assert clean_stale(tmp_path) == [results.name]
    assert sorted(p.name for p in tmp_path.iterdir()) == [a_file.name, other.name]


def test_live_log_in_a_missing_folder(tmp_path: Path) -> None:
    """Was the raw ``[Errno 2] No such file or directory: '…'`` text."""
    log = tmp_path / "missing" / "log.jsonl"
    _fails(["live", "slurm", "--partition", "main", "--log", str(log), "--duration", "1"],
           f"cannot write '{log}': its folder does not exist")


def test_convert_into_a_folder_or_under_a_file_writes_nothing(tmp_path: Path) -> None:
    """A CSV target that is a folder used to get its sidecar written all the same."""
    folder = tmp_path / "dir.csv"
    folder.mkdir()
    _fails(["convert", str(KTH), str(folder), "--limit", "5"],
           f"cannot write '{folder}': it is a folder")
    a_file = tmp_path / "f"
    a_file.write_text("x")
    _fails(["convert", str(KTH), str(a_file / "x.csv"), "--limit", "5"],
           f"cannot create the folder '{a_file}': a file stands in its path")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir.csv", "f"]
    assert list(folder.iterdir()) == []
