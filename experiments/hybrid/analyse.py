"""Tables of the ch. 7 experiment run through ``run-experiment`` (``ch7.toml``): profit gain
of the hybrid DARDIS versions over the best of the thesis's six rule-based setups per trace
and pricing scenario (Table 7.1 / Fig. 7.2 layout) and over EASY, makespan (Fig. 7.3),
waits and overhead per job (Fig. 7.4), node switch-offs.

    .venv/bin/python experiments/hybrid/analyse.py experiments/hybrid/results/ch7 \\
        > experiments/hybrid/tables_ch7.md
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from dispatchlab.experiments.collect import read_results

#: The thesis's six rule-based setups (§6.3); "RB" is the best of them per scenario.
RULE_BASED = ("strict-EST", "strict-WT", "strict-Profit", "nonstrict-EST", "nonstrict-WT",
              "nonstrict-Profit")
HYBRID = ("DARDIS100", "DARDIS70", "DARDIS50")
MACHINE = tuple(f"{h}-machine" for h in HYBRID)
SCEN = ("summer-air", "summer-hybrid", "winter-air", "winter-hybrid")
LEVELS = ("low", "medium", "high")
#: Thesis Table 7.1: DARDIS70 % over RB (%), in the order of SCEN.
THESIS_71 = {"low": (29.50, 17.84, 7.37, 15.00), "medium": (10.46, 18.23, 13.19, -7.50),
             "high": (0.36, 0.20, 0.23, 0.01)}


def load(out: Path) -> pd.DataFrame:
    """The campaign's tidy rows (one per run × pricing scenario)."""
    df = read_results(out)
    df["workload"] = df["workload"].str.replace(r"\[.*\]$", "", regex=True)
    bad = df[~df["audited"].astype(bool)]
    if len(bad):
        raise SystemExit(f"{len(bad)} runs failed the audit: {bad['run'].tolist()}")
    return df


def gain(a: float, b: float) -> float:
    """Relative change of ``a`` over ``b`` in %."""
    return 100.0 * (a - b) / abs(b)


def profit_table(df: pd.DataFrame, hybrid: tuple[str, ...], title: str) -> list[str]:
    """Gain of each hybrid version over the best RB and over EASY, per trace × scenario."""
    lines = [f"### {title}", "",
             "| trace | scenario | best RB | RB profit (€) | EASY (€) | "
             + " | ".join(f"{h} vs RB" for h in hybrid) + " | "
             + " | ".join(f"{h} vs EASY" for h in hybrid) + " | thesis DARDIS70 vs RB |",
             "|---|---|---|---|---|" + "---|" * (2 * len(hybrid)) + "---|"]
    for level in LEVELS:
        for k, scen in enumerate(SCEN):
            d = df[(df["workload"] == level) & (df["pricing"] == scen)].set_index("dispatcher")
            if d.empty:
                continue
            rb = d.loc[list(RULE_BASED), "profit"]
            best = str(rb.idxmax())
            easy = float(d.loc["EASY", "profit"])
            vs_rb = [f"{gain(float(d.loc[h, 'profit']), float(rb.max())):+.1f} %"
                     for h in hybrid]
            vs_easy = [f"{gain(float(d.loc[h, 'profit']), easy):+.1f} %" for h in hybrid]
            lines.append(f"| {level} | {scen} | {best} | {rb.max():,.0f} | {easy:,.0f} | "
                         + " | ".join(vs_rb) + " | " + " | ".join(vs_easy)
                         + f" | {THESIS_71[level][k]:+.2f} % |")
    return [*lines, ""]


def _count(row: pd.Series, key: str) -> str:
    v = row.get(key)
    return "" if v is None or pd.isna(v) else f"{int(v):,}"


def schedule_table(df: pd.DataFrame) -> list[str]:
    """Per trace × dispatcher: makespan, waits, overhead, switch-offs, last resorts, time.
    Schedule figures do not depend on the pricing, so one scenario's rows are read."""
    d = df[df["pricing"] == SCEN[0]].copy()
    d["makespan_d"] = d["makespan"] / 86_400
    d["wait_h"] = d["mean_wait"] / 3600
    d["overhead_ms"] = 1e3 * d["dispatch_time_total_s"] / d["jobs_run"].clip(lower=1)
    lines = ["| trace | dispatcher | makespan (d) | mean wait (h) | overhead per job (ms) | "
             "switch-offs | jobs after the last termination | IT kWh | simulation (s) |",
             "|---|---|---|---|---|---|---|---|---|"]
    order = (*RULE_BASED, "EASY", *HYBRID, *MACHINE)
    for level in LEVELS:
        for name in order:
            r = d[(d["workload"] == level) & (d["dispatcher"] == name)]
            if r.empty:
                continue
            x = r.iloc[0]
            lines.append(f"| {level} | {name} | {x['makespan_d']:.2f} | {x['wait_h']:.2f} | "
                         f"{x['overhead_ms']:.2f} | {_count(x, 'dispatcher_power_offs')} | "
                         f"{_count(x, 'dispatcher_after_last_termination')} | {x['it_kwh']:,.0f} | "
                         f"{x['sim_seconds']:.1f} |")
    return [*lines, ""]


def pue_table(df: pd.DataFrame) -> list[str]:
    """Mean PUE of RB's best and of DARDIS70 per trace × scenario."""
    lines = ["| trace | scenario | mean PUE, best RB | DARDIS70 | DARDIS50 |",
             "|---|---|---|---|---|"]
    for level in LEVELS:
        for scen in SCEN:
            d = df[(df["workload"] == level) & (df["pricing"] == scen)].set_index("dispatcher")
            if d.empty:
                continue
            best = d.loc[list(RULE_BASED), "profit"].idxmax()
            lines.append(f"| {level} | {scen} | {d.loc[best, 'mean_pue']:.3f} | "
                         f"{d.loc['DARDIS70', 'mean_pue']:.3f} | "
                         f"{d.loc['DARDIS50', 'mean_pue']:.3f} |")
    return [*lines, ""]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path, help="the campaign's output folder")
    df = load(ap.parse_args().out)
    lines = ["## Profit gain (%)", ""]
    lines += profit_table(df, HYBRID, "Per-node last resort (`last_resort=nodes`)")
    if set(MACHINE) <= set(df["dispatcher"]):
        lines += profit_table(df, MACHINE, "The thesis's whole-machine last resort")
    lines += ["## Schedules (pricing-independent)", "", *schedule_table(df),
              "## Mean PUE", "", *pue_table(df)]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
