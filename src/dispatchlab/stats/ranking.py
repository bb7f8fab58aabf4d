"""Ranking dispatchers over repeated sets: average ranks, Friedman test, post-hoc z-tests.

The method follows Mejri et al. §6.1 (after Demšar 2006 and García & Herrera 2008): rank
the *k* dispatchers within each of the *N* sets (1 = best, ties share the average rank),
test with Friedman's χ²_F whether the average ranks differ from (k+1)/2, and, when they do,
compare every pair with ``z = (R_i − R_j) / SE``, ``SE = sqrt(k(k+1) / (6N))``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy import stats as sps

FloatMatrix = npt.NDArray[np.float64]

P_ADJUST = ("holm", "none")


def rank_blocks(values: npt.ArrayLike, *, lower_is_better: bool = True) -> FloatMatrix:
    """Rank the columns within each row (block): 1 = best, ties get their average rank."""
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError("values must be a blocks × treatments matrix")
    if np.isnan(x).any():
        raise ValueError("values contain NaN; drop incomplete blocks first")
    return np.asarray(
        sps.rankdata(x if lower_is_better else -x, method="average", axis=1), dtype=np.float64
    )


def standard_error(k: int, n: int) -> float:
    """Standard error of the difference of two average ranks: ``sqrt(k(k+1) / (6N))``."""
    return math.sqrt(k * (k + 1) / (6.0 * n))


@dataclass(frozen=True)
class FriedmanResult:
    """Friedman's test on an N × k rank matrix.

    ``chi2`` includes the usual correction for ties (equal to the textbook value when there
    are none; ``chi2_uncorrected`` is the textbook value). ``f``/``f_p_value`` give the
    Iman–Davenport F form, which is less conservative for small N.
    """

    n_blocks: int
    k: int
    mean_ranks: dict[str, float]
    chi2: float
    p_value: float
    chi2_uncorrected: float
    tie_correction: float
    f: float
    f_p_value: float


def friedman(ranks: npt.ArrayLike, treatments: Sequence[str]) -> FriedmanResult:
    """Friedman's χ²_F for ``ranks`` (N blocks × k treatments, each row a ranking)."""
    r = np.asarray(ranks, dtype=np.float64)
    n, k = r.shape
    if k != len(treatments):
        raise ValueError("one name per treatment column is needed")
    if n < 1 or k < 2:
        raise ValueError("need at least one block and two treatments")
    mean_ranks = r.mean(axis=0)
    chi2_raw = 12.0 * n / (k * (k + 1)) * (float((mean_ranks**2).sum()) - k * (k + 1) ** 2 / 4)
    ties = 0.0
    for row in r:
        _, counts = np.unique(row, return_counts=True)
        ties += float((counts**3 - counts).sum())
    correction = 1.0 - ties / (n * (k**3 - k))
    if correction <= 0:  # every block is one big tie: nothing distinguishes the treatments
        chi2, p = 0.0, 1.0
    else:
        chi2 = chi2_raw / correction
        p = float(sps.chi2.sf(chi2, k - 1))
    denom = n * (k - 1) - chi2
    if n < 2:
        f, f_p = math.nan, math.nan
    elif denom <= 0:
        f, f_p = math.inf, 0.0
    else:
        f = (n - 1) * chi2 / denom
        f_p = float(sps.f.sf(f, k - 1, (k - 1) * (n - 1)))
    return FriedmanResult(
        n,
        k,
        dict(zip(treatments, mean_ranks.tolist(), strict=True)),
        float(chi2),
        p,
        float(chi2_raw),
        float(correction),
        float(f),
        f_p,
    )


@dataclass(frozen=True)
class Pair:
    """Post-hoc comparison of ``a`` and ``b`` (``better`` is the significantly better one)."""

    a: str
    b: str
    rank_a: float
    rank_b: float
    z: float
    p_value: float
    p_adjusted: float
    significant: bool
    better: str | None


def posthoc(
    mean_ranks: Mapping[str, float],
    n_blocks: int,
    *,
    alpha: float = 0.05,
    adjust: str = "holm",
    gate: bool = True,
    friedman_p: float | None = None,
) -> list[Pair]:
    """All pairwise z-tests on average ranks, two-sided.

    ``adjust="holm"`` controls the family-wise error over the k(k−1)/2 comparisons
    (García & Herrera); ``"none"`` compares raw p-values to ``alpha`` as the paper does.
    With ``gate`` a pair is only called significant when the Friedman test rejected
    (``friedman_p < alpha``).
    """
    if adjust not in P_ADJUST:
        raise ValueError(f"adjust must be one of {', '.join(P_ADJUST)}")
    names = list(mean_ranks)
    k = len(names)
    se = standard_error(k, n_blocks)
    raw: list[tuple[str, str, float, float]] = []
    for a, b in combinations(names, 2):
        z = (mean_ranks[a] - mean_ranks[b]) / se
        raw.append((a, b, z, float(2.0 * sps.norm.sf(abs(z)))))
    adjusted = _holm([p for *_, p in raw]) if adjust == "holm" else [p for *_, p in raw]
    open_gate = not gate or (friedman_p is not None and friedman_p < alpha)
    pairs = []
    for (a, b, z, p), p_adj in zip(raw, adjusted, strict=True):
        sig = open_gate and p_adj < alpha
        better = (a if z < 0 else b) if sig else None
        pairs.append(Pair(a, b, mean_ranks[a], mean_ranks[b], float(z), p, p_adj, sig, better))
    return pairs


def _holm(p: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values, in the input order."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    running = 0.0
    for step, i in enumerate(order):
        running = max(running, min(1.0, (m - step) * p[i]))
        out[i] = running
    return out


@dataclass(frozen=True)
class RankRow:
    """One dispatcher in the ranking: its tier (1 = best group) and who it beats."""

    name: str
    mean_rank: float
    tier: int
    better_than: tuple[str, ...]
    worse_than: tuple[str, ...]


def tiers(mean_ranks: Mapping[str, float], pairs: Sequence[Pair]) -> list[RankRow]:
    """Group dispatchers into tiers: one more than the worst tier of anyone that beats it.

    Dispatchers in one tier are not significantly different from the tier's leader chain;
    tier 1 holds every dispatcher nobody significantly beats.
    """
    beats: dict[str, set[str]] = {n: set() for n in mean_ranks}
    for p in pairs:
        if p.better is not None:
            loser = p.b if p.better == p.a else p.a
            beats[p.better].add(loser)
    order = sorted(mean_ranks, key=lambda n: (mean_ranks[n], n))
    tier: dict[str, int] = {}
    for name in order:
        winners = [w for w in beats if name in beats[w]]
        tier[name] = 1 + max((tier.get(w, 1) for w in winners), default=0)
    return [
        RankRow(
            n,
            mean_ranks[n],
            tier[n],
            tuple(sorted(beats[n], key=lambda m: mean_ranks[m])),
            tuple(sorted((w for w in beats if n in beats[w]), key=lambda m: mean_ranks[m])),
        )
        for n in order
    ]


@dataclass
class Ranking:
    """Everything the ranking of one metric produced (``friedman`` None when not testable)."""

    metric: str
    lower_is_better: bool
    treatments: list[str]
    n_blocks: int
    dropped_blocks: int
    friedman: FriedmanResult | None
    pairs: list[Pair] = field(default_factory=list)
    rows: list[RankRow] = field(default_factory=list)
    alpha: float = 0.05
    adjust: str = "holm"
    note: str = ""

    @property
    def standard_error(self) -> float:
        """SE of a difference of average ranks (NaN when untestable)."""
        if self.n_blocks < 1 or len(self.treatments) < 2:
            return math.nan
        return standard_error(len(self.treatments), self.n_blocks)

    def table(self) -> pd.DataFrame:
        """The "who is significantly better" table, best first."""
        return pd.DataFrame(
            [
                {
                    "dispatcher": r.name,
                    "mean_rank": r.mean_rank,
                    "tier": r.tier,
                    "better_than": ", ".join(r.better_than),
                    "worse_than": ", ".join(r.worse_than),
                }
                for r in self.rows
            ]
        )

    def pairs_table(self) -> pd.DataFrame:
        """Every pairwise comparison with z, raw and adjusted p-values."""
        return pd.DataFrame([vars(p) for p in self.pairs])


def compare_on_metric(
    runs: pd.DataFrame,
    metric: str,
    *,
    lower_is_better: bool = True,
    treatment: str = "dispatcher",
    block: str = "block",
    alpha: float = 0.05,
    adjust: str = "holm",
    order: Sequence[str] | None = None,
) -> Ranking:
    """Rank ``treatment`` values on ``metric`` over the blocks where all of them ran.

    ``order`` fixes the order of the treatments in the tables (default: first appearance).
    """
    table = runs.pivot_table(
        index=block, columns=treatment, values=metric, aggfunc="first", dropna=False, sort=False
    )
    seen = [t for t in dict.fromkeys(runs[treatment]) if t in table.columns]
    wanted = [t for t in (order or []) if t in table.columns]
    table = table[wanted + [t for t in seen if t not in wanted]]
    names = [str(c) for c in table.columns]
    complete = table.dropna(axis=0, how="any")
    dropped = len(table) - len(complete)
    ranking = Ranking(
        metric, lower_is_better, names, len(complete), dropped, None, alpha=alpha, adjust=adjust
    )
    if len(names) < 2:
        ranking.note = "needs at least two dispatchers"
        return ranking
    if len(complete) < 2:
        ranking.note = (
            f"needs at least two complete sets (seeds or trace windows); have {len(complete)}"
        )
        if len(complete) == 1:
            ranks = rank_blocks(complete.to_numpy(), lower_is_better=lower_is_better)[0]
            ranking.rows = [
                RankRow(n, float(r), 0, (), ()) for r, n in sorted(zip(ranks, names, strict=True))
            ]
        return ranking
    ranks = rank_blocks(complete.to_numpy(), lower_is_better=lower_is_better)
    fr = friedman(ranks, names)
    ranking.friedman = fr
    ranking.pairs = posthoc(
        fr.mean_ranks, fr.n_blocks, alpha=alpha, adjust=adjust, friedman_p=fr.p_value
    )
    ranking.rows = tiers(fr.mean_ranks, ranking.pairs)
    if fr.p_value >= alpha:
        ranking.note = (
            f"Friedman p = {fr.p_value:.3g} ≥ α = {alpha}: no significant "
            "difference, post-hoc tests not applied"
        )
    return ranking


@dataclass
class SetStatistics:
    """Means with intervals and rankings of several metrics over the same sets."""

    means: pd.DataFrame
    rankings: dict[str, Ranking]
    n_sets: int
    confidence: float
    repeated_seeds: int = 0
    #: per metric, how many sets were counted once because they differ only in their
    #: pricing scenario and every dispatcher has the same value there
    repeated_pricing: dict[str, int] = field(default_factory=dict)


def drop_repeated_seeds(
    runs: pd.DataFrame, *, block: str = "block", treatment: str = "dispatcher"
) -> tuple[pd.DataFrame, int]:
    """Keep one seed where the seeds changed nothing; return the runs and how many sets went.

    Sets that differ only by seed (``block`` ends in ``|seed=N``) and in which every
    dispatcher produced identical results (same ``result_digest``) are copies, not
    independent repetitions: counting them would inflate N and fake significance.
    """
    if not {"seed", "result_digest", block} <= set(runs.columns) or not len(runs):
        return runs, 0
    base = runs[block].astype(str).str.replace(r"\|seed=-?\d+$", "", regex=True)
    keep = pd.Series(True, index=runs.index)
    dropped = 0
    for _, group in runs.groupby(base, sort=False):
        seeds = sorted(group["seed"].unique())
        if len(seeds) < 2:
            continue
        per_seed = group.groupby("seed")[treatment].apply(frozenset)
        same_cast = per_seed.nunique() == 1
        if same_cast and group.groupby(treatment)["result_digest"].nunique().max() == 1:
            keep[group.index[group["seed"] != seeds[0]]] = False
            dropped += len(seeds) - 1
    return runs[keep], dropped


_PRICING = r"\|pricing=[^|]*"


def drop_repeated_pricing(
    runs: pd.DataFrame, metric: str, *, block: str = "block", treatment: str = "dispatcher"
) -> tuple[pd.DataFrame, int]:
    """For ``metric``, keep one of the sets that differ only in their pricing scenario
    (``|pricing=NAME`` in ``block``) when every dispatcher has the same value in all of
    them; return the runs and how many sets went.

    One schedule priced in several scenarios is one sample of the schedule metrics (wait,
    slowdown, utilization): counting it once per scenario would inflate N and fake
    significance. Metrics the pricing changes (profit, PUE, cooling energy) keep a set
    per scenario, as a workload would.
    """
    if block not in runs or metric not in runs or not len(runs):
        return runs, 0
    blocks = runs[block].astype(str)
    if not blocks.str.contains(_PRICING, regex=True).any():
        return runs, 0
    base = blocks.str.replace(_PRICING, "", regex=True)
    keep = pd.Series(True, index=runs.index)
    dropped = 0
    for _, group in runs.groupby(base, sort=False):
        names = list(dict.fromkeys(group[block]))
        if len(names) < 2:
            continue
        table = group.pivot_table(index=block, columns=treatment, values=metric,
                                  aggfunc="first", dropna=False)
        if not table.isna().any().any() and (table.nunique() == 1).all():
            keep[group.index[group[block] != names[0]]] = False
            dropped += len(names) - 1
    return runs[keep], dropped


def analyze_sets(
    runs: pd.DataFrame,
    metrics: Sequence[str],
    *,
    alpha: float = 0.05,
    adjust: str = "holm",
    confidence: float = 0.95,
    treatment: str = "dispatcher",
    block: str = "block",
    order: Sequence[str] | None = None,
) -> SetStatistics:
    """Mean ± interval per dispatcher and the Friedman ranking, for each metric.

    Seeds that reproduced another seed's results exactly are counted once
    (:func:`drop_repeated_seeds`), and so are, metric by metric, pricing scenarios of one
    schedule (:func:`drop_repeated_pricing`).
    """
    from dispatchlab.stats.ci import summarize_runs
    from dispatchlab.stats.metrics import metric_info

    runs, repeated = drop_repeated_seeds(runs, block=block, treatment=treatment)
    present = [m for m in metrics if m in runs]
    per_metric = {m: drop_repeated_pricing(runs, m, block=block, treatment=treatment)
                  for m in present}
    parts = [summarize_runs(per_metric[m][0], [m], by=treatment, confidence=confidence)
             for m in present]
    means = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    if len(means):  # dispatcher by dispatcher, as one summarize_runs call orders them
        first = {d: i for i, d in enumerate(dict.fromkeys(runs[treatment]))}
        means = means.sort_values(treatment, key=lambda c: c.map(first),
                                  kind="stable").reset_index(drop=True)
    rankings = {
        m: compare_on_metric(
            per_metric[m][0],
            m,
            lower_is_better=metric_info(m).lower_is_better,
            treatment=treatment,
            block=block,
            alpha=alpha,
            adjust=adjust,
            order=order,
        )
        for m in present
    }
    return SetStatistics(
        means,
        rankings,
        int(runs[block].nunique()) if len(runs) else 0,
        confidence,
        repeated,
        {m: n for m, (_, n) in per_metric.items() if n},
    )
