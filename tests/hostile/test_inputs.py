"""Hostile inputs against every command that reads one: bad bytes, binary junk, empty
files, devices, pipes nobody writes to, symbolic-link loops, folders and missing files,
then numbers out of range. Each must be refused at once with one ``error:`` line and exit
2, no traceback, and no partial output file."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from dispatchlab import input_files
from tests.hostile.cli_checks import (
    assert_nothing_written,
    assert_refused,
    refused,
    run_cli,
    run_process,
)

TINY = str(Path(__file__).resolve().parents[1] / "data" / "swf" / "tiny.swf")
PLATFORM = "nodes=4,cores=4"
READERS = ("swf", "eurora", "parquet", "csv", "vcjobs", "sacct", "sacct-json", "jobcomp",
           "pbs", "batsim")


def _latin1(d: Path) -> Path:
    p = d / "latin1.txt"
    p.write_bytes("JobID|User|State\n1|jos\xe9|COMPLETED\n".encode("latin-1"))
    return p


def _binary(d: Path) -> Path:
    p = d / "junk.bin"
    p.write_bytes(bytes(range(128, 256)) * 40 + bytes(range(128)))
    return p


def _empty(d: Path) -> Path:
    p = d / "empty"
    p.write_bytes(b"")
    return p


def _fifo(d: Path) -> Path:
    p = d / "fifo"
    os.mkfifo(p)
    return p


def _loop(d: Path) -> Path:
    (d / "loop-a").symlink_to(d / "loop-b")
    (d / "loop-b").symlink_to(d / "loop-a")
    return d / "loop-a"


def _folder(d: Path) -> Path:
    (d / "folder").mkdir()
    return d / "folder"


#: A bad input, and words one of which the refusal must hold (none: any clear refusal).
KINDS: dict[str, tuple[Callable[[Path], Path], tuple[str, ...]]] = {
    "latin1": (_latin1, ()),
    "binary": (_binary, ()),
    "empty": (_empty, ()),
    "fifo": (_fifo, ("pipe",)),
    "dev-zero": (lambda d: Path("/dev/zero"), ("not a regular file", "character device")),
    "symlink-loop": (_loop, ("symbolic link loop",)),
    "folder": (_folder, ("folder",)),
    "missing": (lambda d: d / "missing.swf", ("not found", "no such file")),
}

#: Every command that reads a file, ``{}`` standing for the file.
COMMANDS: dict[str, list[str]] = {
    "simulate-w": ["simulate", "-w", "{}", "-p", PLATFORM],
    "simulate-p": ["simulate", "-w", TINY, "-p", "{}"],
    "simulate-scenario": ["simulate", "-w", TINY, "-p", PLATFORM, "--scenario", "{}"],
    "simulate-job-power": ["simulate", "-w", TINY, "-p", PLATFORM, "--job-power", "{}"],
    "simulate-temperature": ["simulate", "-w", TINY, "-p", PLATFORM, "--cooling", "air",
                             "--temperature", "{}"],
    "compare": ["compare", "-w", "{}", "-p", PLATFORM, "-d", "fifo", "--out", "{out}"],
    "trace-info": ["trace-info", "{}"],
    "convert": ["convert", "{}", "{out}.swf"],
    "run-experiment": ["run-experiment", "{}", "--out", "{out}"],
    "plan": ["plan", "-w", "{}", "-p", PLATFORM],
    "report": ["report", "{}", "--out", "{out}"],
    "results": ["results", "{}"],
}


@pytest.fixture(autouse=True)
def _short_pipe_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pipe nobody writes to is refused after PIPE_WAIT s: keep the suite short."""
    monkeypatch.setattr(input_files, "PIPE_WAIT", 0.5)


def _args(template: list[str], path: Path, out: Path) -> list[str]:
    return [a.replace("{}", str(path)).replace("{out}", str(out)) for a in template]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("command", COMMANDS)
def test_every_reader_refuses_bad_files(command: str, kind: str, tmp_path: Path) -> None:
    make, words = KINDS[kind]
    out = tmp_path / "out"
    line = refused(_args(COMMANDS[command], make(tmp_path), out))
    assert not words or any(w in line for w in words), line
    assert_nothing_written(out, tmp_path / "out.swf")


@pytest.mark.parametrize("kind", ["latin1", "binary", "empty"])
@pytest.mark.parametrize("fmt", READERS)
def test_every_format_refuses_bad_bytes(fmt: str, kind: str, tmp_path: Path) -> None:
    out = tmp_path / "o.swf"
    refused(["convert", str(KINDS[kind][0](tmp_path)), str(out), "--from", fmt])
    assert_nothing_written(out)


@pytest.mark.parametrize("command", ["simulate-w", "simulate-p", "trace-info",
                                     "run-experiment"])
def test_dev_zero_is_refused_at_once_in_a_process(command: str, tmp_path: Path) -> None:
    """/dev/zero used to fill the memory for 5-10 s before a MemoryError."""
    refused(_args(COMMANDS[command], Path("/dev/zero"), tmp_path / "out"),
            "not a regular file", process=True, limit=20)


def test_a_pipe_with_format_is_read_once(tmp_path: Path) -> None:
    """``-w <(cat x.swf)``: read once, with or without --format (sniffed from the copy)."""
    pipe = tmp_path / "p"
    for extra in ([], ["--format", "swf"]):
        os.mkfifo(pipe)
        writer = subprocess.Popen(["sh", "-c", 'cat "$0" > "$1"', TINY, str(pipe)])
        try:
            code, out = run_process(["simulate", "-w", str(pipe), "-p", PLATFORM, "--json",
                                     *extra], limit=60)
        finally:
            writer.wait(10)
            pipe.unlink()
        assert code == 0, out
        assert '"jobs": 5' in out, out


def test_a_pipe_nobody_writes_to_names_itself(tmp_path: Path) -> None:
    line = refused(["trace-info", str(_fifo(tmp_path))], "nothing written to the pipe")
    assert str(tmp_path / "fifo") in line


def test_bad_bytes_are_named_by_line(tmp_path: Path) -> None:
    p = tmp_path / "bad.toml"
    p.write_bytes(b'name = "x"\nout = "caf\xe9"\n')
    refused(["run-experiment", str(p)], "line 2", "not UTF-8", str(p))
    refused(["convert", str(_latin1(tmp_path)), str(tmp_path / "o.swf"), "--from", "sacct"],
            "line 2", "not UTF-8")


def test_zero_jobs_is_an_error_in_convert_and_trace_info(tmp_path: Path) -> None:
    header = tmp_path / "header.swf"
    header.write_text("; MaxProcs: 4\n")
    out = tmp_path / "o.swf"
    refused(["convert", str(header), str(out)], "no jobs to convert", "no record")
    refused(["trace-info", str(header)], "no jobs", "no record")
    refused(["convert", TINY, str(out), "--skip", "999999"], "--skip", "passes all 5 job")
    assert_nothing_written(out)


def test_skip_beyond_the_end_does_not_blame_cleaning(tmp_path: Path) -> None:
    for command in (["simulate"], ["plan"], ["compare", "-d", "fifo", "--out",
                                             str(tmp_path / "cmp")]):
        line = refused([*command, "-w", TINY, "-p", PLATFORM, "--skip", "999999"])
        assert "--skip passes all 5 job(s)" in line, line
    assert_nothing_written(tmp_path / "cmp")
    code, _ = run_cli(["simulate", "-w", TINY, "-p", PLATFORM, "--skip", "1"], limit=60)
    assert code == 0


# --- numbers out of range: one set of limits for every reader ---------------------------

def _batsim(tmp_path: Path, job: dict[str, object] | None = None,
            profile: dict[str, object] | None = None) -> Path:
    doc: dict[str, object] = {
        "nb_res": 4, "profiles": {"p": {"type": "delay", "delay": 30, **(profile or {})}},
        "jobs": [{"id": 1, "subtime": 0, "walltime": 100, "res": 1, "profile": "p",
                  **(job or {})}]}
    p = tmp_path / "w.json"
    p.write_text(json.dumps(doc))
    return p


@pytest.mark.parametrize(("job", "profile", "field"), [
    ({"subtime": 1e300}, None, "subtime"),
    ({"subtime": 1e15}, None, "subtime"),
    ({"res": 1e300}, None, "res"),
    ({"id": 10**23}, None, "id"),
    (None, {"delay": 1e300}, "delay"),
])
def test_huge_batsim_numbers(job: dict[str, object] | None, profile: dict[str, object] | None,
                             field: str, tmp_path: Path) -> None:
    """Were OverflowError tracebacks (1e300) or accepted (subtime 1e15)."""
    out = tmp_path / "o.swf"
    refused(["convert", str(_batsim(tmp_path, job, profile)), str(out)], f"'{field}'",
            "beyond")
    assert_nothing_written(out)


def test_a_tiny_speed_is_refused(tmp_path: Path) -> None:
    """``--speed 1e-300`` made run times infinite (OverflowError)."""
    w = _batsim(tmp_path, profile={"type": "parallel_homogeneous", "cpu": 1e10, "com": 0})
    refused(["convert", str(w), str(tmp_path / "o.swf"), "--speed", "1e-300"], "beyond 1e11")


def _sacct(tmp_path: Path, submit: str, limit: str = "01:00:00") -> Path:
    p = tmp_path / "s.txt"
    p.write_text("JobID|Submit|Start|End|Timelimit|NCPUS|State\n"
                 "1|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|01:00:00|1|"
                 "COMPLETED\n"
                 f"2|{submit}|{submit}|{submit[:11]}23:00:00|{limit}|1|COMPLETED\n")
    return p


def test_the_time_limit_holds_for_every_reader(tmp_path: Path) -> None:
    """A sacct job on 9999-12-31 simulated (makespan 2.5e11) and converted to an SWF that
    the SWF reader refused; a huge Timelimit was accepted."""
    far = _sacct(tmp_path, "9999-12-31T00:00:00")
    refused(["simulate", "-w", str(far), "-p", PLATFORM], "job 2", "'submit'", "beyond 1e11")
    refused(["convert", str(far), str(tmp_path / "o.swf")], "beyond 1e11")
    long = _sacct(tmp_path, "2024-01-01T02:00:00", limit="99999999999:00:00")
    refused(["convert", str(long), str(tmp_path / "o.swf")], "'walltime'", "beyond 1e11")
    assert_nothing_written(tmp_path / "o.swf")


def test_an_swf_id_beyond_2_to_the_53_is_refused(tmp_path: Path) -> None:
    lines = Path(TINY).read_text().splitlines()
    row = next(k for k, x in enumerate(lines) if x.strip() and not x.startswith(";"))
    lines[row] = "9007199254740993" + lines[row].lstrip()[1:]
    p = tmp_path / "id.swf"
    p.write_text("\n".join(lines) + "\n")
    refused(["trace-info", str(p)], "job_id", "2^53")


def test_plan_step_beyond_a_day() -> None:
    refused(["plan", "-w", TINY, "-p", PLATFORM, "--watts-per-core", "10", "--step",
             "99999999999"], "step", "one day")


# --- messages that named the wrong thing ------------------------------------------------

def test_messages_name_the_right_thing(tmp_path: Path) -> None:
    out = tmp_path / "o.swf"
    refused(["convert", TINY, str(out), "--to", "xml"], "unknown output format 'xml'")
    assert_nothing_written(out)
    refused(["--offline", "simulate", "-w", "trace:KTH-SP2", "--window-start", "10"],
            "'trace:KTH-SP2' is a catalogued trace")
    refused(["simulate", "-w", TINY, "--window-start", "10"], "a file of format swf")


def test_a_header_value_that_is_not_a_number(tmp_path: Path) -> None:
    """``MaxNodes: four`` was ignored and the machine guessed without it."""
    p = tmp_path / "four.swf"
    p.write_text(Path(TINY).read_text().replace("MaxNodes: 4", "MaxNodes: four"))
    refused(["simulate", "-w", str(p)], str(p), "'MaxNodes'", "'four'")


def test_counts_are_spelled_right() -> None:
    from dispatchlab.report.format import fmt_count

    assert fmt_count(1, "set") == "1 set" and fmt_count(3, "set") == "3 sets"


# --- accounting logs: counts beyond int64, non-numbers, wrapped durations ---------------

_PBS_END = ("03/01/2024 09:00:10;E;101.pbs01;user=alice queue=workq ctime=1709280000 "
            "qtime=1709280000 etime=1709280000 start=1709280010 end=1709283610 "
            "Resource_List.ncpus={ncpus} Resource_List.nodect=1 "
            "Resource_List.walltime={wall} resources_used.walltime=01:00:00\n")


@pytest.mark.parametrize(("ncpus", "wall", "expected"), [
    ("99999999999999999999999", "02:00:00", "beyond 2^53"),  # was a numpy RuntimeWarning
    ("abc", "02:00:00", "'abc' is not a whole number"),  # was counted as a drop
    ("4", "99:99:99", "below 60"),  # was wrapped to 100:40:39
])
def test_pbs_values_are_reported_with_their_line(ncpus: str, wall: str, expected: str,
                                                 tmp_path: Path) -> None:
    p = tmp_path / "acct.log"
    p.write_text(_PBS_END.format(ncpus=ncpus, wall=wall))
    line = refused(["convert", str(p), str(tmp_path / "o.swf")], f"{p}:1", expected)
    assert "RuntimeWarning" not in line
    assert_nothing_written(tmp_path / "o.swf")


def test_sacct_counts_beyond_int64(tmp_path: Path) -> None:
    p = tmp_path / "s.txt"
    p.write_text("JobID|Submit|Start|End|Timelimit|NCPUS|State\n"
                 "1|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|01:00:00|"
                 "99999999999999999999|COMPLETED\n")
    code, out = run_cli(["simulate", "-w", str(p), "-p", PLATFORM])
    assert "RuntimeWarning" not in out
    assert_refused(code, out, f"{p}:2", "'NCPUS'", "beyond 2^53")


def test_a_time_in_a_dst_gap_says_so(tmp_path: Path) -> None:
    """It was only 'unreadable date-time'."""
    p = tmp_path / "s.txt"
    p.write_text("JobID|Submit|Start|End|Timelimit|NCPUS|State\n1|2024-03-31T02:30:00|"
                 "2024-03-31T03:30:00|2024-03-31T04:00:00|01:00:00|1|COMPLETED\n")
    refused(["convert", str(p), str(tmp_path / "o.swf"), "--timezone", "Europe/Rome"],
            f"{p}:2", "'Submit'", "does not exist in Europe/Rome", "daylight-saving gap")


def test_eurora_to_swf_says_what_swf_cannot_hold(tmp_path: Path) -> None:
    """GPU and MIC requests were dropped without a word."""
    eurora = Path(TINY).parents[1] / "eurora" / "sample.log_crypt"
    out = tmp_path / "e.swf"
    code, text = run_cli(["convert", str(eurora), str(out)], limit=60)
    assert code == 0, text
    assert "note: SWF has no field for gpu, mic" in text
    assert "; Note: SWF has no field for gpu, mic" in out.read_text()


def test_fractional_swf_values_are_counted(tmp_path: Path) -> None:
    """A run time of 50.5 s and 4.5 processors were rounded without a word."""
    p = tmp_path / "frac.swf"
    p.write_text(Path(TINY).read_text().replace("    1    100    5   50     4",
                                                "    1    100    5   50.5   4.5"))
    code, out = run_cli(["convert", str(p), str(tmp_path / "o.swf")])
    assert code == 0, out
    assert "fractional_rounded=1" in out


def test_header_machine_errors_name_the_file(tmp_path: Path) -> None:
    p = tmp_path / "huge.swf"
    p.write_text(Path(TINY).read_text().replace("MaxNodes: 4", "MaxNodes: 99999999999"))
    refused(["simulate", "-w", str(p)], str(p), "SWF header", "1,000,000")


def test_os_errors_read_as_a_sentence(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                      ) -> None:
    """No raw '[Errno 2] No such file or directory' from an OSError reaching the CLI."""
    import typer

    from dispatchlab.cli.errors import friendly_errors

    @friendly_errors
    def opener() -> None:
        (tmp_path / "nope" / "x").read_text()

    with pytest.raises(typer.Exit):
        opener()
    err = capsys.readouterr().err
    assert err.startswith(f"error: {tmp_path / 'nope' / 'x'}: file not found"), err
    assert "Errno" not in err


def test_a_pipe_beyond_the_limit_is_refused_and_leaves_no_copy(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``-w <(cat /dev/zero)`` must not fill the disk with its temporary copy."""
    import tempfile

    spool = tmp_path / "spool"
    spool.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spool))
    pipe = _fifo(tmp_path)
    writer = subprocess.Popen(["sh", "-c", 'head -c 3000000 /dev/zero > "$0"', str(pipe)])
    try:
        with pytest.raises(ValueError, match="more than 1 MB from the pipe"), \
                input_files.readable_path(pipe, ValueError, limit=2**20):
            pass
    finally:
        writer.kill()
        writer.wait(10)
    assert list(spool.iterdir()) == []


@pytest.mark.parametrize(("extra", "job", "field"), [
    ({"queues": [{"name": "q", "ewt": "abc"}]}, {}, "dispatchlab.queues[0].ewt"),
    ({"queues": [{"name": "q", "ewt": 1e300}]}, {}, "dispatchlab.queues[0].ewt"),
    ({}, {"req": {"cores": "x"}}, "req.cores of job 1"),
    ({}, {"logged_wait": "x"}, "logged_wait of job 1"),
])
def test_batsim_extra_fields_that_are_not_numbers(extra: dict[str, object],
                                                   job: dict[str, object], field: str,
                                                   tmp_path: Path) -> None:
    """A queue table or extra job field that is not a number was a ValueError traceback."""
    w = _batsim(tmp_path, job)
    doc = json.loads(w.read_text())
    doc["dispatchlab"] = extra
    w.write_text(json.dumps(doc))
    refused(["trace-info", str(w)], f"'{field}'", "whole number")


def test_an_experiment_from_a_pipe_runs_and_is_kept(tmp_path: Path) -> None:
    """The experiment file was read twice (shutil.copyfile refuses a named pipe)."""
    text = (f'name = "pipe"\nseeds = [0]\ndispatchers = ["fifo"]\n'
            f'platforms = ["{PLATFORM}"]\n[[workloads]]\npath = "{TINY}"\n')
    pipe = _fifo(tmp_path)
    writer = subprocess.Popen(["sh", "-c", 'printf "%s" "$1" > "$0"', str(pipe), text])
    try:
        code, out = run_cli(["run-experiment", str(pipe), "--out", str(tmp_path / "o")],
                            limit=120)
    finally:
        writer.wait(10)
    assert code == 0, out
    assert (tmp_path / "o" / "experiment.toml").read_text() == text


def test_a_gzipped_trace_from_a_pipe(tmp_path: Path) -> None:
    """``-w <(cat x.swf.gz)``: the copy has no .gz name; gzip is told by its magic."""
    import gzip

    pipe = _fifo(tmp_path)
    data = gzip.compress(Path(TINY).read_bytes())
    writer = subprocess.Popen(["sh", "-c", 'cat > "$0"', str(pipe)], stdin=subprocess.PIPE)
    assert writer.stdin is not None
    writer.stdin.write(data)
    writer.stdin.close()
    try:
        code, out = run_cli(["trace-info", str(pipe), "--json"], limit=60)
    finally:
        writer.wait(10)
    assert code == 0, out
    assert '"jobs": 5' in out


@pytest.mark.parametrize("plan", [b"\xff\xfe junk", b"{bad", b"[1]", b'{"runs": [1]}'])
@pytest.mark.parametrize("command", ["results", "report"])
def test_a_damaged_plan_json(command: str, plan: bytes, tmp_path: Path) -> None:
    """Bytes that are not UTF-8 and '{bad' were tracebacks in results."""
    (tmp_path / "runs").mkdir()
    (tmp_path / "plan.json").write_bytes(plan)
    refused([command, str(tmp_path)], "plan.json is damaged")
