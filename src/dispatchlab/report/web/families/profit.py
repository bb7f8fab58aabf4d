"""Profit, PUE and energy per dispatcher, broken down per pricing scenario."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dispatchlab.report.analysis import Comparison
from dispatchlab.report.figures import RunView
from dispatchlab.report.web.encode import rounded
from dispatchlab.report.web.families.common import Family, fmt, means_table, plain_table
from dispatchlab.report.web.figure import WebFigure, layout
from dispatchlab.report.web.page import Section


def profit_section(cmp: Comparison, views: Sequence[RunView],
                   colors: dict[str, str]) -> Family | None:
    """Profit, PUE and energy per dispatcher, broken down per pricing scenario."""
    if "profit" not in cmp.runs or not cmp.runs["profit"].notna().any():
        return None
    sec = Section("profit", "Profit and pricing scenarios")
    figs: list[WebFigure] = []
    runs = cmp.runs.dropna(subset=["profit"])
    scenarios = [s for s in dict.fromkeys(runs["pricing"]) if s is not None and s == s] \
        if "pricing" in runs else []
    cols = {
        "profit": ("profit", "profit over the run: income − energy cost (higher is better)",
                   fmt(0)),
        "profit_sub": ("profit (sub.)", "profit up to the last submission", fmt(0)),
        "mean_pue": ("PUE", "mean PUE", fmt(4)),
        "it_kwh": ("IT kWh", "IT energy (kWh)", fmt(0)),
        "cooling_kwh": ("cooling kWh", "cooling energy (kWh)", fmt(1)),
        "core_hours": ("core-h", "core-hours sold", fmt(0)),
    }
    if len(scenarios) >= 2:
        for key, label in (("profit", "Profit"), ("mean_pue", "Mean PUE")):
            wide = (runs.groupby(["dispatcher", "pricing"], sort=False)[key].mean()
                    .unstack("pricing").reindex(columns=scenarios))
            wide = wide.reindex([d for d in cmp.order if d in wide.index])
            sec.add(f"<h3>{label} per pricing scenario</h3>", plain_table(
                wide, {s: (str(s), f"{label} in scenario {s}", fmt(0 if key == "profit" else 4))
                       for s in scenarios}, colors,
                "Mean over each dispatcher's runs in that scenario."))
        prof = (runs.groupby(["dispatcher", "pricing"], sort=False)["profit"].mean()
                .unstack("pricing"))
        traces = [{"type": "bar", "x": [str(s) for s in scenarios],
                   "y": rounded(prof.loc[d].reindex(scenarios).to_numpy(dtype=np.float64)),
                   "name": d, "marker": {"color": colors.get(d, "#888")}}
                  for d in cmp.order if d in prof.index]
        figs.append(WebFigure("web-profit", "Profit per pricing scenario",
                              "Profit of each dispatcher in each pricing scenario (one "
                              "schedule priced several ways when the dispatcher does not read "
                              "prices).", traces,
                              layout(height=340, ytitle="profit", barmode="group")))
    sec.add(means_table(cmp, cols, colors, "Means over each dispatcher's runs"
                        + (" (all pricing scenarios)." if len(scenarios) >= 2 else "."))[1])
    sec.add(*figs)
    return sec, figs
