"""Friedman test and post-hoc z-tests against a worked example computed by hand.

The example: k = 4 dispatchers (A, B, C, D) on N = 6 sets, lower metric is better.
Ranks per set (1 = best):

    set   A  B  C  D
    1     1  2  3  4
    2     1  3  2  4
    3     2  1  3  4
    4     1  2  4  3
    5     1  2  3  4
    6     2  1  3  4
    sum   8 11 18 23   (total 60 = N·k(k+1)/2 ✓)

Average ranks R = 8/6, 11/6, 3, 23/6.
χ²_F = 12N/(k(k+1)) · (Σ R_j² − k(k+1)²/4) = 72/20 · (1038/36 − 25) = 3.6 · 138/36 = 13.8;
with 3 degrees of freedom p = erfc(sqrt(6.9)) + sqrt(27.6/π)·e^(−6.9) = 0.003190.
Iman–Davenport F = (N−1)χ² / (N(k−1) − χ²) = 5·13.8 / (18 − 13.8) = 69/4.2.
SE = sqrt(k(k+1)/(6N)) = sqrt(20/36) = 0.745356.
z(A,D) = −2.5/SE = −3.3541, z(B,D) = −2/SE = −2.6833, z(A,C) = −(5/3)/SE = −2.2361,
z(B,C) = −(7/6)/SE, z(C,D) = −(5/6)/SE, z(A,B) = −0.5/SE.
Two-sided p: A–D 0.000796, B–D 0.00729, A–C 0.02535, B–C 0.1175, C–D 0.2636, A–B 0.5023.
Holm (m = 6): A–D 6·0.000796 = 0.00478, B–D 5·0.00729 = 0.0364, A–C 4·0.02535 = 0.1014,
B–C 3·0.1175 = 0.3526, C–D 2·0.2636 = 0.5271, A–B max(0.5271, 0.5023) = 0.5271.
At α = 0.05: Holm finds A and B better than D; raw p-values also find A better than C.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from dispatchlab.stats.ranking import (
    compare_on_metric,
    friedman,
    posthoc,
    rank_blocks,
    standard_error,
    tiers,
)

RANKS = np.array(
    [
        [1, 2, 3, 4],
        [1, 3, 2, 4],
        [2, 1, 3, 4],
        [1, 2, 4, 3],
        [1, 2, 3, 4],
        [2, 1, 3, 4],
    ],
    dtype=float,
)
NAMES = ["A", "B", "C", "D"]


def chi2_sf_3df(x: float) -> float:
    """Closed-form survival function of χ² with 3 degrees of freedom."""
    return math.erfc(math.sqrt(x / 2)) + math.sqrt(2 * x / math.pi) * math.exp(-x / 2)


def as_runs(values: np.ndarray) -> pd.DataFrame:
    """Tidy runs table (block, dispatcher, metric) from a blocks × dispatchers matrix."""
    rows = [
        {"block": f"set{b}", "dispatcher": NAMES[j], "m": float(values[b, j])}
        for b in range(values.shape[0])
        for j in range(values.shape[1])
    ]
    return pd.DataFrame(rows)


def test_ranks_come_from_values_per_block() -> None:
    # metric values with a different scale in every set; only the order inside a set counts
    values = RANKS * 10.0 + np.arange(6)[:, None] * 1000.0
    assert np.array_equal(rank_blocks(values), RANKS)
    assert np.array_equal(rank_blocks(-values, lower_is_better=False), RANKS)


def test_friedman_statistic_matches_hand_computation() -> None:
    fr = friedman(RANKS, NAMES)
    assert fr.mean_ranks == pytest.approx({"A": 8 / 6, "B": 11 / 6, "C": 3.0, "D": 23 / 6})
    assert fr.chi2 == pytest.approx(13.8)
    assert fr.chi2_uncorrected == pytest.approx(13.8)
    assert fr.tie_correction == 1.0
    assert fr.p_value == pytest.approx(chi2_sf_3df(13.8), rel=1e-9)
    assert fr.p_value == pytest.approx(0.003190, abs=1e-6)
    assert fr.f == pytest.approx(69 / 4.2)
    # an independent implementation agrees
    ref = sps.friedmanchisquare(*RANKS.T)
    assert fr.chi2 == pytest.approx(ref.statistic)
    assert fr.p_value == pytest.approx(ref.pvalue)


def test_posthoc_z_and_p_values_match_hand_computation() -> None:
    fr = friedman(RANKS, NAMES)
    se = standard_error(4, 6)
    assert se == pytest.approx(math.sqrt(20 / 36)) and se == pytest.approx(0.745356, abs=1e-6)
    pairs = {(p.a, p.b): p for p in posthoc(fr.mean_ranks, 6, adjust="holm", friedman_p=fr.p_value)}
    assert pairs[("A", "D")].z == pytest.approx(-2.5 / se)
    assert pairs[("A", "D")].z == pytest.approx(-3.3541, abs=1e-4)
    expected_p = {
        ("A", "D"): 0.000796,
        ("B", "D"): 0.00729,
        ("A", "C"): 0.02535,
        ("B", "C"): 0.1175,
        ("C", "D"): 0.2636,
        ("A", "B"): 0.5023,
    }
    for key, p in expected_p.items():
        assert pairs[key].p_value == pytest.approx(p, rel=2e-3), key
    expected_holm = {
        ("A", "D"): 0.00478,
        ("B", "D"): 0.0364,
        ("A", "C"): 0.1014,
        ("B", "C"): 0.3526,
        ("C", "D"): 0.5271,
        ("A", "B"): 0.5271,
    }
    for key, p in expected_holm.items():
        assert pairs[key].p_adjusted == pytest.approx(p, rel=3e-3), key
    better = {k: p.better for k, p in pairs.items() if p.significant}
    assert better == {("A", "D"): "A", ("B", "D"): "B"}
    rows = {r.name: r for r in tiers(fr.mean_ranks, list(pairs.values()))}
    assert [rows[n].tier for n in NAMES] == [1, 1, 1, 2]
    assert rows["D"].worse_than == ("A", "B")
    assert rows["A"].better_than == ("D",)


def test_unadjusted_posthoc_as_in_the_paper() -> None:
    fr = friedman(RANKS, NAMES)
    pairs = posthoc(fr.mean_ranks, 6, adjust="none", friedman_p=fr.p_value)
    better = {(p.a, p.b): p.better for p in pairs if p.significant}
    assert better == {("A", "C"): "A", ("A", "D"): "A", ("B", "D"): "B"}
    rows = {r.name: r.tier for r in tiers(fr.mean_ranks, pairs)}
    assert rows == {"A": 1, "B": 1, "C": 2, "D": 2}


def test_paper_standard_error_formula() -> None:
    # Mejri et al. §6.1: k = 10 setups, N = 100 sets. The formula gives 0.428 (the paper
    # prints 0.265, which its own formula does not produce).
    assert standard_error(10, 100) == pytest.approx(math.sqrt(110 / 600))
    assert standard_error(10, 100) == pytest.approx(0.4282, abs=1e-4)


def test_ties_use_average_ranks_and_the_tie_correction() -> None:
    values = np.array([[1.0, 1.0, 3.0], [2.0, 1.0, 1.0], [5.0, 6.0, 7.0], [3.0, 2.0, 2.0]])
    ranks = rank_blocks(values)
    assert ranks[0].tolist() == [1.5, 1.5, 3.0]
    fr = friedman(ranks, ["x", "y", "z"])
    ref = sps.friedmanchisquare(*values.T)
    assert fr.chi2 == pytest.approx(ref.statistic)
    assert fr.tie_correction < 1.0


def test_posthoc_is_gated_by_the_friedman_test() -> None:
    # two dispatchers that alternate: no difference, nothing significant
    values = np.array([[1.0, 2.0], [2.0, 1.0]] * 5)
    r = compare_on_metric(as_runs_two(values), "m")
    assert r.friedman is not None and r.friedman.p_value > 0.05
    assert not any(p.significant for p in r.pairs)
    assert "no significant difference" in r.note


def as_runs_two(values: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"block": b, "dispatcher": ["p", "q"][j], "m": values[b, j]}
            for b in range(len(values))
            for j in range(2)
        ]
    )


def test_compare_on_metric_end_to_end_and_incomplete_sets() -> None:
    runs = as_runs(RANKS * 7.0)
    runs = pd.concat([runs, pd.DataFrame([{"block": "partial", "dispatcher": "A", "m": 1.0}])])
    r = compare_on_metric(runs, "m", adjust="holm")
    assert r.n_blocks == 6 and r.dropped_blocks == 1
    assert r.friedman is not None and r.friedman.chi2 == pytest.approx(13.8)
    table = r.table()
    assert list(table["dispatcher"]) == ["A", "B", "C", "D"]
    assert list(table["tier"]) == [1, 1, 1, 2]
    # higher-is-better metrics rank the largest value first
    flipped = compare_on_metric(as_runs(-RANKS), "m", lower_is_better=False)
    assert flipped.friedman is not None
    assert flipped.friedman.mean_ranks == pytest.approx(r.friedman.mean_ranks)


def test_single_set_is_reported_not_tested() -> None:
    r = compare_on_metric(as_runs(RANKS[:1]), "m")
    assert r.friedman is None
    assert "at least two" in r.note
    assert [x.name for x in r.rows] == ["A", "B", "C", "D"]
