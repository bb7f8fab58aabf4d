"""Assemble the interactive page: sections of tables and figures, the figure data as
one JSON block, plotly.js beside the page and the script that draws everything."""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass, field

from dispatchlab.report.web.assets import CSS, PLOTLY_FILE, SCRIPT
from dispatchlab.report.web.encode import script_json
from dispatchlab.report.web.figure import WebFigure


@dataclass
class Section:
    """A titled part of the page: HTML and figures, in order."""

    id: str
    title: str
    parts: list[str | WebFigure] = field(default_factory=list)

    def add(self, *parts: str | WebFigure | None) -> Section:
        self.parts += [p for p in parts if p is not None and p != ""]
        return self


def _e(text: object) -> str:
    return html.escape(str(text))


def figure_html(fig: WebFigure) -> str:
    """The figure's element and caption (the script draws into it)."""
    return (f'<figure><div class="figtitle">{_e(fig.title)}</div>'
            f'<div class="plot" id="{_e(fig.name)}"></div>'
            f"<figcaption>{_e(fig.caption)}</figcaption></figure>")


def tabs_html(group: str, figs: Sequence[WebFigure], labels: Sequence[str]) -> str:
    """One figure at a time, chosen by buttons (the first is drawn at load, the others
    when opened)."""
    buttons = "".join(
        f'<button class="{"active" if i == 0 else ""}" data-target="{_e(f.name)}">'
        f"{_e(lab)}</button>" for i, (f, lab) in enumerate(zip(figs, labels, strict=True)))
    panes = "".join(
        f'<div class="tab{" active" if i == 0 else ""}" data-group="{_e(group)}" '
        f'data-target="{_e(f.name)}">{figure_html(f)}</div>' for i, f in enumerate(figs))
    for i, f in enumerate(figs):
        f.lazy, f.first = True, i == 0
    return f'<div class="tabs" data-group="{_e(group)}">{buttons}</div>{panes}'


def render_page(title: str, header: str, sections: Sequence[Section],
                figures: Sequence[WebFigure]) -> str:
    """The whole page; ``figures`` are every figure placed in the sections (as parts or
    inside tab groups)."""
    nav = "".join(f'<a href="#{_e(s.id)}">{_e(s.title)}</a>' for s in sections)
    body = [header]
    for s in sections:
        inner = "".join(figure_html(p) if isinstance(p, WebFigure) else p for p in s.parts)
        body.append(f'<section id="{_e(s.id)}"><h2>{_e(s.title)}</h2>{inner}</section>')
    data = script_json([f.spec() for f in figures])
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{_e(title)}</title><style>{CSS}</style>"
        f'<script src="{PLOTLY_FILE}"></script></head><body>'
        f"<nav>{nav}</nav><main>" + "\n".join(body) + "</main>"
        f'<script type="application/json" id="report-figures">{data}</script>'
        f"<script>{SCRIPT}</script></body></html>\n"
    )
