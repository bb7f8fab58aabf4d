"""A Plotly figure of the interactive report: its traces and layout as plain dicts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

FONT = {"family": "system-ui, -apple-system, Segoe UI, Roboto, sans-serif", "size": 12}


@dataclass
class WebFigure:
    """One figure: ``name`` is its element id; ``linked`` figures share the time axis
    (zooming one zooms the others)."""

    name: str
    title: str
    caption: str
    data: list[dict[str, Any]]
    layout: dict[str, Any] = field(default_factory=dict)
    linked: bool = False
    lazy: bool = False  # drawn when its tab is opened
    first: bool = False  # a lazy figure drawn at load all the same (the first tab)
    #: job columns for hover text (Gantt charts: bars' ``customdata`` index them)
    jobs: dict[str, Any] | None = None

    def spec(self) -> dict[str, Any]:
        """What the page script draws."""
        return {"id": self.name, "data": self.data, "layout": self.layout,
                "linked": self.linked, "lazy": self.lazy, "first": self.first,
                "jobs": self.jobs}


def layout(*, height: int = 330, xtitle: str = "", ytitle: str = "",
           **extra: Any) -> dict[str, Any]:
    """The common layout: legend on top, compact margins, titled axes."""
    out: dict[str, Any] = {
        "height": height,
        "margin": {"l": 64, "r": 16, "t": 36, "b": 48},
        "font": FONT,
        "legend": {"orientation": "h", "x": 0, "y": 1.02, "yanchor": "bottom"},
        "xaxis": {"title": {"text": xtitle}, "zeroline": False},
        "yaxis": {"title": {"text": ytitle}, "zeroline": False, "rangemode": "tozero"},
        "hovermode": "closest",
        "plot_bgcolor": "white",
    }
    for ax in ("xaxis", "yaxis"):
        out[ax].update({"gridcolor": "#e6e6e6", "linecolor": "#999", "showline": True})
    for k, v in extra.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = {**out[k], **v}
        else:
            out[k] = v
    return out
