"""Paired Wilcoxon marks, Holm, ranks, wins/ties/losses and Friedman/Nemenyi, against values
computed by hand and the worked example of Demsar (2006), JMLR 7, section 3.2.2."""

import math

import numpy as np
import pandas as pd
import pytest

from reports.figures import nemenyi_cliques
from reports.stats import (
    average_ranks,
    friedman_chi2,
    friedman_nemenyi,
    holm,
    iman_davenport,
    nemenyi_cd,
    nemenyi_q,
    not_worse_than_best,
    paired_values,
    wilcoxon_p,
    wins_ties_losses,
)
from reports.tables import summarize

A, B, C = ("a", "inhouse"), ("b", "xgboost"), ("c", "lightgbm")
BASE = [0.10, 0.20, 0.15, 0.30, 0.25, 0.12]
UP = [0.01, 0.02, 0.03, 0.04, 0.05, 0.06]  # distinct magnitudes: the exact null distribution
MIXED = [0.01, -0.02, 0.03, -0.04, 0.05, 0.06]


def table_of(cells: dict) -> object:
    """summarize() of {(dataset, pair): values}, value i belonging to seed i, split 0."""
    rows = [
        (dataset, *pair, str(seed), 0, value)
        for (dataset, pair), values in cells.items()
        for seed, value in enumerate(values)
    ]
    columns = ["dataset", "method", "engine", "seed", "split", "value"]
    return summarize(pd.DataFrame(rows, columns=columns), "test_error")


def shifted(diffs: list[float]) -> list[float]:
    return [b + d for b, d in zip(BASE, diffs, strict=True)]


def test_pairs_match_seed_and_split_and_drop_unmatched():
    table = table_of({("d", A): BASE, ("d", B): shifted(UP)[:4]})
    first, second = paired_values(table.values, "d", B, A)
    assert second.tolist() == BASE[:4]
    assert first - second == pytest.approx(UP[:4])


def test_wilcoxon_exact_p_and_degenerate_cases():
    # All 6 differences positive, distinct |d|: P(W- = 0) = 1/2^6, two-sided 2/64.
    assert wilcoxon_p(np.array(shifted(UP)), np.array(BASE)) == pytest.approx(2 / 64)
    # Signs + - + - + +: W- = 2 + 4 = 6; subsets of {1..6} with sum <= 6: 1+1+1+2+2+3+4 = 14.
    assert wilcoxon_p(np.array(shifted(MIXED)), np.array(BASE)) == pytest.approx(2 * 14 / 64)
    assert wilcoxon_p(np.array([0.3]), np.array([0.1])) == 1.0
    assert wilcoxon_p(np.array(BASE), np.array(BASE)) == 1.0


def test_holm_step_down():
    # sorted 0.01, 0.02, 0.04 -> 3*0.01 = 0.03, 2*0.02 = 0.04, max(0.04, 1*0.04) = 0.04.
    assert holm([0.04, 0.01, 0.02]).tolist() == pytest.approx([0.04, 0.03, 0.04])
    # monotone: 4*0.01 = 0.04, then 3*0.011 = 0.033 is raised to 0.04; capped at 1.
    assert holm([0.011, 0.01, 0.5, 0.6]).tolist() == pytest.approx([0.04, 0.04, 1.0, 1.0])


def test_underline_uses_holm_over_the_row():
    alone = not_worse_than_best(table_of({("d", A): BASE, ("d", B): shifted(UP)}))
    assert alone.loc["d"].tolist() == [False, False]  # p = 2/64 < 0.05: B significantly worse
    # With C in the row, Holm: B 2 * 2/64 = 0.0625, C max(0.0625, 28/64): neither significant.
    row = not_worse_than_best(
        table_of({("d", A): BASE, ("d", B): shifted(UP), ("d", C): shifted(MIXED)})
    )
    assert row.loc["d"].tolist() == [False, True, True]  # the best itself is bold, not underlined


def test_average_ranks_average_ties_and_skip_incomplete_datasets():
    mean = pd.DataFrame(
        {A: [0.1, 0.3, 0.5], B: [0.2, 0.1, math.nan], C: [0.2, 0.2, 0.1]},
        index=["d1", "d2", "d3"],
    )
    # d1: 1, 2.5, 2.5; d2: 3, 1, 2; d3 has a missing cell and is left out.
    assert average_ranks(mean).tolist() == pytest.approx([2.0, 1.75, 2.25])


def test_wins_ties_losses_against_a_baseline():
    down = [-d for d in UP]
    table = table_of(
        {
            ("loss", A): BASE,
            ("loss", B): shifted(UP),
            ("win", A): BASE,
            ("win", B): shifted(down),
            ("tie", A): BASE,
            ("tie", B): shifted(MIXED),
            ("one pair", A): [0.1],
            ("one pair", B): [0.9],
        }
    )
    assert wins_ties_losses(table, A).loc[B].tolist() == [1, 2, 1]
    assert wins_ties_losses(table, B).loc[A].tolist() == [1, 2, 1]


def test_demsar_worked_example():
    """Demsar (2006), section 3.2.2 / Table 6: 14 data sets, 4 classifiers (C4.5 variants)."""
    ranks, n, k = [3.143, 2.000, 2.893, 1.964], 14, 4
    chi2 = friedman_chi2(ranks, n)
    assert chi2 == pytest.approx(9.28, abs=0.01)
    assert iman_davenport(chi2, n, k) == pytest.approx(3.69, abs=0.01)
    assert nemenyi_q(k) == pytest.approx(2.569, abs=0.001)
    assert nemenyi_cd(k, n) == pytest.approx(1.25, abs=0.01)
    # Best vs worst: 3.143 - 1.964 = 1.179 < CD, so no pair differs at alpha 0.05 (the paper
    # finds this one only at alpha 0.10, CD = 0.98): one group joins all four.
    assert nemenyi_cliques(pd.Series(ranks), nemenyi_cd(k, n)) == [(0, 3)]
    # CD 0.98: 2.893 - 1.964 = 0.929 joins the first three, 3.143 - 2.000 = 1.143 does not.
    assert nemenyi_cliques(pd.Series(ranks), 0.98) == [(0, 2), (2, 3)]
    assert nemenyi_cliques(pd.Series([4.0, 1.0, 2.0, 3.0]), 1.5) == [(0, 1), (1, 2), (2, 3)]


def test_friedman_on_data_agrees_with_the_rank_formula_without_ties():
    table = table_of(
        {
            ("d1", A): [0.1], ("d1", B): [0.2], ("d1", C): [0.3],
            ("d2", A): [0.1], ("d2", B): [0.3], ("d2", C): [0.2],
            ("d3", A): [0.2], ("d3", B): [0.1], ("d3", C): [0.3],
            ("d4", A): [0.1], ("d4", B): [0.2], ("d4", C): [0.3],
        }
    )  # fmt: skip
    result = friedman_nemenyi(table)
    # ranks A 1,1,2,1 -> 1.25; B 2,3,1,2 -> 2.0; C 3,2,3,3 -> 2.75.
    assert result.avg_ranks.tolist() == pytest.approx([1.25, 2.0, 2.75])
    # 12*4/(3*4) * (1.25^2 + 2^2 + 2.75^2 - 3*16/4) = 4 * 1.125 = 4.5.
    assert result.chi2 == pytest.approx(4.5)
    assert result.chi2 == pytest.approx(friedman_chi2([1.25, 2.0, 2.75], 4))
    assert result.iman_davenport == pytest.approx(3 * 4.5 / (4 * 2 - 4.5))
    assert result.cd == pytest.approx(nemenyi_q(3) * math.sqrt(3 * 4 / 24))
    assert friedman_nemenyi(table_of({("d1", A): [0.1], ("d1", B): [0.2]})) is None
