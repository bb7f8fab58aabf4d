"""The HTML report is written, self-contained, and every figure file exists and is non-empty."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dispatchlab import __version__
from dispatchlab.cli.demo_cmd import demo_trace
from dispatchlab.cli.main import app
from dispatchlab.dispatchers.registry import presets
from dispatchlab.experiments import RunStore, execute_run, parse_experiment, plan
from dispatchlab.report import build_comparison, write_report

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def dispatchers() -> list[str]:
    """FIFO plus up to two more registered presets (the report needs several lines)."""
    extra = [d for d in ("easy", "sjf", "conservative") if d in presets()][:2]
    return ["fifo", *extra]


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small comparison (600 jobs, whole + 3 windows) run in this process."""
    out = tmp_path_factory.mktemp("report")
    wl = {"path": str(demo_trace()), "name": "kth", "limit": 600}
    spec = parse_experiment(
        {"name": "r", "workloads": [wl, {**wl, "windows": 3}], "dispatchers": dispatchers()}
    )
    store = RunStore(out)
    for run in plan(spec):
        store.save(run, execute_run(run.config), backend="inline")
    return out


@pytest.mark.slow
def test_report_has_every_figure_and_embeds_them(stored: Path) -> None:
    records = list(RunStore(stored).records())
    cmp = build_comparison(
        records,
        title="Report test",
        order=dispatchers(),
        context={"workload": "kth (600 jobs)", "platform": "100 nodes"},
    )
    files = write_report(cmp, stored / "report")
    names = {f.name for f in files.figures}
    expected = {"utilization", "queue_length", "cdf_wait_bsld", "classes", "means_ci"}
    expected |= {f"gantt_{d}" for d in dispatchers()}
    assert expected <= names, expected - names
    for fig in files.figures:
        assert fig.png.read_bytes()[:8] == PNG_MAGIC, fig.png
        assert fig.png.stat().st_size > 5_000, fig.png
        assert fig.svg is not None and fig.svg.stat().st_size > 5_000
        ET.parse(fig.svg)  # well-formed SVG
    assert files.static_html is not None
    page = files.static_html.read_text()
    assert page.count("data:image/png;base64,") == len(files.figures)
    for section in (
        "Summary",
        "By job duration class",
        "Figures",
        "Statistics over repeated sets",
        "Configuration and versions",
    ):
        assert f"<h2>{section}" in page, section
    for d in dispatchers():
        assert d in page
    assert "Friedman" in page or "needs at least two dispatchers" in page
    assert f"&quot;dispatchlab&quot;: &quot;{__version__}&quot;" in page, "versions are shown"
    # the page works alone: no reference to anything but the figure files beside it
    refs = set(re.findall(r'(?:href|src)="([^"#]+)"', page))
    assert all(r.startswith("data:") or (stored / "report" / r).is_file() for r in refs)
    # the interactive page: plotly.js and every other file it names are beside it
    web = files.html.read_text()
    refs = set(re.findall(r'(?:href|src)="([^"#]+)"', web))
    assert "plotly.min.js" in refs
    assert all((stored / "report" / r).is_file() for r in refs), refs
    assert "http://" not in web.split("<script")[0] and "cdn" not in web.lower()


@pytest.mark.slow
def test_large_runs_skip_the_gantt_with_a_note(stored: Path) -> None:
    records = list(RunStore(stored).records())
    cmp = build_comparison(records, title="t", order=dispatchers())
    files = write_report(cmp, stored / "report-small", gantt_max_jobs=100)
    assert not [f for f in files.figures if f.name.startswith("gantt")]
    assert any("Gantt charts are drawn for runs of up to 100 jobs" in n for n in files.notes)


@pytest.mark.slow
def test_compare_command_writes_tables_and_report(tmp_path: Path) -> None:
    out = tmp_path / "cmp"
    args = [
        "compare",
        "-w",
        str(demo_trace()),
        "--limit",
        "300",
        "-d",
        ",".join(dispatchers()),
        "--out",
        str(out),
        "--windows",
        "2",
        "--workers",
        "2",
        "--json",
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["dispatchers"] == dispatchers()
    assert set(doc["summary"]) == set(dispatchers())
    assert set(doc["classes"]["fifo"]) == {"short", "medium", "long"}
    assert doc["statistics"]["n_sets"] == 2
    assert Path(doc["report"]).is_file()
    for name in ("results.parquet", "results.csv", "breakdown.csv", "compare.json"):
        assert (out / name).stat().st_size > 0, name
    # running it again reuses every stored run
    again = CliRunner().invoke(app, [*args[:-1], "--no-report"])
    assert again.exit_code == 0, again.output
    assert f"{3 * len(dispatchers())} already done" in " ".join(again.output.split())


def test_results_command_gathers_a_tidy_table(tmp_path: Path, stored: Path) -> None:
    result = CliRunner().invoke(app, ["results", str(stored), "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["runs"] == 4 * len(dispatchers())
    import pandas as pd

    table = pd.read_parquet(stored / "results.parquet")
    assert len(table) == 4 * len(dispatchers())
    assert {"run", "dispatcher", "seed", "window", "block", "mean_wait", "utilization"} <= set(
        table.columns
    )
    assert table["run"].is_unique
    bd = pd.read_csv(stored / "breakdown.csv")
    assert set(bd["kind"]) == {"class"}
    bad = CliRunner().invoke(app, ["results", str(tmp_path)])
    assert bad.exit_code == 2 and "no runs/ folder" in bad.output


def test_report_command_writes_the_interactive_page(stored: Path, tmp_path: Path) -> None:
    out = tmp_path / "rep"
    result = CliRunner().invoke(app, ["report", str(stored), "--out", str(out),
                                      "--gantt-max-jobs", "0"])
    assert result.exit_code == 0, result.output
    page = (out / "index.html").read_text()
    assert (out / "plotly.min.js").stat().st_size > 1_000_000
    assert 'id="summary"' in page and 'id="web-util-cores"' in page
    assert "web-gantt" not in page  # --gantt-max-jobs 0: none
    for family in ("energy", "capacity", "profile", "profit", "malleable"):
        assert f'<section id="{family}"' not in page, family  # KTH runs have none of these
    bad = CliRunner().invoke(app, ["report", str(tmp_path)])
    assert bad.exit_code == 2 and "no runs/ folder" in bad.output
