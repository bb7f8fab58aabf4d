"""Wall time of pricing one grid in several scenarios: a ``pricing`` list vs single entries.

The grid of ``examples/experiments/pricing-scenarios.toml`` (2,000 low Curie-based jobs,
thesis-300, six rule-based dispatchers, four season × cooling scenarios) is run by the
campaign code of ``run-experiment`` (plan, then ``run_campaign`` on a local pool) three
ways, each into a fresh store:

- ``pricing-list``: one workload entry with the four scenarios (6 simulations);
- ``four-entries``: four single-scenario entries, as before the ``pricing`` list (also 6
  simulations: runs differing only in pricing share one, whatever entry they come from);
- ``unshared``: the four entries with sharing switched off (24 simulations: what
  ``run-experiment`` did before sharing existed).

Every repeat runs the three in turn (median of ``--repeats``); the load average is printed
before and after. The per-run profit figures of the three must be identical (checked).

Usage: ``python benchmarks/bench_pricing.py [--repeats 3] [--workers 1] [--limit 2000]
[--dispatchers "fifo;easy;…"] [--out FILE]`` (``--dispatchers``: ``;``-separated specs
instead of the example's; ``--out`` appends the table to FILE; ``--experiment FILE
--limit 0``: another grid whose first workload entry has a ``pricing`` list, all its jobs).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from dispatchlab.experiments import LocalBackend, RunStore, load_experiment, plan, run_campaign
from dispatchlab.experiments.config import PlannedRun
from dispatchlab.experiments.spec import ExperimentSpec
from script_args import ready, runner_options

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "experiments" / \
    "pricing-scenarios.toml"
FIGURES = ("profit", "core_hours", "it_kwh", "cooling_kwh", "mean_pue")


def four_entries(spec: ExperimentSpec) -> ExperimentSpec:
    """The same grid as one single-scenario workload entry per pricing scenario."""
    entry = spec.workloads[0]
    assert entry.pricing is not None
    entries = [entry.model_copy(update={
        "name": p.name, "pricing": None, "cooling": p.cooling, "temperature": p.temperature,
        "prices": p.prices, "it_power": p.it_power or entry.it_power})
        for p in entry.pricing]
    return spec.model_copy(update={"workloads": entries})


def run(runs: list[PlannedRun], workers: int) -> tuple[float, dict[str, Any]]:
    """Wall time of the campaign into a fresh store, and each run's profit figures."""
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        with LocalBackend(workers) as eng:
            outcome = run_campaign(runs, RunStore(tmp), eng)
        wall = time.perf_counter() - t0
        assert outcome.ok and outcome.stored == len(runs), outcome.failures
        figs = {r.key: {k: r.summary["profit"][k] for k in FIGURES}
                for r in RunStore(tmp).records()}
    return wall, figs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--limit", type=int, default=2000)
    ap.add_argument("--dispatchers", default=None)
    ap.add_argument("--experiment", type=Path, default=EXAMPLE,
                    help="another file whose first workload entry has a pricing list")
    ap.add_argument("--out", type=Path, default=None)
    runner_options(ap, out=False)
    args = ap.parse_args()
    ready(args, args.experiment)
    spec = load_experiment(args.experiment)
    base = args.experiment.parent
    if args.dispatchers:
        spec = spec.model_copy(update={"dispatchers": args.dispatchers.split(";")})
    if args.limit:
        spec = spec.model_copy(update={"workloads": [
            spec.workloads[0].model_copy(update={"limit": args.limit})]})
    single = four_entries(spec)
    modes = {
        "pricing-list": plan(spec, base),
        "four-entries": plan(single, base),
        "unshared": [dataclasses.replace(r, shares_simulation=False)
                     for r in plan(single, base)],
    }
    load0 = os.getloadavg()
    times: dict[str, list[float]] = {m: [] for m in modes}
    reference: dict[str, Any] | None = None
    for _ in range(args.repeats):
        for mode, runs in modes.items():
            wall, figs = run(runs, args.workers)
            times[mode].append(wall)
            reference = reference or figs
            assert figs == reference, f"{mode}: figures differ"
    load1 = os.getloadavg()
    med = {m: statistics.median(t) for m, t in times.items()}
    lines = [
        "## One simulation per dispatcher priced per scenario vs one per run\n",
        f"{args.experiment.name}: {spec.workloads[0].limit or 'all'} jobs of "
        f"{spec.workloads[0].path}, "
        f"{', '.join(p if isinstance(p, str) else p.name or p.spec for p in spec.platforms)}, "
        f"{len(spec.dispatchers)} dispatchers ({', '.join(map(str, spec.dispatchers))}) × "
        f"{len(spec.workloads[0].pricing or [])} scenarios = {len(modes['pricing-list'])} "
        "result rows; local pool of "
        f"{args.workers} worker(s); median of {args.repeats} (each repeat runs the three in "
        f"turn). Load average before {load0[0]:.2f}, after {load1[0]:.2f}.\n",
        "| mode | simulations | median wall (s) | runs (s) | vs unshared |",
        "|---|---|---|---|---|",
    ]
    from dispatchlab.experiments.campaign import simulation_groups

    for mode, runs in modes.items():
        lines.append(f"| {mode} | {len(simulation_groups(runs))} | {med[mode]:.2f} | "
                     f"{', '.join(f'{t:.2f}' for t in times[mode])} | "
                     f"{med[mode] / med['unshared']:.2f} |")
    lines.append("\nPer-run profit, core-hours, IT and cooling kWh and mean PUE identical in "
                 "the three modes (checked).")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "a", encoding="utf-8") as fh:
            fh.write(text + "\n")


if __name__ == "__main__":
    main()
