"""Build the instance sets of Borghesi et al. (2015) §6.1 from the Eurora historical batches.

The paper extracts batches of Eurora PBS jobs, derives three sets — *base* (the real
traces), *highLoad* (computationally intensive jobs, in terms of resources requested) and
*manyUnits* (jobs with an unusually high number of job units) — and draws random instances
of 25 and 50 jobs (8-node machine) and 40, 60, 80, 100, 150, 200 jobs (32-node machine),
50 per size, every job arriving at time 0 (off-line dispatching).

Here (the choices the paper leaves open are marked *guess*):

- **Pool**: every distinct job of ``historical_traces/*`` (the batches are overlapping
  windows of one log: their 39,000 records hold 5,930 distinct PBS job ids), first copy
  kept. Only jobs the platform can host are kept (enough nodes for their units).
- **base**: the whole pool. **highLoad** (*guess*): jobs asking for at least half a node
  in total (units × cores ≥ 8) or for any GPU/MIC. **manyUnits** (*guess*): jobs of two
  or more units.
- **Independent instances**: the set's pool is shuffled once (seed per set and size) and
  cut into consecutive blocks of ``size`` jobs, so no job is in two instances of one
  (set, size); at most ``--instances`` blocks (the paper's 50), fewer when the pool is
  too small (reported). Different sizes reuse the pool: they are separate experiments.
- Every job of an instance arrives at 0 (in the file instance ``i`` arrives at ``i`` s
  so that the workload's sort by arrival keeps instances apart; the campaign slices one
  instance with ``skip``/``limit``, which rebases it to 0); run time, wall-time,
  requests and queue (with its expected waiting time, the EWT of the metric) are the
  logged ones.
- **Caps**: the paper's x axis is the cap in W, "only significant levels, large enough
  to allow a solution". The levels are ``CAP_FRACTIONS`` of the machine's full power
  (every node busy with all cores and accelerators, the platform's node model); each
  instance runs at the levels at or above its own smallest feasible cap — the idle
  power of all nodes plus the cheapest placement of its most demanding job — so every
  run can finish (a level's pool of instances may therefore shrink at tight caps).

Writes ``instances/<platform>/<set>_<size>.csv`` (the instances one after the other, column
``instance``), ``instances/index.csv`` (per group: pool size, instances, idle and full
power, each instance's smallest feasible cap) and, with ``--campaign-instances K``, a
campaign file per platform running the first K instances of each group.

Usage::

    python experiments/power_capping/build_instances.py            # the instance files
    python experiments/power_capping/build_instances.py --campaign-instances 10 \\
        --platforms eurora-8 --tag rules --dispatchers prb-power easy-power easy
    python experiments/power_capping/build_instances.py --dispatchers dec dec-feedback \\
        --campaign-instances 10 --set-instances highLoad=5 manyUnits=9 --platforms eurora-8 \\
        --sizes 25 --tag dec25        # fewer instances for some sets

(the README lists the commands that wrote the committed campaign files).
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from dispatchlab.platform.platform import Platform
from dispatchlab.platform.resolve import resolve_platform
from dispatchlab.workload.eurora import list_eurora_batches, load_eurora
from dispatchlab.workload.native import workload_frame

HERE = Path(__file__).resolve().parent
TRACES = (HERE.parents[1] / ".." / "shared" / "traces" / "eurora" / "job_instances"
          / "historical_traces").resolve()
#: platform preset → (sets, sizes) as in §6.1 (sizes 25/50 on 8 nodes, the rest on 32).
GROUPS: dict[str, tuple[tuple[str, ...], tuple[int, ...]]] = {
    "eurora-8": (("base", "highLoad", "manyUnits"), (25, 50)),
    "eurora-32": (("base", "highLoad", "manyUnits"), (40, 60, 80, 100, 150, 200)),
}
#: Cap levels as fractions of the machine's full power.
CAP_FRACTIONS = (0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0)
COLUMNS = ["instance", "job_id", "submit", "walltime", "runtime", "units", "req_cores",
           "req_mem", "req_gpu", "req_mic", "queue", "ewt", "user", "app", "power",
           "logged_wait", "batch"]


def pool() -> pd.DataFrame:
    """Every distinct job of the historical batches (first copy), with its queue's EWT."""
    frames = []
    for p in list_eurora_batches(TRACES):
        wl = load_eurora(p)
        f = workload_frame(wl)
        f["ewt"] = wl.ewt()
        f["batch"] = p.name
        frames.append(f)
    return pd.concat(frames, ignore_index=True).drop_duplicates("job_id", ignore_index=True)


def in_set(df: pd.DataFrame, name: str) -> pd.Series:
    """Which jobs of the pool belong to a set (see the module docstring)."""
    if name == "base":
        return pd.Series(True, index=df.index)
    if name == "highLoad":
        return (df.units * df.req_cores >= 8) | (df.req_gpu > 0) | (df.req_mic > 0)
    if name == "manyUnits":
        return df.units >= 2
    raise ValueError(f"unknown set {name!r}")


@dataclass(frozen=True)
class Machine:
    """What the cap levels are computed from: per node its capacity and power figures."""

    plat: Platform

    def per_node(self, row: pd.Series) -> np.ndarray:
        """How many units of the job each node can hold (0 where a unit does not fit)."""
        res = self.plat.resources
        need = np.array([int(row[f"req_{r}"]) for r in res], dtype=np.int64)
        cap = self.plat.capacity
        with np.errstate(divide="ignore"):
            fit = np.where(need > 0, cap // np.maximum(need, 1), np.iinfo(np.int64).max)
        return np.asarray(fit.min(axis=1))

    def hostable(self, row: pd.Series) -> bool:
        """The idle machine can hold all the job's units."""
        return int(self.per_node(row).sum()) >= int(row.units)

    @property
    def idle_w(self) -> float:
        """All nodes on and idle."""
        assert self.plat.node_model is not None
        return float(sum(s.idle for s in self.plat.node_model))

    @property
    def full_w(self) -> float:
        """All nodes busy with every core, GPU and MIC."""
        assert self.plat.node_model is not None
        res = list(self.plat.resources)
        out = 0.0
        for spec, cap in zip(self.plat.node_model, self.plat.capacity, strict=True):
            out += spec.busy(int(cap[res.index("cores")]), int(cap[res.index("gpu")]),
                             int(cap[res.index("mic")]))
        return out

    def job_w(self, row: pd.Series) -> float:
        """The least the job adds to the idle machine's power: its units packed on the
        nodes where they cost least (each node used pays its first core once)."""
        assert self.plat.node_model is not None
        fit = self.per_node(row)
        costs = []
        for n in np.flatnonzero(fit > 0):
            s = self.plat.node_model[n]
            unit = (int(row.req_cores) * s.core + int(row.req_gpu) * s.gpu
                    + int(row.req_mic) * s.mic)
            first = s.core_first - s.core if int(row.req_cores) > 0 else 0.0
            costs.append((first / int(fit[n]) + unit, int(fit[n]), unit, first))
        left, total = int(row.units), 0.0
        for _, k, unit, first in sorted(costs):
            take = min(k, left)
            total += first + take * unit
            left -= take
            if not left:
                break
        return total


def build(out: Path, n_instances: int, seed: int) -> pd.DataFrame:
    """Write the instance files; return the index table."""
    df = pool()
    rows = []
    for preset, (sets, sizes) in GROUPS.items():
        m = Machine(resolve_platform(preset))
        ok = df.apply(m.hostable, axis=1)
        need = df.apply(m.job_w, axis=1)
        (out / preset).mkdir(parents=True, exist_ok=True)
        for s_i, name in enumerate(sets):
            members = df[ok & in_set(df, name)]
            for size in sizes:
                rng = np.random.default_rng([seed, s_i, size])
                order = rng.permutation(len(members))
                k = min(n_instances, len(members) // size)
                if k == 0:
                    continue
                blocks = []
                for i in range(k):
                    b = members.iloc[order[i * size:(i + 1) * size]].copy()
                    b["instance"] = i
                    b["submit"] = i  # instance i's jobs sort together; sliced → 0
                    blocks.append(b)
                inst = pd.concat(blocks, ignore_index=True)
                path = out / preset / f"{name}_{size}.csv"
                inst[COLUMNS].to_csv(path, index=False)
                per_inst = [m.idle_w + float(need.loc[b.index].max()) for b in
                            (members.iloc[order[i * size:(i + 1) * size]] for i in range(k))]
                rows.append({"platform": preset, "set": name, "size": size,
                             "pool_jobs": len(members), "instances": k,
                             "idle_w": m.idle_w, "full_w": round(m.full_w, 2),
                             "min_cap_w": ";".join(f"{c:.2f}" for c in per_inst),
                             "file": str(path.relative_to(out.parent))})
    index = pd.DataFrame(rows)
    index.to_csv(out / "index.csv", index=False)
    return index


def caps_for(row: pd.Series) -> list[int]:
    """The cap levels of a group's platform (whole watts, rounded up to 10 W)."""
    return [int(math.ceil(f * row.full_w / 10.0) * 10) for f in CAP_FRACTIONS]


def campaign(index: pd.DataFrame, preset: str, k: int, dispatchers: list[str],
             sizes: list[int] | None, sets: list[str] | None, tag: str,
             per_set: dict[str, int] | None = None) -> str:
    """A ``run-experiment`` file for one platform: the first ``k`` instances of every set
    and size (``per_set`` overrides ``k`` for some sets), each at every cap level at which
    all its jobs can run (one entry each)."""
    stem = campaign_stem(preset, tag)
    lines = [
        f"# Borghesi et al. 2015 §6.1 on {preset}: instances from build_instances.py (the first",
        f"# {k} of each set and size{_overrides(per_set)}; no job in two instances of a",
        "# group), every job at time 0,",
        "# job power from the node power model, a fixed cap (idle power counted); an instance",
        "# runs at the cap levels at which each of its jobs can run alone.",
        "#",
        f"#   dispatchlab run-experiment experiments/power_capping/{stem}.toml --workers 1",
        "#   .venv/bin/python experiments/power_capping/analyse.py",
        "",
        f'name = "power-capping-{preset}-{tag}"',
        f'description = "Power-capping study (Borghesi et al. 2015) on {preset}"',
        f'out = "results/store/{stem}"',
        f'platforms = ["{preset}"]',
        "seeds = [0]",
        "dispatchers = [" + ", ".join(f'"{d}"' for d in dispatchers) + "]",
        "",
    ]
    for _, row in index[index.platform == preset].iterrows():
        if (sizes and row["size"] not in sizes) or (sets and row["set"] not in sets):
            continue
        need = [float(c) for c in str(row.min_cap_w).split(";")]
        size = int(row["size"])
        for i in range(min((per_set or {}).get(row["set"], k), int(row.instances))):
            for cap in (c for c in caps_for(row) if c >= need[i]):
                lines += [
                    "[[workloads]]",
                    f'name = "{row["set"]}_{size}_i{i}_cap{cap}"',
                    f'path = "instances/{preset}/{row["set"]}_{size}.csv"',
                    f"skip = {i * size}",
                    f"limit = {size}",
                    f'scenario = "gen:constant:what=power_cap,value={cap}"',
                    "",
                ]
    lines += ["[stats]",
              'metrics = ["mean_weighted_queue_time", "mean_wait", "dispatch_time_max_ms"]',
              "", "[execution]", "workers = 1", ""]
    return "\n".join(lines)


def _overrides(per_set: dict[str, int] | None) -> str:
    """`` (highLoad: 5)`` for the campaign's header comment."""
    if not per_set:
        return ""
    return " (" + ", ".join(f"{name}: {n}" for name, n in per_set.items()) + ")"


def campaign_stem(preset: str, tag: str) -> str:
    """``campaign_eurora8_rules``: the file (and result store) name of a campaign."""
    return f"campaign_{preset.replace('-', '')}_{tag}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instances", type=int, default=50, help="per set and size (paper: 50)")
    ap.add_argument("--seed", type=int, default=2015)
    ap.add_argument("--campaign-instances", type=int, default=0,
                    help="also write campaign_*.toml running this many instances per group")
    ap.add_argument("--dispatchers", nargs="+",
                    default=["prb-power", "dec", "dec-feedback", "easy-power", "easy"])
    ap.add_argument("--sizes", nargs="*", type=int, help="sizes the campaigns run (all)")
    ap.add_argument("--sets", nargs="*", help="sets the campaigns run (all)")
    ap.add_argument("--platforms", nargs="*", default=list(GROUPS), help="campaign platforms")
    ap.add_argument("--tag", default="all", help="campaign name suffix")
    ap.add_argument("--set-instances", nargs="*", default=[], metavar="SET=K",
                    help="instances per group for some sets (overrides --campaign-instances)")
    args = ap.parse_args()
    index = build(HERE / "instances", args.instances, args.seed)
    print(index.drop(columns=["min_cap_w", "file"]).to_string(index=False))
    if args.campaign_instances:
        for preset in args.platforms:
            per_set = {a.split("=")[0]: int(a.split("=")[1]) for a in args.set_instances}
            text = campaign(index, preset, args.campaign_instances, args.dispatchers,
                            args.sizes, args.sets, args.tag, per_set)
            path = HERE / f"{campaign_stem(preset, args.tag)}.toml"
            path.write_text(text, encoding="utf-8")
            print("wrote", path.relative_to(HERE.parents[1]))


if __name__ == "__main__":
    main()
