"""Pick Eurora batches that share no job, for a campaign with independent samples.

The historical batches are overlapping windows of one log (the 18 of the first campaign
hold 16,172 job records but 2,414 distinct jobs). This walks the batches of the given
sizes in order of their first submission and keeps each one that shares no job id with
those already kept, then writes an experiment file for them.

Usage::

    python experiments/cp/independent_batches.py --sizes 1000 800 \\
        --out experiments/cp/eurora_independent.toml
    python experiments/cp/independent_batches.py --out experiments/cp/eurora_independent_small.toml \\
        --dispatchers easy pbs-fifo hcp3 hcp3-real hcp3-heuristic-request pcp3 pcp3-real \\
        pcp3-heuristic-request
"""

from __future__ import annotations

import argparse
from pathlib import Path

from distinct_jobs import TRACES, load  # same folder

from dispatchlab.workload.eurora import list_eurora_batches

HERE = Path(__file__).resolve().parent
#: The comparisons the README draws, each on every kept batch.
DISPATCHERS = ["easy", "pbs-fifo", "pbs-fifo-window",
               "hcp1", "hcp1-real", "hcp2-heuristic", "hcp3", "hcp3-heuristic", "hcp3-real",
               "pcp1", "pcp1-real", "pcp2-heuristic", "pcp3", "pcp3-heuristic", "pcp3-real"]


def independent(sizes: list[str]) -> list[tuple[Path, int, int]]:
    """(path, first submit, jobs) of the kept batches, in time order."""
    cands = []
    for p in list_eurora_batches(TRACES):
        if p.parent.name in sizes:
            wl = load(p)
            cands.append((int(wl.origin_unix or 0) + int(wl.submit.min()), p,
                          set(wl.job_id.tolist())))
    kept: list[tuple[Path, int, int]] = []
    seen: set[int] = set()
    for first, p, ids in sorted(cands, key=lambda c: (c[0], str(c[1]))):
        if ids.isdisjoint(seen):
            kept.append((p, first, len(ids)))
            seen |= ids
    return kept


def dispatcher_entry(d: str) -> str:
    """A TOML entry: a preset name, or ``<cp preset>-heuristic-request`` as a spec."""
    suffix = "-heuristic-request"
    if d.endswith(suffix):
        base = d.removesuffix(suffix)
        return f'{{ spec = "cp={base},estimate=heuristic-request", name = "{d}" }}'
    return f'"{d}"'


def toml(kept: list[tuple[Path, int, int]], out: Path, sizes: list[str],
         dispatchers: list[str]) -> str:
    """The experiment file text."""
    rel = [Path("../../..") / p.relative_to(TRACES.parents[4]) for p, _, _ in kept]
    lines = [
        "# Independent samples for the CP study (issue 18): Eurora batches that share no job",
        f"# (sizes {', '.join(sizes)}; chosen by experiments/cp/independent_batches.py, in",
        "# time order, each kept only if none of its jobs is in an earlier kept batch).",
        "# See README.md for what was run. Search control: the presets' defaults.",
        "#",
        f"#   dispatchlab run-experiment experiments/cp/{out.name} --workers 1",
        "#   .venv/bin/python experiments/cp/report_eurora.py "
        f"experiments/cp/results/{out.stem}",
        "",
        f'name = "{out.stem.replace("_", "-")}"',
        'description = "CP study on non-overlapping Eurora batches (independent samples)"',
        f'out = "results/{out.stem}"',
        'platforms = ["eurora"]',
        'on_infeasible = "reject"',
        "seeds = [0]",
        "dispatchers = [" + ", ".join(dispatcher_entry(d) for d in dispatchers) + "]",
    ]
    for (p, _, _), r in zip(kept, rel, strict=True):
        name = p.stem.removeprefix("hist_").removesuffix(".log_crypt")
        lines += ["", "[[workloads]]", f'name = "{name}"', f'path = "{r.as_posix()}"']
    lines += ["", "[stats]", 'metrics = ["mean_slowdown", "mean_wait", '
              '"dispatch_time_mean_ms", "dispatch_time_max_ms"]', "", "[execution]",
              "workers = 1", ""]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", nargs="+", default=["1000", "800"])
    ap.add_argument("--out", type=Path, default=HERE / "eurora_independent.toml")
    ap.add_argument("--dispatchers", nargs="+", default=DISPATCHERS)
    args = ap.parse_args()
    kept = independent(args.sizes)
    args.out.write_text(toml(kept, args.out, args.sizes, args.dispatchers))
    for p, _, n in kept:
        print(f"{p.parent.name}/{p.name}: {n} jobs")
    print(f"{len(kept)} batches, {sum(n for _, _, n in kept)} distinct jobs → {args.out}")


if __name__ == "__main__":
    main()
