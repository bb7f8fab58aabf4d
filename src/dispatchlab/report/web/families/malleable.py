"""Malleable jobs: reconfigurations, power-offs and jobs that changed size."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from dispatchlab.report.analysis import Comparison
from dispatchlab.report.figures import RunView
from dispatchlab.report.web.encode import rounded
from dispatchlab.report.web.families.common import (
    Family,
    fmt,
    per_dispatcher,
    plain_table,
)
from dispatchlab.report.web.figure import WebFigure, layout
from dispatchlab.report.web.page import Section


def malleable_section(cmp: Comparison, views: Sequence[RunView],
                      colors: dict[str, str]) -> Family | None:
    """Reconfigurations and power-offs per dispatcher, and jobs that changed size."""
    keys = ["dispatcher_reconfigurations", "dispatcher_power_offs"]
    if not any(k in cmp.runs for k in keys):
        return None
    table = per_dispatcher(cmp, [*keys, "energy_kwh", "makespan", "mean_wait"])
    resized = {v.label: float(np.mean(v.jobs["units_used"] != v.jobs["units"]))
               for v in views if "units_used" in v.jobs and len(v.jobs)}
    if resized:
        table["resized"] = pd.Series(resized)
    sec = Section("malleable", "Malleable jobs").add(plain_table(table, {
        "dispatcher_reconfigurations": ("reconfig.", "job reconfigurations (grow or shrink)",
                                        fmt(0)),
        "dispatcher_power_offs": ("power-offs", "nodes switched off", fmt(0)),
        "resized": ("resized", "share of jobs that ended on another number of units than "
                    "they asked for", lambda v: f"{100 * v:.1f} %"),
        "energy_kwh": ("energy kWh", "energy (kWh)", fmt(2)),
        "makespan": ("makespan", "makespan (h)", lambda v: f"{v / 3600:,.1f} h"),
        "mean_wait": ("mean wait", "mean wait (min)", lambda v: f"{v / 60:,.1f} min"),
    }, colors, "Means over each dispatcher's runs; nodes switched off show as fewer alive "
       "nodes in \"Over time\"."))
    names = list(table.index)
    traces = [{"type": "bar", "x": names, "y": rounded(table[k].to_numpy(dtype=np.float64)),
               "name": label} for k, label in zip(keys, ("reconfigurations", "power-offs"),
                                                 strict=True) if k in table]
    fig = WebFigure("web-malleable", "Reconfigurations and power-offs",
                    "Per dispatcher, mean over its runs.", traces,
                    layout(height=320, barmode="group", ytitle="count"))
    sec.add(fig)
    return sec, [fig]
