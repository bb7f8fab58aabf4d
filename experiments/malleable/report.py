"""Tables and Figure 3 of the malleable-job experiments, beside the paper's published values."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from dispatchlab.dispatchers.malleable.config import SEMANTICS, GreedyConfig, param_names
from dispatchlab.dispatchers.malleable.setups import SETUPS
from dispatchlab.report.format import markdown_table
from dispatchlab.stats.ranking import Ranking, compare_on_metric
from dispatchlab.tuning.pso import Swarm, SwarmSpec, set_cost

#: Published values (Mejri et al. 2020): mean reconfigurations and power-offs per set
#: (Tables 5, 11, 14), Friedman χ² (§6.3–6.7), weak rankings (Tables 6, 7, 9, 12, 15).
PAPER_COUNTS = {
    "main": {"FIFO": (0, 0), "FIFO-Rcfg": (3.07, 0), "FIFO-Poff": (0, 228.38),
             "FIFO-Rcfg-Poff": (13.30, 458.51), "Rand-Param1": (3.69, 82.92),
             "Rand-Param2": (0, 56.33), "Rand-Param3": (0.04, 0), "Swarm1": (0, 139.11),
             "Swarm2": (0.01, 216.50), "Swarm3": (5.04, 160.21)},
    "resilience": {"FIFO": (0, 0), "FIFO-Rcfg": (4.34, 0), "FIFO-Poff": (0, 297.33),
                   "FIFO-Rcfg-Poff": (5.77, 189.25), "Rand-Param1": (2.92, 20.27),
                   "Rand-Param2": (3.63, 11.19), "Rand-Param3": (2.50, 0),
                   "Swarm1": (7.53, 87.32), "Swarm2": (1.23, 184.27), "Swarm3": (4.85, 128.89)},
    "scaleup": {"FIFO": (0, 0), "FIFO-Rcfg": (76.35, 0), "FIFO-Poff": (0, 266.17),
                "FIFO-Rcfg-Poff": (75.40, 233.41), "Rand-Param1": (0, 180.01),
                "Rand-Param2": (30.74, 0), "Rand-Param3": (0, 0), "Swarm1": (0, 150.76),
                "Swarm2": (0.11, 192.80), "Swarm3": (12.63, 170.75)},
}
PAPER_CHI2 = {("main", "mean_stretch"): 442.05, ("main", "norm_power"): 831.72,
              ("main", "cost"): 448.09, ("resilience", "cost"): 165.67,
              ("scaleup", "cost"): 358.68}
PAPER_TIERS = {
    ("main", "mean_stretch"): ["Swarm2", "Swarm3, Swarm1", "FIFO, Rand-Param1, Rand-Param3",
                               "FIFO-Rcfg, Rand-Param2", "FIFO-Rcfg-Poff, FIFO-Poff"],
    ("main", "norm_power"): ["FIFO-Poff, Swarm1", "Swarm2, Swarm3",
                             "FIFO-Rcfg-Poff, Rand-Param2", "Rand-Param1",
                             "FIFO, Rand-Param3", "FIFO-Rcfg"],
    ("main", "cost"): ["Swarm1, Swarm2, Swarm3", "FIFO, Rand-Param1, Rand-Param3",
                       "Rand-Param2, FIFO-Rcfg, FIFO-Poff", "FIFO-Rcfg-Poff"],
    ("resilience", "cost"): ["Swarm2", "FIFO", "Swarm3, FIFO-Rcfg, Swarm1, FIFO-Poff",
                             "FIFO-Rcfg-Poff, Rand-Param1, Rand-Param3", "Rand-Param2"],
    ("scaleup", "cost"): ["FIFO-Rcfg", "Rand-Param2", "Rand-Param3, FIFO",
                          "Swarm1, Swarm2, Swarm3", "FIFO-Poff", "Rand-Param1",
                          "FIFO-Rcfg-Poff"],
}
PAPER_MEAN_RANK_COST = {"FIFO": 5.49, "FIFO-Rcfg": 7.22, "FIFO-Poff": 7.58,
                        "FIFO-Rcfg-Poff": 9.02, "Rand-Param1": 4.97, "Rand-Param2": 6.72,
                        "Rand-Param3": 5.07, "Swarm1": 3.12, "Swarm2": 2.45, "Swarm3": 3.39}
TITLES = {"main": "Main test (Table 3 sets), paper semantics, swarms trained here",
          "main-table4": "Main test, paper semantics, the paper's Table 4 parameters",
          "resilience": "Resilience test (Table 10 sets), paper semantics, swarms trained here",
          "scaleup": "Scale-up test (Table 13 sets), paper semantics, swarms trained here",
          "main-each": "Main test, paper semantics with one power-off decision per server, "
          "swarms trained that way",
          "main-code": "Main test, the authors' code semantics and seeding, Table 4 parameters",
          "resilience-code": "Resilience test, the authors' code semantics and seeding, "
          "Table 4 parameters",
          "scaleup-code": "Scale-up test, the authors' code semantics and seeding, Table 4 "
          "parameters"}
ALPHA = {"resilience": 0.10}  # the paper's resilience ranking uses 90 % confidence
METRICS = ("mean_stretch", "norm_power", "cost")


def ranking(runs: pd.DataFrame, metric: str, alpha: float) -> Ranking:
    return compare_on_metric(runs, metric, treatment="setup", block="set", alpha=alpha,
                             adjust="none", order=list(SETUPS))


def tiers_text(r: Ranking) -> list[str]:
    by: dict[int, list[str]] = {}
    for row in r.rows:
        by.setdefault(row.tier, []).append(row.name)
    return [", ".join(by[t]) for t in sorted(by)]


def counts_table(runs: pd.DataFrame, variant: str) -> str:
    g = runs.groupby("setup", sort=False)[["reconfigs", "poweroffs"]].mean()
    g = g.reindex(list(SETUPS))
    paper = PAPER_COUNTS.get(variant.split("-")[0])
    if paper is not None:
        g["paper reconfigs"] = [paper[s][0] for s in g.index]
        g["paper power-offs"] = [paper[s][1] for s in g.index]
    g.index.name = "setup"
    return markdown_table(g, digits=2)


def metrics_table(runs: pd.DataFrame, alpha: float) -> str:
    g = runs.groupby("setup", sort=False)[list(METRICS)].agg(["mean", "median"])
    g = g.reindex(list(SETUPS))
    g.columns = [f"{m} {s}" for m, s in g.columns]
    for metric in METRICS:
        r = ranking(runs, metric, alpha)
        if r.friedman is not None:
            ranks = r.friedman.mean_ranks
            g[f"rank {metric}"] = [ranks[s] for s in g.index]
    g.index.name = "setup"
    return markdown_table(g, digits=3)


def rankings_section(runs: pd.DataFrame, variant: str) -> list[str]:
    base = variant.split("-")[0]
    alpha = ALPHA.get(base, 0.05)
    out = []
    for metric in METRICS:
        r = ranking(runs, metric, alpha)
        if r.friedman is None:
            out.append(f"- {metric}: not testable ({r.note})")
            continue
        f = r.friedman
        paper_chi = PAPER_CHI2.get((base, metric))
        out += [f"**{metric}** — Friedman χ²_F = {f.chi2:.2f} (p = {f.p_value:.3g}, "
                f"N = {f.n_blocks}, k = {f.k}, SE = {r.standard_error:.3f}); paper: "
                f"{paper_chi if paper_chi is not None else 'not given'}. Tiers at "
                f"{1 - alpha:.0%} (z-tests, no adjustment, as the paper):", ""]
        ours = tiers_text(r)
        paper = PAPER_TIERS.get((base, metric), [])
        rows = max(len(ours), len(paper))
        out += ["| tier | dispatchlab | paper |", "|---|---|---|"]
        out += [f"| {t + 1} | {ours[t] if t < len(ours) else ''} | "
                f"{paper[t] if t < len(paper) else ''} |" for t in range(rows)]
        out.append("")
    return out


def fifo_costs(spec: SwarmSpec) -> np.ndarray:
    """FIFO's mean cost on each epoch's training sets (the same sets the particles ran)."""
    cfg = GreedyConfig(semantics=SEMANTICS[spec.semantics])
    return np.array([np.mean([set_cost(cfg, spec.params, spec.jobs_seed, k * spec.sets + i)
                              for i in range(spec.sets)]) for k in range(spec.epochs)])


def figure3(trainings: Mapping[str, Mapping[int, SwarmSpec]], results: Path
            ) -> dict[str, pd.DataFrame]:
    """Mean cost of the particles per epoch (top) and the same divided by FIFO's cost on
    that epoch's sets (bottom), one column per training."""
    fig, axes = plt.subplots(2, len(trainings), figsize=(6 * len(trainings), 7),
                             squeeze=False)
    out = {}
    for col, (suffix, specs) in enumerate(trainings.items()):
        curves: dict[str, np.ndarray] = {}
        fifo = fifo_costs(next(iter(specs.values())))
        for c, spec in specs.items():
            st = Swarm(spec, results / f"swarm{c}{suffix}.json").state
            mean = np.array([np.mean(h) for h in st.history])
            curves[f"Swarm{c}"] = mean
            curves[f"Swarm{c} / FIFO"] = mean / fifo
            x = np.arange(1, len(mean) + 1)
            axes[0][col].plot(x, mean, label=f"Swarm{c} (training)")
            axes[1][col].plot(x, mean / fifo, label=f"Swarm{c} (training)")
        curves["FIFO"] = fifo
        sem = next(iter(specs.values())).semantics
        axes[0][col].set_title(f"semantics {sem}: mean cost of the particles")
        axes[1][col].set_title(f"semantics {sem}: the same ÷ FIFO on the epoch's sets")
        for ax in axes[:, col]:
            ax.set_xlabel("epoch")
            ax.legend()
            ax.grid(alpha=0.3)
        axes[1][col].axhline(1.0, color="grey", lw=0.8)
        df = pd.DataFrame(curves)
        df.index = pd.RangeIndex(1, len(df) + 1, name="epoch")
        df.to_csv(results / f"figure3{suffix}.csv")
        out[suffix] = df
    fig.suptitle("Figure 3 (dispatchlab): PSO training, 30 particles, fresh 50 sets per epoch")
    fig.tight_layout()
    fig.savefig(results / "figure3.png", dpi=90)
    plt.close(fig)
    return out


def params_table(specs: Mapping[int, SwarmSpec], suffix: str, results: Path,
                 table4: Mapping[int, Mapping[str, float]]) -> str:
    names = ["w_n", "w_alpha", "s_reconfig", "w_d", "bias", "w_off", "s_off", "t1", "t2",
             "p_t1"]
    rows: dict[str, dict[str, Any]] = {n: {} for n in names}
    for c, spec in specs.items():
        swarm = Swarm(spec, results / f"swarm{c}{suffix}.json")
        best = swarm.best()
        for n in names:
            rows[n][f"Swarm{c}"] = best.get(n, np.nan)
            rows[n][f"paper Swarm{c}"] = table4[c].get(n, np.nan)
        rows.setdefault("best epoch cost", {})[f"Swarm{c}"] = swarm.state.gbest_cost
        assert set(best) == set(param_names(c))
    df = pd.DataFrame(rows).T
    df.index.name = "parameter"
    return markdown_table(df, digits=3)


def write_report(results: Path, trainings: Mapping[str, Mapping[int, SwarmSpec]],
                 table4: Mapping[int, Mapping[str, float]]) -> None:
    """``results/report.md``: training, then each variant's tables."""
    lines = ["# Results", ""]
    done = {s: t for s, t in trainings.items()
            if all((results / f"swarm{c}{s}.json").exists() for c in t)}
    if done:
        curves = figure3(done, results)
        lines += ["## Training (Figure 3, Table 4)", "", "![Figure 3](figure3.png)", ""]
        for suffix, specs in done.items():
            df = curves[suffix]
            sem = next(iter(specs.values())).semantics
            tail = df.loc[len(df) - 9:]
            lines += [f"Semantics `{sem}`: mean cost of the 30 particles, and ÷ FIFO's on the "
                      "same sets, at epochs 1, 10, 20, 50, 100 and averaged over the last 10:",
                      "", markdown_table(pd.concat([df.loc[[1, 10, 20, 50, len(df)]],
                                                    tail.mean().to_frame("last 10").T]),
                                         digits=3), "",
                      "Best positions found (lowest mean cost of one epoch's 50 sets) beside "
                      "the paper's Table 4:", "",
                      params_table(specs, suffix, results, table4), ""]
    for variant in TITLES:
        f = results / f"runs_{variant}.csv"
        if not f.exists():
            continue
        runs = pd.read_csv(f)
        alpha = ALPHA.get(variant.split("-")[0], 0.05)
        lines += [f"## {TITLES[variant]}", "",
                  f"{runs['set'].nunique()} sets × {runs['setup'].nunique()} setups; per-set "
                  f"values in `{f.name}`.", "",
                  "Reconfigurations and power-offs per set (Tables 5, 11, 14):", "",
                  counts_table(runs, variant), "",
                  "Metrics (mean and median over the sets) and mean ranks:", "",
                  metrics_table(runs, alpha), "", *rankings_section(runs, variant)]
    (results / "report.md").write_text("\n".join(lines) + "\n")
    meta = {"written_from": sorted(p.name for p in results.glob("runs_*.csv"))}
    (results / "report.json").write_text(json.dumps(meta))
