"""DEC in the paper's mode: durations known in advance (Borghesi et al. 2015 §6.1 ran its
methods off-line on logged durations), beside the on-line runs of the study.

``build`` rewrites the instance files of the 25-job (eurora-8) and 40-job (eurora-32) groups
with each job's wall-time set to its run time (at least 1 s), so every estimate DEC plans
with is the actual duration, and writes the campaigns ``campaign_eurora8_dec25_known.toml``
and ``campaign_eurora32_dec40_known.toml`` (the same instances and caps as the on-line
``dec25`` / ``dec40`` campaigns; PRB, ``dec`` and ``dec-feedback``). The instances are
still dispatched event by event (all jobs arrive at 0; DEC re-plans at each end), but with
exact durations its plan at 0 holds until then: the on-line effect of wall-times about three
times the run times is removed, which is what the write-up named as the likely cause of its
disagreements with the paper.

``analyse`` reads the stores (``results/store_known/``) and writes
``results/known_durations.md`` and ``results/known_runs.csv``: per platform, set and cap
band, each method against PRB with known durations beside the same pairs on-line (from
``results/runs.csv``), and ``dec-feedback`` against ``dec``, counted per (instance, cap)
pair and per instance (an instance's pairs at several caps are not independent: the
per-instance count takes the sign of its mean relative difference over its caps).

Usage::

    python experiments/power_capping/known_durations.py build
    cd experiments/power_capping
    dispatchlab run-experiment campaign_eurora8_dec25_known.toml --workers 1
    dispatchlab run-experiment campaign_eurora32_dec40_known.toml --workers 1
    python experiments/power_capping/known_durations.py analyse
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
GROUPS = {"campaign_eurora8_dec25": "campaign_eurora8_dec25_known",
          "campaign_eurora32_dec40": "campaign_eurora32_dec40_known"}
KNOWN = "instances_known"
STORE = HERE / "results" / "store_known"
BANDS = (("tight (≤ 35 %)", 0.0, 0.35), ("mid (40–60 %)", 0.35, 0.6),
         ("loose (≥ 70 %)", 0.6, 1.01))


def build() -> None:
    """Instance files with wall-time := run time, and the two campaigns."""
    for src, dst in GROUPS.items():
        text = (HERE / f"{src}.toml").read_text()
        for rel in sorted(set(re.findall(r'path = "instances/([^"]+)"', text))):
            frame = pd.read_csv(HERE / "instances" / rel)
            frame["walltime"] = np.maximum(frame["runtime"], 1)
            out = HERE / KNOWN / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            frame.to_csv(out, index=False)
        text = text.replace('path = "instances/', f'path = "{KNOWN}/')
        text = re.sub(r'^name = "([^"]+)"', r'name = "\1-known"', text, count=1, flags=re.M)
        text = re.sub(r'^out = "results/store/([^"]+)"', r'out = "results/store_known/\1"',
                      text, count=1, flags=re.M)
        text = re.sub(r"^dispatchers = .*$", 'dispatchers = ["prb-power", "dec", "dec-feedback"]',
                      text, count=1, flags=re.M)
        head = ("# DEC with known durations (wall-time := run time): known_durations.py, "
                "generated from\n# " + f"{src}.toml" + "; same instances and caps.\n")
        (HERE / f"{dst}.toml").write_text(head + text)
        print(f"wrote {dst}.toml")


def _verdict(prb: pd.Series, other: pd.Series) -> pd.Series:
    scale = np.maximum(np.maximum(prb, other), 1e-12)
    diff = (prb - other) / scale
    return pd.Series(np.where(diff > 0.01, "better", np.where(diff < -0.01, "worse", "equal")),
                     index=prb.index)


def _md(frame: pd.DataFrame) -> str:
    from dispatchlab.report.format import markdown_table

    return markdown_table(frame.set_index(frame.columns[0]), 3)


def _count(v: pd.Series) -> str:
    c = v.value_counts()
    return f"{int(c.get('better', 0))} / {int(c.get('equal', 0))} / {int(c.get('worse', 0))}"


def _per_instance(frame: pd.DataFrame, a: str, b: str) -> pd.Series:
    """Per instance: the sign of its mean relative difference (a − b) / max over its caps."""
    rel = (frame[a] - frame[b]) / np.maximum(np.maximum(frame[a], frame[b]), 1e-12)
    mean = rel.groupby([frame["platform"], frame["set"], frame["size"],
                        frame["instance"]]).mean()
    return pd.Series(np.where(mean > 0.01, "better", np.where(mean < -0.01, "worse", "equal")),
                     index=mean.index)


def analyse() -> None:
    """Known durations against on-line, per band; pair and instance counts."""
    sys.path.insert(0, str(HERE))
    from analyse import NAME

    from dispatchlab.experiments.collect import stores_table

    known = stores_table(STORE)
    known = pd.concat([known, known["workload"].str.extract(NAME)], axis=1)
    known["size"] = known["size"].astype(int)
    known["instance"] = known["instance"].astype(int)
    known["cap_w"] = known["cap"].astype(int)
    online = pd.read_csv(HERE / "results" / "runs.csv")
    share = online.drop_duplicates(["platform", "cap_w"]).set_index(
        ["platform", "cap_w"])["cap_share"]
    known["cap_share"] = [share.get((p, c), np.nan) for p, c in
                          zip(known["platform"], known["cap_w"], strict=True)]
    key = ["platform", "set", "size", "instance", "cap_w", "cap_share"]
    cols = [*key, "dispatcher", "mean_weighted_queue_time", "mean_wait",
            "dispatch_time_total_s"]
    known = known[cols].sort_values([*key, "dispatcher"])
    known.to_csv(HERE / "results" / "known_runs.csv", index=False)

    def wide(frame: pd.DataFrame) -> pd.DataFrame:
        return frame.pivot_table(index=key, columns="dispatcher",
                                 values="mean_weighted_queue_time").reset_index()

    k, o = wide(known), wide(online)
    both = k.merge(o, on=key, suffixes=("_known", "_online"))
    lines = ["# DEC with known durations beside the on-line runs", "",
             "`known_durations.py analyse`; runs in `results/known_runs.csv`. Same instances "
             "and caps; known = wall-time set to the run time. Counts better / equal / worse "
             "than PRB (within 1 % = equal), per (instance, cap) pair and per instance (the "
             "sign of the instance's mean relative difference over its caps); ratio = PRB's "
             "mean / the method's mean over the pairs (> 1: the method waits less).", ""]
    rows = []
    for method in ("dec-feedback", "dec"):
        for (plat, name), part in both.groupby(["platform", "set"]):
            for band, lo, hi in BANDS:
                s = part[(part.cap_share > lo) & (part.cap_share <= hi)].dropna(
                    subset=[f"{d}_{mode}" for d in ("prb-power", method)
                            for mode in ("online", "known")])
                if not len(s):
                    continue
                row: dict[str, object] = {"method": method, "platform": plat, "set": name,
                                          "caps": band, "pairs": len(s),
                                          "instances": s["instance"].nunique()}
                for mode in ("online", "known"):
                    prb, other = s[f"prb-power_{mode}"], s[f"{method}_{mode}"]
                    row[f"{mode}: pairs b/e/w"] = _count(_verdict(prb, other))
                    inst = _per_instance(s.assign(a=prb, b=other), "a", "b")
                    row[f"{mode}: instances b/e/w"] = _count(inst)
                    row[f"{mode}: ratio"] = round(float(prb.mean() / other.mean()), 3) \
                        if other.mean() > 0 else np.nan
                rows.append(row)
    lines += [_md(pd.DataFrame(rows)), ""]
    fb = []
    paired = both.dropna(subset=[f"{d}_{mode}" for d in ("dec", "dec-feedback")
                                 for mode in ("online", "known")])
    for mode in ("online", "known"):
        a, b = paired[f"dec_{mode}"], paired[f"dec-feedback_{mode}"]
        v = _verdict(a, b)
        inst = _per_instance(paired.assign(a=a, b=b), "a", "b")
        fb.append({"mode": mode, "pairs": len(paired), "pairs b/e/w": _count(v),
                   "instances": len(inst), "instances b/e/w": _count(inst),
                   "mean WQT dec": round(float(a.mean()), 4),
                   "mean WQT dec-feedback": round(float(b.mean()), 4)})
    lines += ["## dec-feedback against dec ('better' = feedback waits less)", "",
              _md(pd.DataFrame(fb)), ""]
    times = known.groupby(["platform", "dispatcher"])["dispatch_time_total_s"].median()
    lines += ["Median decision time per run (s), known durations: " + ", ".join(
        f"{p} {d} {t:.2f}" for (p, d), t in times.items()), ""]
    (HERE / "results" / "known_durations.md").write_text("\n".join(lines))
    print("\n".join(lines))


def per_instance() -> None:
    """The on-line study's statements counted per instance (``results/per_instance.md``,
    from ``results/runs.csv``): an instance's pairs at several caps share its jobs and
    often its schedule, so they are not independent samples."""
    runs = pd.read_csv(HERE / "results" / "runs.csv")
    key = ["platform", "set", "size", "instance", "cap_w", "cap_share"]
    w = runs.pivot_table(index=key, columns="dispatcher",
                         values="mean_weighted_queue_time").reset_index()
    lines = ["# The power-capping statements counted per instance", "",
             "`known_durations.py per-instance`, from `results/runs.csv` (on-line runs). An "
             "instance counts better / equal / worse by the sign of its mean relative "
             "difference over its caps in the band (within 1 % = equal); sizes pooled.", ""]
    d = w.dropna(subset=["dec", "dec-feedback"])
    rows = []
    for (plat, name), part in [(("all", "all"), d), *d.groupby(["platform", "set"])]:
        inst = _per_instance(part.assign(a=part["dec"], b=part["dec-feedback"]), "a", "b")
        worse_any = part[part["dec-feedback"] > part["dec"] * (1 + 1e-9) + 1e-12]
        rows.append({"platform": plat, "set": name, "pairs": len(part),
                     "pairs b/e/w": _count(_verdict(part["dec"], part["dec-feedback"])),
                     "instances": len(inst), "instances b/e/w": _count(inst),
                     "instances with a worse pair": worse_any.groupby(
                         ["platform", "set", "size", "instance"]).ngroups})
    lines += ["## 1. dec-feedback against dec ('better' = feedback waits less)", "",
              _md(pd.DataFrame(rows)), ""]
    rows = []
    for method in ("dec-feedback", "dec"):
        m = w.dropna(subset=["prb-power", method])
        for (plat, name), part in m.groupby(["platform", "set"]):
            for band, lo, hi in BANDS:
                q = part[(part.cap_share > lo) & (part.cap_share <= hi)]
                if not len(q):
                    continue
                inst = _per_instance(q.assign(a=q["prb-power"], b=q[method]), "a", "b")
                rows.append({"method": method, "platform": plat, "set": name, "caps": band,
                             "pairs": len(q),
                             "pairs b/e/w": _count(_verdict(q["prb-power"], q[method])),
                             "instances": len(inst), "instances b/e/w": _count(inst)})
    lines += ["## 2–6. Each method against PRB ('better' = the method waits less)", "",
              _md(pd.DataFrame(rows)), ""]
    (HERE / "results" / "per_instance.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    commands = {"build": build, "analyse": analyse, "per-instance": per_instance}
    commands[sys.argv[1] if len(sys.argv) > 1 else "build"]()
