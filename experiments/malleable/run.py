"""The experiments of Mejri et al. (2020) with dispatchlab: PSO training of Swarm1–3, the ten
setups on 100 evaluation sets (Table 3), the resilience test (Table 10) and the scale-up test
(Table 13), and the report comparing them with the published tables.

    python experiments/malleable/run.py train      # three swarms, 150,000 runs each
    python experiments/malleable/run.py evaluate   # the variants below, per-set CSVs
    python experiments/malleable/run.py report     # README tables and Figure 3

Variants (``results/runs_<variant>.csv``, one row per set and setup):

- ``main``: Table 3 sets, the paper's semantics, Swarm1–3 trained here; run on the engine's
  general loop with the audit on (the dedicated kernel is checked equal on every run);
- ``main-table4``: the same sets with the paper's Table 4 parameters for Swarm1–3;
- ``resilience``: Table 10 sets (the scheduler's ``D_max`` = 800), trained swarms;
- ``scaleup``: Table 13 sets (100 servers, 500 jobs), trained swarms;
- ``main-each``: Table 3 sets, the paper's semantics but the code's power-off reading
  (one decision and one duration per server), swarms trained that way;
- ``main-code``, ``resilience-code``, ``scaleup-code``: the authors' code semantics on the
  sets its generator seeds (seeds 2…101, as its ``Data analysis/`` CSVs), Table 4
  parameters — how the paper's numbers were made (its CSVs are reproduced exactly;
  conditions 2 and 3 are not in the public code: they follow the paper).

Evaluation sets use the family seed ``EVAL_SEED``, training sets ``SwarmSpec.jobs_seed``:
no set is used for both.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd

from dispatchlab import simulate
from dispatchlab.dispatchers.malleable.config import (
    CODE,
    PAPER,
    PAPER_EACH,
    GreedyConfig,
    param_names,
)
from dispatchlab.dispatchers.malleable.cost import malleable_platform, run_metrics
from dispatchlab.dispatchers.malleable.greedy import MalleableGreedy
from dispatchlab.dispatchers.malleable.job_set_sim import JobSetJobs, run_job_set
from dispatchlab.dispatchers.malleable.setups import SETUPS, TABLE4, setup_configs
from dispatchlab.experiments.backends import LocalBackend
from dispatchlab.tuning.pso import Swarm, SwarmSpec
from dispatchlab.workload.generators.mejri import (
    RESILIENCE,
    SCALE_UP,
    JobSet,
    JobSetParams,
    job_set,
)

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
EVAL_SEED = 2020
N_SETS = 100
VARIANTS = ("main", "main-table4", "resilience", "scaleup", "main-each", "main-code",
            "resilience-code", "scaleup-code")
#: Semantics of each set of trained swarms (state files ``swarm<c><suffix>.json``).
TRAININGS = {"": "paper", "-each": "paper-each"}


def swarm_spec(condition: int, suffix: str = "") -> SwarmSpec:
    """The paper's training: 30 particles, 100 epochs, 50 sets of 50 jobs on 10 servers."""
    return SwarmSpec(condition=condition, seed=condition, semantics=TRAININGS[suffix])


def state_file(condition: int, suffix: str = "") -> Path:
    return RESULTS / f"swarm{condition}{suffix}.json"


def train(workers: int, suffix: str) -> None:
    with LocalBackend(workers) as engine:
        for c in (1, 2, 3):
            swarm = Swarm(swarm_spec(c, suffix), state_file(c, suffix))
            t0 = time.perf_counter()
            swarm.run(engine, progress=lambda k, m, c=c: print(
                f"swarm{c}{suffix} epoch {k}: mean cost {m:.4f}", flush=True))
            print(f"swarm{c}{suffix}: {time.perf_counter() - t0:.0f} s, best {swarm.best()}")


def trained(suffix: str = "") -> dict[int, dict[str, float]]:
    out = {}
    for c in (1, 2, 3):
        swarm = Swarm(swarm_spec(c, suffix), state_file(c, suffix))
        if swarm.state.epoch < swarm.spec.epochs:
            sys.exit(f"swarm{c} is not trained yet (epoch {swarm.state.epoch}): run 'train'")
        out[c] = swarm.best()
    return out


def _engine_row(js: JobSet, cfg: GreedyConfig, seed: int) -> dict[str, float]:
    """The general loop (audited); the kernel must agree."""
    wl = js.to_workload()
    res = simulate(wl, malleable_platform(js.servers, cfg.semantics.power),
                   MalleableGreedy(cfg), seed=seed, walltime_kill=False, tables=False)
    assert res.recorder is not None
    m = run_metrics(res.recorder, cfg.semantics.power)
    k = run_job_set(JobSetJobs.from_workload(wl, js.servers), cfg, seed=seed)
    if abs(k.cost / m["cost"] - 1) > 1e-9 or k.poweroffs != m["poweroffs"]:
        raise SystemExit(f"kernel and general loop disagree on {js.label}")
    return m


def _code_row(js: JobSet, cfg: GreedyConfig) -> dict[str, float]:
    rnd = random.Random()
    rnd.setstate(js.code_random_state)
    return run_job_set(JobSetJobs.from_jobset(js), cfg, code_random=rnd).metrics()


def evaluate(variant: str) -> pd.DataFrame:
    params, data_max, sem, seeding = JobSetParams(), 500.0, PAPER, "independent"
    swarms: dict[int, dict[str, float]] | None = None
    if variant in ("main", "resilience", "scaleup"):
        swarms = trained()
    base = variant.split("-")[0]
    if base == "resilience":
        params, data_max = RESILIENCE, RESILIENCE.data_max
    elif base == "scaleup":
        params = SCALE_UP
    if variant.endswith("-code"):
        sem, seeding = CODE, "code"
    elif variant == "main-each":
        sem, swarms = PAPER_EACH, trained("-each")
    configs = setup_configs(sem, data_max=data_max, swarms=swarms)
    rows: list[dict[str, Any]] = []
    for i in range(N_SETS):
        js = job_set(params, seed=2 + i if seeding == "code" else EVAL_SEED, index=0 if
                     seeding == "code" else i, seeding=seeding)
        for name in SETUPS:
            cfg = configs[name]
            m = _code_row(js, cfg) if seeding == "code" else _engine_row(js, cfg, i)
            rows.append({"variant": variant, "set": i, "setup": name,
                         **{k: m[k] for k in ("cost", "mean_stretch", "norm_power",
                                              "reconfigs", "poweroffs")}})
    df = pd.DataFrame(rows)
    RESULTS.mkdir(exist_ok=True)
    df.to_csv(RESULTS / f"runs_{variant}.csv", index=False)
    params_used = {name: {k: v for k, v in cfg.describe().items()
                          if k in param_names(cfg.condition or 1) or k == "t1"}
                   for name, cfg in configs.items() if name.startswith(("Rand", "Swarm"))}
    (RESULTS / f"params_{variant}.json").write_text(json.dumps(params_used, indent=1))
    return df


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("train", "evaluate", "report"))
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--training", default="", choices=list(TRAININGS),
                    help="which swarms to train: '' (paper semantics) or '-each'")
    args = ap.parse_args()
    if args.what == "train":
        train(args.workers, args.training)
    elif args.what == "evaluate":
        for v in args.variants.split(","):
            t0 = time.perf_counter()
            evaluate(v)
            print(f"{v}: {time.perf_counter() - t0:.0f} s", flush=True)
    else:
        from report import write_report  # type: ignore[import-not-found]

        write_report(RESULTS, {suffix: {c: swarm_spec(c, suffix) for c in (1, 2, 3)}
                               for suffix in TRAININGS}, TABLE4)


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    main()
