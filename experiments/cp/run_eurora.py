"""Run a CP study on Eurora historical batches through the shared experiment machinery.

Usage: ``python experiments/cp/run_eurora.py [EXPERIMENT.toml] [--workers N]`` (default
``experiments/cp/eurora_hist.toml``, 1 worker). The same as

    dispatchlab run-experiment EXPERIMENT.toml --workers 1
    python experiments/cp/report_eurora.py <its out folder>

Finished runs are stored at once and skipped when run again, so an interrupted study
resumes; the report keeps only batches on which every dispatcher finished.
"""

from __future__ import annotations

import sys
from pathlib import Path

from dispatchlab.experiments import (
    Progress,
    RunStore,
    load_experiment,
    make_backend,
    plan,
    run_campaign,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from report_eurora import report


def main(argv: list[str]) -> None:
    workers = 1
    if "--workers" in argv:
        i = argv.index("--workers")
        workers = int(argv[i + 1])
        argv = argv[:i] + argv[i + 2:]
    path = Path(argv[0] if argv else Path(__file__).parent / "eurora_hist.toml")
    spec = load_experiment(path)
    runs = plan(spec, path.parent, source=str(path))
    out = path.parent / (spec.out or spec.name)
    store = RunStore(out)
    store.write_plan(spec.model_dump(), runs)

    def progress(p: Progress) -> None:
        if p.last is not None:
            print(f"[{p.finished}/{p.total}] {p.last.labels.workload} "
                  f"{p.last.labels.dispatcher}", flush=True)

    with make_backend("local", workers=workers) as engine:
        outcome = run_campaign(runs, store, engine, on_progress=progress)
    for key, why in outcome.failures.items():
        print(f"FAILED {key}: {why}")
    print(report(out))


if __name__ == "__main__":
    main(sys.argv[1:])
