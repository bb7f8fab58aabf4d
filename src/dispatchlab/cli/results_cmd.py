"""``dispatchlab results``: gather stored runs into tidy tables and print the statistics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import pandas as pd
import typer
from rich.table import Table

from dispatchlab.atomic_output import atomic_output
from dispatchlab.cli.app import app
from dispatchlab.cli.errors import check_level, err_console, friendly_errors
from dispatchlab.cli.simulate_cmd import console
from dispatchlab.errors import ConfigError
from dispatchlab.experiments.collect import runs_table, write_tables
from dispatchlab.experiments.store import RunStore
from dispatchlab.input_files import folder_problem
from dispatchlab.report.analysis import DEFAULT_STATS_METRICS, ranking_json
from dispatchlab.report.format import fmt_ci, fmt_count
from dispatchlab.stats.metrics import METRICS
from dispatchlab.stats.ranking import analyze_sets


def summarize_folder(
    root: Path,
    *,
    metrics: list[str],
    alpha: float,
    adjust: str,
    confidence: float,
    keys: set[str] | None = None,
    formats: tuple[str, ...] = ("parquet", "csv"),
    as_json: bool = False,
    extra: dict[str, Any] | None = None,
    order: list[str] | None = None,
) -> None:
    """Write the tables and statistics files of ``root`` and print them.

    ``order`` lists the dispatchers in the order to show them (default: as planned).
    """
    from dispatchlab.cli.compare_cmd import print_ranking, show

    store = RunStore(root)
    records = list(store.records(keys))
    warn_damaged(store, keys)
    unrepro = sum(1 for r in records if r.summary.get("reproducible") is False)
    if unrepro:
        err_console.print(f"warning: {unrepro} run(s) not reproducible (a wall clock shaped "
                          "CP decisions: see 'reproducible' in results)", highlight=False)
    if not records:
        raise ConfigError(f"no usable runs under {root / 'runs'}", field="DIR")
    written = write_tables(root, records, formats=formats)
    runs = runs_table(records)
    order = order or RunStore(root).planned_dispatchers()
    st = analyze_sets(runs, metrics, alpha=alpha, adjust=adjust, confidence=confidence, order=order)
    _write_csv(st.means, root / "stats_means.csv")
    ranks = (
        pd.concat([r.table().assign(metric=m) for m, r in st.rankings.items()], ignore_index=True)
        if st.rankings
        else pd.DataFrame()
    )
    _write_csv(ranks, root / "stats_ranking.csv")
    pairs = (
        pd.concat(
            [r.pairs_table().assign(metric=m) for m, r in st.rankings.items()], ignore_index=True
        )
        if st.rankings
        else pd.DataFrame()
    )
    _write_csv(pairs, root / "stats_pairs.csv")
    if as_json:
        typer.echo(
            json.dumps(
                {
                    **(extra or {}),
                    "runs": len(records),
                    "repeated_seeds": st.repeated_seeds,
                    "repeated_pricing": st.repeated_pricing,
                    "tables": [str(p) for p in written],
                    "means": st.means.to_dict(orient="records"),
                    "rankings": {m: ranking_json(r) for m, r in st.rankings.items()},
                },
                default=str,
            )
        )
        return
    t = Table(
        title=f"{fmt_count(len(records), 'run')} in {root}: mean ± {confidence:.0%} CI over "
              f"{fmt_count(st.n_sets, 'set')}",
        title_justify="left",
    )
    t.add_column("dispatcher", no_wrap=True)
    t.add_column("runs", justify="right")
    for m in metrics:
        t.add_column(METRICS[m].label, justify="right")
    counts = runs.groupby("dispatcher", sort=False).size()
    shown = [d for d in order if d in counts.index] + [d for d in counts.index if d not in order]
    for d in shown:
        cells = [str(d), str(int(counts[d]))]
        for m in metrics:
            row = st.means[(st.means["dispatcher"] == d) & (st.means["metric"] == m)]
            cells.append(
                fmt_ci(m, *row[["mean", "ci_low", "ci_high"]].iloc[0]) if len(row) else "–"
            )
        t.add_row(*cells)
    show(t)
    if st.repeated_seeds:
        console.print(
            f"[dim]{st.repeated_seeds} set(s) differing only by seed reproduced another "
            "seed's results for every dispatcher and were counted once[/]",
            highlight=False,
            soft_wrap=True,
        )
    if st.repeated_pricing:
        console.print(
            "[dim]sets differing only by pricing scenario with one schedule were counted once "
            "for " + ", ".join(f"{m} ({n} set(s) fewer)" for m, n in st.repeated_pricing.items())
            + "[/]",
            highlight=False,
            soft_wrap=True,
        )
    for r in st.rankings.values():
        print_ranking(r)
    console.print("tables: " + ", ".join(str(p) for p in written), highlight=False, soft_wrap=True)


@app.command("results")
@friendly_errors
def results_command(
    directory: Annotated[Path, typer.Argument(help="Output folder of run-experiment or compare.")],
    metrics: Annotated[
        str | None,
        typer.Option(
            help="Metrics to summarize and rank (default: the experiment's, else "
            "mean_wait,mean_bounded_slowdown,utilization)."
        ),
    ] = None,
    alpha: Annotated[float | None, typer.Option(help="Significance level.")] = None,
    p_adjust: Annotated[str | None, typer.Option(help="holm | none.")] = None,
    confidence: Annotated[
        float | None, typer.Option(help="Confidence level of the intervals.")
    ] = None,
    fmt: Annotated[str, typer.Option("--format", help="parquet | csv | both.")] = "both",
    as_json: Annotated[bool, typer.Option("--json", help="Print the statistics as JSON.")] = False,
) -> None:
    """Gather every finished run under DIRECTORY/runs into DIRECTORY/results.parquet/.csv
    (one row per run) and breakdown.* (one row per run × job class/queue), then print means
    with confidence intervals and which dispatchers are significantly better."""
    problem = folder_problem(directory)
    if problem:
        raise ConfigError(f"{directory}: {problem}", field="DIR")
    if not (directory / "runs").is_dir():
        raise ConfigError(f"{directory} has no runs/ folder", field="DIR")
    stats_cfg = _experiment_stats(directory)
    chosen = (
        [m.strip() for m in metrics.split(",") if m.strip()]
        if metrics
        else stats_cfg.get("metrics", list(DEFAULT_STATS_METRICS))
    )
    for m in chosen:
        if m not in METRICS:
            raise ConfigError(
                f"unknown metric '{m}' (known: {', '.join(METRICS)})", field="metrics"
            )
    formats = {"both": ("parquet", "csv"), "parquet": ("parquet",), "csv": ("csv",)}
    if fmt not in formats:
        raise ConfigError("must be parquet, csv or both", field="format")
    adjust = p_adjust or stats_cfg.get("p_adjust", "holm")
    if adjust not in ("holm", "none"):
        raise ConfigError("must be holm or none", field="p-adjust")
    keys = _planned_keys(directory)
    if keys is not None:
        stale = [r.key for r in RunStore(directory).records() if r.key not in keys]
        if stale:
            err_console.print(f"warning: {len(stale)} stored run(s) are not in the current plan "
                              "(an edited trace, platform file or experiment): left out",
                              highlight=False)
    summarize_folder(
        directory,
        keys=keys,
        metrics=chosen,
        alpha=check_level(alpha if alpha is not None else stats_cfg.get("alpha", 0.05),
                          "--alpha"),
        adjust=adjust,
        confidence=check_level(confidence if confidence is not None
                               else stats_cfg.get("confidence", 0.95), "--confidence"),
        formats=formats[fmt],
        as_json=as_json,
    )


def warn_damaged(store: RunStore, keys: set[str] | None) -> int:
    """One warning line naming each damaged run folder (of ``keys``), its dispatcher when
    the plan tells, and what is wrong; the number of such folders."""
    damaged = [(k, why) for k, why in store.damaged() if keys is None or k in keys]
    if damaged:
        labels = store.planned_labels()
        names = ", ".join(
            f"{k} ({labels[k]['dispatcher']}: {why})" if k in labels else f"{k} ({why})"
            for k, why in damaged)
        err_console.print(f"warning: {len(damaged)} damaged run folder(s) left out: {names}; "
                          "run the experiment again to re-run them", highlight=False,
                          soft_wrap=True)
    return len(damaged)


def _planned_keys(directory: Path) -> set[str] | None:
    """Hashes of the runs the folder's latest plan lists (None without ``plan.json``):
    runs are keyed by the workload's content, so runs of an earlier version of a trace stay
    in the store and must not be averaged with the current ones."""
    doc = _plan(directory)
    if doc is None:
        return None
    runs = doc.get("runs", [])
    if not isinstance(runs, list) or not all(isinstance(r, dict) and "hash" in r
                                             for r in runs):
        raise ConfigError(f"{directory / 'plan.json'} is damaged (runs without their hash); "
                          "run the experiment again", field="DIR")
    return {str(r["hash"]) for r in runs}


def _experiment_stats(directory: Path) -> dict[str, Any]:
    doc = _plan(directory)
    experiment = doc.get("experiment") if doc is not None else None
    stats = experiment.get("stats") if isinstance(experiment, dict) else None
    return stats if isinstance(stats, dict) else {}


def _plan(directory: Path) -> dict[str, Any] | None:
    """The folder's ``plan.json`` (None without one); damaged (not UTF-8 JSON, not an
    object) is an error naming it."""
    plan = directory / "plan.json"
    if not plan.is_file():
        return None
    try:
        doc = json.loads(plan.read_bytes())
    except ValueError:  # JSON or UTF-8 decoding
        doc = None
    if not isinstance(doc, dict):
        raise ConfigError(f"{plan} is damaged (not a JSON object); run the experiment again",
                          field="DIR")
    return doc


def _write_csv(table: pd.DataFrame, path: Path) -> None:
    with atomic_output(path) as tmp:
        table.to_csv(tmp, index=False)
