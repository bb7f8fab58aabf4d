"""The interactive report in a real headless Chromium (offline): no console error, every
figure drawn, a Gantt job's tooltip, tables that fit 1280 px, sorting, linked time axes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dispatchlab.cli.demo_cmd import demo_trace
from dispatchlab.experiments import RunStore, execute_run, parse_experiment, plan
from dispatchlab.report import build_comparison, write_report
from tests.report.browser import OpenedReport, open_report

DISPATCHERS = ["fifo", "easy"]
JOBS = 400
#: Fewer bars than jobs: the Gantt charts show a window over an occupancy map.
GANTT_BARS = 250


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A KTH comparison (400 jobs, whole + 2 windows) and its report."""
    out = tmp_path_factory.mktemp("web")
    wl = {"path": str(demo_trace()), "name": "kth", "limit": JOBS}
    spec = parse_experiment({"name": "web", "workloads": [wl, {**wl, "windows": 2}],
                             "dispatchers": DISPATCHERS})
    store = RunStore(out)
    for run in plan(spec):
        store.save(run, execute_run(run.config), backend="inline")
    cmp = build_comparison(list(store.records()), title="Browser test", order=DISPATCHERS,
                           context={"workload": f"kth ({JOBS} jobs)"})
    return write_report(cmp, out / "report", gantt_max_jobs=GANTT_BARS).html


@pytest.fixture(scope="module")
def opened(browser: Any, report: Path) -> Iterator[OpenedReport]:
    page = open_report(browser, report)
    yield page
    page.close()


def figure_ids(report: Path) -> list[str]:
    text = report.read_text()
    data = text.split('id="report-figures">', 1)[1].split("</script>", 1)[0]
    return [f["id"] for f in json.loads(data.replace("<\\/", "</"))]


def test_opens_offline_without_errors_and_draws_every_figure(opened: OpenedReport,
                                                               report: Path) -> None:
    page = opened.page
    assert opened.errors == []
    assert opened.failed == []
    assert opened.requests and all(u.startswith("file:") for u in opened.requests)
    assert any(u.endswith("/plotly.min.js") for u in opened.requests)
    assert 0 < opened.rendered_ms < 60_000
    for button in page.locator(".tabs button").all():  # Gantt charts draw when opened
        button.click()
        page.wait_for_function(
            "id => document.getElementById(id).dataset.rendered === '1'",
            arg=button.get_attribute("data-target"))
    ids = figure_ids(report)
    assert {f"web-gantt-{d}" for d in DISPATCHERS} <= set(ids)
    drawn = page.evaluate("""ids => ids.filter(id => {
        const d = document.getElementById(id);
        return d && d.dataset.rendered === '1' && d.querySelector('svg.main-svg') &&
               d._fullData && d._fullData.length > 0; })""", ids)
    assert drawn == ids
    assert opened.errors == []


def test_hovering_a_gantt_job_shows_its_details(opened: OpenedReport) -> None:
    page = opened.page
    page.locator(f'.tabs button[data-target="web-gantt-{DISPATCHERS[0]}"]').click()
    plot = page.locator(f"#web-gantt-{DISPATCHERS[0]}")
    plot.scroll_into_view_if_needed()
    page.wait_for_function(f"document.getElementById('web-gantt-{DISPATCHERS[0]}')"
                           ".dataset.rendered === '1'")
    x, y = page.evaluate("""id => {  // the middle of the largest bar
        let best = null, area = 0;
        for (const p of document.querySelectorAll('#' + id + ' .bars .point path')) {
            const r = p.getBoundingClientRect();
            if (r.width * r.height > area) { area = r.width * r.height; best = r; }
        }
        return [best.x + best.width / 2, best.y + best.height / 2];
    }""", f"web-gantt-{DISPATCHERS[0]}")
    page.mouse.move(x, y)
    tip = plot.locator(".hoverlayer .hovertext")
    tip.wait_for(timeout=20_000)
    text = tip.text_content() or ""
    for word in ("job ", "user ", "queue ", "request: ", "wall-time", "wait ", "ran "):
        assert word in text, text
    assert "completed" in text or "killed" in text, text
    note = plot.locator("xpath=../figcaption").inner_text()
    assert f"the {GANTT_BARS} jobs of {JOBS}" in note  # the sampling is said


def test_summary_table_fits_1280_px_without_wrapped_numbers(opened: OpenedReport) -> None:
    fit = opened.page.evaluate("""() => {
        const t = document.querySelector('#summary table.sortable');
        const wrap = t.closest('.tablewrap');
        const wrapped = [];
        for (const td of t.querySelectorAll('td')) {
            const tops = new Set();  // one top per line of text
            const texts = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
            while (texts.nextNode()) {
                const r = document.createRange(); r.selectNodeContents(texts.currentNode);
                for (const x of r.getClientRects()) tops.add(Math.round(x.top));
            }
            if (tops.size > 1) wrapped.push(td.textContent);
        }
        return {right: t.getBoundingClientRect().right, scroll: wrap.scrollWidth,
                client: wrap.clientWidth, page: document.documentElement.scrollWidth,
                wrapped: wrapped, cells: t.querySelectorAll('td').length};
    }""")
    assert fit["cells"] >= len(DISPATCHERS) * 8
    assert fit["right"] <= 1280 and fit["scroll"] <= fit["client"], fit
    assert fit["page"] <= 1280, "nothing on the page is wider than the window"
    assert fit["wrapped"] == []


def test_clicking_a_header_sorts_the_table(opened: OpenedReport) -> None:
    page = opened.page
    header = page.locator("#summary table.sortable th", has_text="mean wait").first
    assert header.get_attribute("title", timeout=1_000).startswith("mean wait")
    for expect_ascending in (True, False):
        header.click()
        values = page.evaluate("""() => Array.from(document.querySelector(
            '#summary table.sortable').tBodies[0].rows).map(r => +r.cells[1].dataset.v)""")
        assert values == sorted(values, reverse=not expect_ascending)


def test_zooming_one_time_figure_zooms_the_others(opened: OpenedReport) -> None:
    page = opened.page
    page.evaluate("Plotly.relayout(document.getElementById('web-util-cores'), "
                  "{'xaxis.range': [1, 2]})")
    page.wait_for_function("""() => ['web-queue', 'web-gantt-fifo'].every(id => {
        const r = document.getElementById(id).layout.xaxis.range;
        return Math.abs(r[0] - 1) < 1e-9 && Math.abs(r[1] - 2) < 1e-9; })""", timeout=20_000)
