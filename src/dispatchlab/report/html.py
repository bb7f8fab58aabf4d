"""A self-contained HTML page for a comparison: tables, embedded figures, provenance."""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from dispatchlab.report.analysis import Comparison
from dispatchlab.report.format import fmt_ci, fmt_metric
from dispatchlab.report.tables import GROUP_METRICS, best_rows, group_label, group_rows, groups_of
from dispatchlab.stats.metrics import METRICS
from dispatchlab.stats.ranking import Ranking

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;
max-width:1100px;color:#222;line-height:1.45;padding:0 1em}
h1{font-size:1.6em;margin-bottom:.2em} h2{margin-top:1.8em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}
th,td{border:1px solid #ddd;padding:.3em .6em;text-align:right}
th{background:#f4f4f4} td:first-child,th:first-child{text-align:left}
td.best{font-weight:bold;background:#eef7ee} .muted{color:#666;font-size:.9em}
figure{margin:1.2em 0} figure img{max-width:100%;border:1px solid #eee}
figcaption{color:#444;font-size:.9em} pre{background:#f7f7f7;padding:.8em;overflow:auto;
font-size:.8em} details{margin:.5em 0} .swatch{display:inline-block;width:.8em;height:.8em;
margin-right:.3em;border-radius:2px;vertical-align:middle}
"""


@dataclass(frozen=True)
class FigureFile:
    """A figure written next to the page."""

    name: str
    title: str
    caption: str
    png: Path
    svg: Path | None = None


def _e(text: Any) -> str:
    return html.escape(str(text))


def _table(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    best: Sequence[Sequence[bool]] | None = None,
    *,
    raw_first: bool = False,
) -> str:
    out = ["<table><thead><tr>", *(f"<th>{_e(h)}</th>" for h in header), "</tr></thead><tbody>"]
    for i, row in enumerate(rows):
        out.append("<tr>")
        for j, cell in enumerate(row):
            cls = ' class="best"' if best and best[i][j] else ""
            text = cell if raw_first and j == 0 else _e(cell)
            out.append(f"<td{cls}>{text}</td>")
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _best_mask(df: pd.DataFrame, keys: Sequence[str]) -> list[list[bool]]:
    best = {k: best_rows(df, k) for k in keys}
    return [[False, *(str(d) in best[k] for k in keys)] for d in df.index]


def _swatch(name: str, colors: dict[str, str]) -> str:
    c = colors.get(name, "#888")
    return f'<span class="swatch" style="background:{c}"></span>{_e(name)}'


def summary_html(cmp: Comparison, colors: dict[str, str]) -> str:
    """The main comparison table, best value per column in bold."""
    df = cmp.summary
    keys = [c for c in df.columns if c != "runs"]
    header = ["dispatcher", *(METRICS[k].label if k in METRICS else k for k in keys)]
    rows = [
        [_swatch(str(d), colors), *(fmt_metric(k, row[k]) for k in keys)]
        for d, row in df.iterrows()
    ]
    note = ""
    if len(df) and int(df["runs"].max()) > 1:
        note = f'<p class="muted">Means over {int(df["runs"].max())} seeds per dispatcher.</p>'
    return _table(header, rows, _best_mask(df, keys), raw_first=True) + note


def groups_html(table: pd.DataFrame, kind: str) -> str:
    """Per-class or per-queue table: one column block per group."""
    if not len(table):
        return ""
    groups = groups_of(table)
    header = ["dispatcher"]
    for g in groups:
        label = group_label(kind, str(g))
        header += [
            f"{label}: jobs",
            f"{label}: mean wait",
            f"{label}: p90 wait",
            f"{label}: mean bsld",
        ]
    return _table(header, group_rows(table, GROUP_METRICS))


def ranking_html(r: Ranking) -> str:
    """Friedman result, the tiered "significantly better" table and all pairs."""
    info = METRICS[r.metric]
    direction = "lower is better" if info.lower_is_better else "higher is better"
    parts = [f"<h3>{_e(info.label)} <span class='muted'>({direction})</span></h3>"]
    fr = r.friedman
    if fr is None:
        parts.append(f"<p class='muted'>{_e(r.note)}</p>")
        return "".join(parts)
    parts.append(
        f"<p>Friedman χ²<sub>F</sub> = {fr.chi2:.2f} (k = {fr.k}, N = {fr.n_blocks}, "
        f"df = {fr.k - 1}), p = {fr.p_value:.3g}; Iman–Davenport F = {fr.f:.2f}, "
        f"p = {fr.f_p_value:.3g}. Post-hoc SE = √(k(k+1)/(6N)) = {r.standard_error:.3f}, "
        f"α = {r.alpha}, p-values {'Holm-adjusted' if r.adjust == 'holm' else 'unadjusted'}."
        + (f" {_e(r.dropped_blocks)} incomplete set(s) left out." if r.dropped_blocks else "")
        + "</p>"
    )
    if r.note:
        parts.append(f"<p class='muted'>{_e(r.note)}</p>")
    rows = [
        [
            str(x.tier),
            x.name,
            f"{x.mean_rank:.2f}",
            ", ".join(x.better_than) or "–",
            ", ".join(x.worse_than) or "–",
        ]
        for x in r.rows
    ]
    parts.append(
        _table(
            [
                "tier",
                "dispatcher",
                "mean rank",
                "significantly better than",
                "significantly worse than",
            ],
            rows,
        )
    )
    prow = [
        [
            f"{p.a} vs {p.b}",
            f"{p.rank_a - p.rank_b:+.2f}",
            f"{p.z:+.2f}",
            f"{p.p_value:.3g}",
            f"{p.p_adjusted:.3g}",
            p.better or "–",
        ]
        for p in r.pairs
    ]
    parts.append(
        "<details><summary>all pairwise comparisons</summary>"
        + _table(
            ["pair", "rank difference", "z", "p", "p (adjusted)", "significantly better"], prow
        )
        + "</details>"
    )
    return "".join(parts)


def stats_html(cmp: Comparison) -> str:
    """Means with intervals over the sets, then one ranking per metric."""
    st = cmp.stats
    note = f"<p class='muted'>{_e(cmp.stats_note)}</p>" if cmp.stats_note else ""
    if st is None:
        return note + (
            "<p class='muted'>Only one set of runs: give trace windows "
            "(<code>--windows K</code>) or seeds of a seeded workload to get confidence "
            "intervals and significance tests.</p>"
        )
    metrics = list(dict.fromkeys(st.means["metric"]))
    header = ["dispatcher", *(METRICS[m].label for m in metrics)]
    rows = []
    for d in dict.fromkeys(st.means["dispatcher"]):
        cells = [str(d)]
        for m in metrics:
            row = st.means[(st.means["dispatcher"] == d) & (st.means["metric"] == m)].iloc[0]
            cells.append(fmt_ci(m, row["mean"], row["ci_low"], row["ci_high"]))
        rows.append(cells)
    parts = [
        note,
        f"<p>Over {_e(cmp.sets_label)} (N = {st.n_sets} sets): mean ± half-width of the "
        f"{st.confidence:.0%} Student-t confidence interval.</p>",
        _table(header, rows),
    ]
    parts += [ranking_html(r) for r in st.rankings.values()]
    return "".join(parts)


def figure_html(fig: FigureFile) -> str:
    """An embedded PNG with links to the files beside the page."""
    data = base64.b64encode(fig.png.read_bytes()).decode()
    links = f'<a href="{_e(fig.png.name)}">PNG</a>'
    if fig.svg is not None:
        links += f' · <a href="{_e(fig.svg.name)}">SVG</a>'
    return (
        f'<figure id="{_e(fig.name)}"><img alt="{_e(fig.title)}" '
        f'src="data:image/png;base64,{data}"><figcaption><b>{_e(fig.title)}.</b> '
        f"{_e(fig.caption)} <span class='muted'>({links})</span></figcaption></figure>"
    )


def config_html(cmp: Comparison) -> str:
    """Workload, platform, every dispatcher's configuration and the versions used."""
    parts = []
    first = next(iter(cmp.main.values()), None)
    if first is not None:
        sim = first.doc.get("simulation", {})
        parts.append(
            "<h3>Workload</h3><pre>" + _e(json.dumps(sim.get("workload"), indent=2)) + "</pre>"
        )
        parts.append(
            "<h3>Platform</h3><pre>" + _e(json.dumps(sim.get("platform"), indent=2)) + "</pre>"
        )
    rows = []
    for d, rec in cmp.main.items():
        desc = rec.doc.get("simulation", {}).get("dispatcher", {})
        rows.append(
            [d, rec.key, rec.doc["config"]["dispatcher"], json.dumps(desc, separators=(", ", ": "))]
        )
    parts.append(
        "<h3>Dispatchers</h3>" + _table(["label", "run (hash)", "spec", "configuration"], rows)
    )
    if first is not None:
        parts.append(
            "<h3>Versions</h3><pre>"
            + _e(
                json.dumps(
                    first.doc.get("worker", {}).get("versions", first.doc.get("stored_by")),
                    indent=2,
                )
            )
            + "</pre>"
        )
    if cmp.context:
        parts.append(
            "<details><summary>command context</summary><pre>"
            + _e(json.dumps(cmp.context, indent=2, default=str))
            + "</pre></details>"
        )
    return "".join(parts)


def render(
    cmp: Comparison,
    figures: Sequence[FigureFile],
    colors: dict[str, str],
    notes: Sequence[str] = (),
) -> str:
    """The whole page."""
    ctx = cmp.context
    intro = []
    for key, label in (
        ("workload", "Workload"),
        ("platform", "Platform"),
        ("created", "Created"),
        ("command", "Command"),
    ):
        if key in ctx:
            intro.append(f"<b>{label}:</b> {_e(ctx[key])}")
    body = [f"<h1>{_e(cmp.title)}</h1>", "<p>" + "<br>".join(intro) + "</p>"]
    body += [f"<p class='muted'>{_e(n)}</p>" for n in notes]
    body.append("<h2>Summary</h2>" + summary_html(cmp, colors))
    body.append(
        "<h2>By job duration class</h2><p class='muted'>Classes by the time a job "
        "actually runs: short &lt; 1 h, medium 1–5 h, long &gt; 5 h. "
        "bsld = bounded slowdown (τ = 10 s).</p>" + groups_html(cmp.classes, "class")
    )
    if len(cmp.queues):
        body.append("<h2>By queue</h2>" + groups_html(cmp.queues, "queue"))
    body.append("<h2>Figures</h2>" + "".join(figure_html(f) for f in figures))
    body.append("<h2>Statistics over repeated sets</h2>" + stats_html(cmp))
    body.append("<h2>Configuration and versions</h2>" + config_html(cmp))
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{_e(cmp.title)}</title><style>{CSS}</style></head><body>"
        + "\n".join(body)
        + "</body></html>\n"
    )
