"""Issue 19 defects found by hostile input: each is a one-line error with exit code 2, or
the documented behaviour (nothing silently dropped or altered)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dispatchlab.cli.main import app
from tests.conftest import shared_trace

runner = CliRunner()


def _kth_text(n: int = 300) -> str:
    """The KTH header and its first ``n`` records."""
    lines: list[str] = []
    with gzip.open(shared_trace("KTH-SP2-1996-2.1-cln.swf.gz"), "rt") as fh:
        for line in fh:
            lines.append(line)
            if not line.startswith(";") and sum(not x.startswith(";") for x in lines) >= n:
                break
    return "".join(lines)


def _json(args: list[str]) -> dict[str, object]:
    result = runner.invoke(app, ["simulate", *args, "--json"])
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.stdout))


def _fails(args: list[str], *expected: str) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = [x for x in result.output.splitlines() if x.strip()]
    assert len(lines) == 1, result.output
    for text in expected:
        assert text in lines[0], lines[0]
    return lines[0]


def test_utf8_bom_keeps_the_header(tmp_path: Path) -> None:
    """A BOM used to hide the header's first line: 82 nodes instead of 100, waits 5× off."""
    plain, bom = tmp_path / "plain.swf", tmp_path / "bom.swf"
    text = _kth_text()
    plain.write_text(text, encoding="utf-8")
    bom.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    a, b = _json(["-w", str(plain)]), _json(["-w", str(bom)])
    for key in ("jobs", "mean_wait", "makespan", "utilization"):
        assert a[key] == b[key], key
    shown = runner.invoke(app, ["simulate", "-w", str(bom)])
    assert "nodes=100,cores=1" in shown.stdout


def test_damaged_gzip_files(tmp_path: Path) -> None:
    raw = gzip.compress(_kth_text().encode())
    trunc = tmp_path / "trunc.swf.gz"
    trunc.write_bytes(raw[: len(raw) // 2])
    plain = tmp_path / "plain.swf.gz"
    plain.write_text(_kth_text())
    garbage = tmp_path / "garbage.swf.gz"
    garbage.write_bytes(bytes(range(256)) * 8)
    _fails(["simulate", "-w", str(trunc)], "trunc.swf.gz", "truncated gzip file")
    _fails(["simulate", "-w", str(plain)], "plain.swf.gz", "not a gzip file")
    _fails(["simulate", "-w", str(garbage)], "garbage.swf.gz", "not a gzip file")


def test_no_jobs_is_an_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty.swf"
    empty.write_text("")
    header = tmp_path / "header.swf"
    header.write_text("".join(x for x in _kth_text().splitlines(True) if x.startswith(";")))
    full = tmp_path / "kth.swf"
    full.write_text(_kth_text())
    _fails(["simulate", "-w", str(empty), "-p", "nodes=4,cores=1"], "empty.swf", "no jobs")
    _fails(["simulate", "-w", str(header)], "header.swf", "no jobs")
    _fails(["simulate", "-w", str(full), "--limit", "0"], "limit", "at least 1")
    _fails(["simulate", "-w", str(full), "--skip", "100000"], "no jobs")


@pytest.mark.parametrize(("spec", "field"), [
    ("nodes=2000000000,cores=1", "nodes"),
    ("nodes=4,cores=100000000000000000000", "cores"),
])
def test_platform_size_limit(spec: str, field: str, tmp_path: Path) -> None:
    """nodes=2e9 used to allocate all memory and get OOM-killed."""
    trace = tmp_path / "kth.swf"
    trace.write_text(_kth_text(20))
    _fails(["simulate", "-w", str(trace), "-p", spec], f"field '{field}'", "more than")


def test_platform_file_size_limit(tmp_path: Path) -> None:
    toml = tmp_path / "big.toml"
    toml.write_text("[[nodes]]\ncount = 5000000\ncapacity = { cores = 4 }\n")
    trace = tmp_path / "kth.swf"
    trace.write_text(_kth_text(20))
    _fails(["simulate", "-w", str(trace), "-p", str(toml)], "nodes", "more than")


def test_out_refuses_files_and_earlier_results(tmp_path: Path) -> None:
    trace = tmp_path / "kth.swf"
    trace.write_text(_kth_text(50))
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    base = ["simulate", "-w", str(trace), "--json", "--out"]
    _fails([*base, str(a_file)], "a-file is a file")
    _fails([*base, str(a_file / "sub")], "a-file is a file")
    out = tmp_path / "run"
    first = runner.invoke(app, [*base, str(out)])
    assert first.exit_code == 0, first.output
    _fails([*base, str(out)], "already holds results", "--force")
    again = runner.invoke(app, [*base, str(out), "--force", "--limit", "20"])
    assert again.exit_code == 0, again.output
    assert json.loads((out / "summary.json").read_text())["summary"]["jobs"] == 20
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file", "kth.swf", "run"]


def test_out_is_written_atomically(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write that fails half-way (disk full) leaves no partial folder behind."""
    import pandas as pd

    trace = tmp_path / "kth.swf"
    trace.write_text(_kth_text(50))

    def disk_full(*_a: object, **_k: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pd.DataFrame, "to_csv", disk_full)
    _fails(["simulate", "-w", str(trace), "--json", "--out", str(tmp_path / "run")],
           f"cannot write '{tmp_path / 'run'}': no space left on device")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kth.swf"]


def test_cleaning_report_in_json_and_summary(tmp_path: Path) -> None:
    """Dropped records and replaced requested times are reported, not silent."""
    text = _kth_text(30).splitlines(True)
    records = [k for k, x in enumerate(text) if not x.startswith(";")]
    fields = text[records[0]].split()
    fields[4] = fields[7] = "-1"  # no processor count at all: dropped
    text[records[0]] = " ".join(fields) + "\n"
    fields = text[records[1]].split()
    fields[8] = "-1"  # no requested time: the run time is used
    text[records[1]] = " ".join(fields) + "\n"
    trace = tmp_path / "kth.swf"
    trace.write_text("".join(text))
    out = tmp_path / "run"
    doc = _json(["-w", str(trace), "--out", str(out)])
    assert doc["cleaning"] == {"dropped_no_procs": 1, "estimate_from_runtime": 1}
    saved = json.loads((out / "summary.json").read_text())["summary"]
    assert saved["cleaning"] == doc["cleaning"]


def _edited(tmp_path: Path, row: int, field: int, value: str, name: str = "x.swf") -> Path:
    """The KTH slice with field ``field`` (0-based) of record ``row`` replaced."""
    text = _kth_text(40).splitlines(True)
    records = [k for k, x in enumerate(text) if not x.startswith(";")]
    parts = text[records[row]].split()
    parts[field] = value
    text[records[row]] = " ".join(parts) + "\n"
    path = tmp_path / name
    path.write_text("".join(text))
    return path


@pytest.mark.parametrize(("field", "value", "name"), [
    (1, "1e15", "submit"), (3, "1000000000000000000", "run_time"),
    (11, "1e20", "user"), (8, "1e18", "req_time"),
])
def test_values_beyond_range_name_line_and_field(tmp_path: Path, field: int, value: str,
                                                 name: str) -> None:
    """Used to run, then crash (times 1e12–1e18) or silently wrap (user 1e20)."""
    path = _edited(tmp_path, 10, field, value)
    _fails(["simulate", "-w", str(path)], "x.swf:", f"field '{name}'", "beyond")


def test_generator_size_limit() -> None:
    _fails(["simulate", "-w", "gen:eurora-like:jobs=100000000000", "-p", "eurora"],
           "field 'jobs'", "at most 50,000,000")


@pytest.mark.parametrize(("platform", "expect"), [
    ("", "empty"), (".", "is a folder"), ("euroar", "did you mean 'eurora'"),
])
def test_platform_messages(tmp_path: Path, platform: str, expect: str) -> None:
    trace = tmp_path / "kth.swf"
    trace.write_text(_kth_text(20))
    _fails(["simulate", "-w", str(trace), "-p", platform], expect)


def test_toml_table_names_are_printed(tmp_path: Path) -> None:
    """Rich markup used to eat ``[[nodes]]`` in messages (printed as ``[]``)."""
    toml = tmp_path / "p.toml"
    toml.write_text("name = 'x'\n")
    trace = tmp_path / "kth.swf"
    trace.write_text(_kth_text(20))
    line = _fails(["simulate", "-w", str(trace), "-p", str(toml)])
    assert "[[nodes]]" in line


def test_header_platform_keeps_maxprocs(tmp_path: Path) -> None:
    """MaxProcs not a multiple of MaxNodes (Curie: 93,312 on 5,544) must not round every
    node up (94,248 cores); --swf-cores-per-node contradicting the header is an error."""
    from dispatchlab.workload.platform_for import header_machine

    plat = header_machine(5544, 93312)
    assert int(plat.total[0]) == 93312 and plat.capacity.shape[0] == 5544
    assert set(plat.capacity[:, 0].tolist()) == {16, 17}
    text = _kth_text(40).replace("MaxProcs: 100", "MaxProcs: 250")
    trace = tmp_path / "h.swf"
    trace.write_text(text)
    shown = runner.invoke(app, ["simulate", "-w", str(trace)])
    assert shown.exit_code == 0, shown.output
    assert "(250 cores)" in shown.stdout
    _fails(["simulate", "-w", str(trace), "--swf-units", "nodes", "--swf-cores-per-node", "4"],
           "field 'swf-cores-per-node'", "MaxProcs 250")


def test_statistics_levels_and_gantt_limit(tmp_path: Path) -> None:
    out = tmp_path / "cmp"
    (out / "runs").mkdir(parents=True)
    _fails(["results", str(out), "--confidence", "1.5"], "--confidence", "between 0 and 1")
    _fails(["results", str(out), "--alpha", "2"], "--alpha", "between 0 and 1")
    trace = tmp_path / "kth.swf"
    trace.write_text(_kth_text(20))
    base = ["compare", "-w", str(trace), "-d", "fifo,sjf", "-o", str(tmp_path / "c")]
    _fails([*base, "--alpha", "2"], "--alpha")
    _fails([*base, "--gantt-max-jobs", "-1"], "--gantt-max-jobs")


def test_time_zones(tmp_path: Path) -> None:
    """Issue 19 defect 10: an unknown zone used to become UTC; TimeZone was ignored."""
    from dispatchlab.workload.load import load_workload

    text = _kth_text(20)
    bad = tmp_path / "bad-tz.swf"
    bad.write_text(text.replace("TimeZoneString: Europe/Stockholm", "TimeZoneString: Mars/Base"))
    _fails(["simulate", "-w", str(bad)], "bad-tz.swf", "field 'TimeZoneString'", "Mars/Base")
    offset = tmp_path / "offset.swf"
    offset.write_text(text.replace("; TimeZoneString: Europe/Stockholm\n", ""))
    assert load_workload(str(offset)).timezone == "Etc/GMT-1"  # TimeZone: 3600


@pytest.mark.parametrize(("key", "value", "expect"), [
    ("origin_unix", '"yesterday"', "origin_unix"),
    ("origin_unix", "1e30", "origin_unix"),
    ("timezone", '"Mars/Base"', "unknown time zone"),
])
def test_bad_sidecar_values(tmp_path: Path, key: str, value: str, expect: str) -> None:
    import re

    from dispatchlab.workload.load import load_workload
    from dispatchlab.workload.native import csv_sidecar, write_csv

    src = tmp_path / "kth.swf"
    src.write_text(_kth_text(20))
    table = tmp_path / "w.csv"
    write_csv(load_workload(str(src)), table)
    side = csv_sidecar(table)
    doc = side.read_text()
    doc, n = re.subn(rf'"{key}": [^,}}\n]+', f'"{key}": {value}', doc)
    assert n == 1, doc[:300]
    side.write_text(doc)
    _fails(["simulate", "-w", str(table), "-p", "nodes=100,cores=1"], expect)


def test_platform_file_extending_itself(tmp_path: Path) -> None:
    """Used to end in a RecursionError traceback."""
    (tmp_path / "self.toml").write_text('extends = "self.toml"\n')
    (tmp_path / "a.toml").write_text('extends = "b.toml"\n')
    (tmp_path / "b.toml").write_text('extends = "a.toml"\n')
    trace = tmp_path / "kth.swf"
    trace.write_text(_kth_text(20))
    _fails(["simulate", "-w", str(trace), "-p", str(tmp_path / "self.toml")], "extends itself")
    _fails(["simulate", "-w", str(trace), "-p", str(tmp_path / "a.toml")],
           "extends itself (a.toml → b.toml → a.toml)")


def test_ctrl_c_while_writing_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pandas as pd

    trace = tmp_path / "kth.swf"
    trace.write_text(_kth_text(50))

    def interrupted(*_a: object, **_k: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(pd.DataFrame, "to_csv", interrupted)
    result = runner.invoke(app, ["simulate", "-w", str(trace), "--json", "--out",
                                 str(tmp_path / "run")])
    assert result.exit_code == 130
    assert "interrupted while writing" in result.output and "nothing written" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kth.swf"]


def test_eurora_without_platform_suggests_the_preset() -> None:
    sample = Path(__file__).parents[1] / "data" / "eurora" / "sample.log_crypt"
    _fails(["simulate", "-w", str(sample)], "-p eurora")


def test_unknown_platform_resource(tmp_path: Path) -> None:
    """``foo`` used to be accepted (and ignored); a resource the workload requests is fine."""
    trace = tmp_path / "kth.swf"
    trace.write_text(_kth_text(20))
    _fails(["simulate", "-w", str(trace), "-p", "nodes=100,cores=1,foo=2"],
           "unknown resource 'foo'")
    ok = runner.invoke(app, ["simulate", "-w", str(trace), "-p", "nodes=100,cores=1,gpu=2",
                             "--json"])
    assert ok.exit_code == 0, ok.output
