"""The corrected resampled t-test behind the verdicts (Nadeau and Bengio 2003) with its
error-rate variance floor and its least number of resamples, Holm, the ranking block, ranks and
Friedman/Nemenyi, against values computed by hand, scipy's paired t-test and studentized range,
and the worked example of Demsar (2006), JMLR 7, section 3.2.2."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import studentized_range, ttest_rel
from scipy.stats import t as student_t

from reports.figures import cd_diagram, nemenyi_cliques
from reports.render import WITHHELD, format_friedman_table
from reports.stats import (
    MIN_RESAMPLES,
    complete_means,
    corrected_resampled_t,
    error_rate_variance_floor,
    friedman_chi2,
    friedman_nemenyi,
    holm,
    iman_davenport,
    nemenyi_cd,
    nemenyi_q,
    paired_values,
    ranking_block,
    wilcoxon_p,
)
from reports.tables import TEST_ROWS, TEST_TRAIN_RATIO, split_sizes, summarize
from reports.verdicts import verdicts

A, B, C = ("a", "inhouse"), ("b", "xgboost"), ("c", "lightgbm")
BASE = [0.10, 0.20, 0.15, 0.30, 0.25, 0.12]
UP = [0.01, 0.02, 0.03, 0.04, 0.05, 0.06]  # distinct magnitudes: the exact null distribution
MIXED = [0.01, -0.02, 0.03, -0.04, 0.05, 0.06]
# twelve resamples (at least MIN_RESAMPLES): BASE twice, UP and MIXED twice
BASE12, UP12, MIXED12 = BASE * 2, UP * 2, MIXED * 2
HOLDOUT = 0.25 / 0.75  # n_test / n_train of a 25% holdout


def table_of(cells: dict, ratio: float = HOLDOUT, metric: str = "test_rmse",
             test_rows: float = 100.0) -> object:
    """summarize() of {(dataset, pair): values} of `metric`, value i belonging to seed i,
    split 0, every run with n_test / n_train = `ratio` (NaN: the runs did not say) and
    `test_rows` test rows."""
    rows = [
        (dataset, *pair, str(seed), 0, value, ratio, test_rows)
        for (dataset, pair), values in cells.items()
        for seed, value in enumerate(values)
    ]
    columns = ["dataset", "method", "engine", "seed", "split", "value", TEST_TRAIN_RATIO,
               TEST_ROWS]
    return summarize(pd.DataFrame(rows, columns=columns), metric)


def shifted(diffs: list[float], base: list[float] = BASE) -> list[float]:
    return [b + d for b, d in zip(base, diffs, strict=True)]


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


def test_corrected_resampled_t_by_hand_and_against_scipy_times_the_correction():
    """d = UP twice: mean 0.035, s^2 = 35e-4 / 11, J = 12, n_test/n_train = 1/3:
    t = 0.035 / sqrt((1/12 + 1/3) s^2); scipy's paired t is mean / sqrt(s^2 / J), so the
    correction multiplies it by sqrt((1/J) / (1/J + n_test/n_train))."""
    shifted_up, base = np.array(shifted(UP12, BASE12)), np.array(BASE12)
    statistic, p = corrected_resampled_t(shifted_up, base, HOLDOUT)
    expected = 0.035 / math.sqrt((1 / 12 + 1 / 3) * 35e-4 / 11)
    assert statistic == pytest.approx(expected)
    assert p == pytest.approx(2 * student_t.sf(expected, 11))
    plain = ttest_rel(shifted_up, base)
    assert statistic == pytest.approx(plain.statistic * math.sqrt((1 / 12) / (1 / 12 + HOLDOUT)))
    assert plain.pvalue < p  # the uncorrected test overstates the evidence
    down, _ = corrected_resampled_t(base, shifted_up, HOLDOUT)
    assert down == pytest.approx(-expected)
    assert corrected_resampled_t(base, base, HOLDOUT) == (0.0, 1.0)
    assert math.isnan(corrected_resampled_t(shifted_up, base, math.nan)[1])  # sizes unknown


def test_fewer_resamples_than_the_least_are_untested():
    values = np.arange(MIN_RESAMPLES, dtype=float)
    assert not math.isnan(corrected_resampled_t(values + 1, values * 0.9, HOLDOUT)[1])
    assert math.isnan(corrected_resampled_t(values[1:] + 1, values[1:] * 0.9, HOLDOUT)[1])


def test_zero_variance_is_never_p_zero():
    """A constant difference: untested for a continuous metric; for an error rate the floor
    (|d| - d^2) / n_test takes the variance's place: d = 1/100 on 12 resamples of 100 test rows,
    t = 0.01 / sqrt((1/12 + 1/3) 0.0099 / 100) = 1.55, p = 0.15."""
    whole = np.linspace(0.1, 0.3, 12)
    assert math.isnan(corrected_resampled_t(whole + 0.01, whole, HOLDOUT)[1])
    floor = error_rate_variance_floor(0.01, 100)
    assert floor == pytest.approx(0.0099 / 100)
    t, p = corrected_resampled_t(whole + 0.01, whole, HOLDOUT, error_rate_rows=100)
    assert t == pytest.approx(0.01 / math.sqrt((1 / 12 + 1 / 3) * floor))
    assert p == pytest.approx(2 * student_t.sf(t, 11)) and p > 0.1
    assert math.isnan(corrected_resampled_t(whole + 0.01, whole, HOLDOUT, math.nan)[1])
    # the same predictions summed in another order: differences of float rounding of values
    # near 55 are no difference (p = 1), not a significant one
    rmse = 55 + np.random.RandomState(1).normal(0, 3, 15)
    reordered = rmse * (1 + np.random.RandomState(2).randint(1, 4, 15) * 2.2e-16)
    assert corrected_resampled_t(reordered, rmse, HOLDOUT) == (0.0, 1.0)
    # a sample variance above the floor is kept as it is
    noisy = whole + np.resize([0.0, 0.2], 12)
    assert corrected_resampled_t(noisy, whole, HOLDOUT, 100)[0] == pytest.approx(
        corrected_resampled_t(noisy, whole, HOLDOUT)[0])


@pytest.mark.parametrize(
    ("kind", "test_size", "n_splits", "rows", "cap", "test_rows", "ratio"),
    [
        ("kfold", None, "5", "150", None, 30, 1 / 4),  # 30 test, 120 train
        ("kfold", None, "5", None, None, math.nan, 1 / 4),
        ("holdout", "0.25", "5", "150", None, 38, 38 / 112),  # ceil(37.5) = 38 test rows
        ("holdout", "0.25", "5", None, None, math.nan, 1 / 3),
        ("holdout", "50", "5", "150", None, 50, 50 / 100),  # a number of test rows
        ("holdout", "0.25", "5", "150", "60", 38, 38 / 60),  # the training rows capped
        ("holdout", "0.25", "5", None, "60", math.nan, math.nan),  # capped, rows unknown
        (None, None, None, "150", None, math.nan, math.nan),  # a run without its eval params
    ],
)
def test_split_sizes_of_a_run(kind, test_size, n_splits, rows, cap, test_rows, ratio):
    assert split_sizes(kind, test_size, n_splits, rows, cap) == pytest.approx(
        (test_rows, ratio), nan_ok=True)


def test_holm_step_down():
    # sorted 0.01, 0.02, 0.04 -> 3*0.01 = 0.03, 2*0.02 = 0.04, max(0.04, 1*0.04) = 0.04.
    assert holm([0.04, 0.01, 0.02]).tolist() == pytest.approx([0.04, 0.03, 0.04])
    # monotone: 4*0.01 = 0.04, then 3*0.011 = 0.033 is raised to 0.04; capped at 1.
    assert holm([0.011, 0.01, 0.5, 0.6]).tolist() == pytest.approx([0.04, 0.04, 1.0, 1.0])
    # an untested comparison stays untested and does not count: m = 2
    assert holm([0.01, math.nan, 0.04]).tolist() == pytest.approx([0.02, math.nan, 0.04],
                                                                  nan_ok=True)


def test_verdicts_use_the_corrected_test_and_holm_over_the_row():
    """B = A + UP (twelve resamples): corrected p = 0.011 alone, worse; with C = A + MIXED in
    the row (p = 0.49), Holm doubles B's p to 0.022: still worse, C a tie; with n_test/n_train
    = 2 the variance is inflated enough for B to tie; unknown split sizes: untested."""
    alone = verdicts(table_of({("d", A): BASE12, ("d", B): shifted(UP12, BASE12)}))
    assert alone["verdict"].tolist() == ["best", "worse"]
    _, p = corrected_resampled_t(np.array(shifted(UP12, BASE12)), np.array(BASE12), HOLDOUT)
    assert alone["p"][1] == pytest.approx(p)
    cells = {("d", A): BASE12, ("d", B): shifted(UP12, BASE12),
             ("d", C): shifted(MIXED12, BASE12)}
    row = verdicts(table_of(cells))
    assert row["verdict"].tolist() == ["best", "worse", "tie"]
    assert row["p"][1] == pytest.approx(2 * p)
    assert verdicts(table_of(cells, ratio=2.0))["verdict"].tolist() == ["best", "tie", "tie"]
    untested = verdicts(table_of(cells, ratio=math.nan))
    assert untested["verdict"].tolist() == ["best", "untested", "untested"]


def test_bold_only_among_cells_with_every_resample():
    """C's mean is the lowest but it lacks a resample: B is best, C untested and out of the
    ranks (complete_means); A, one row of 100 worse on every resample, ties (p = 0.15)."""
    table = table_of({("d", A): BASE12, ("d", B): [v - 0.01 for v in BASE12],
                      ("d", C): [v - 0.05 for v in BASE12[:-1]]}, metric="test_error")
    assert verdicts(table)["verdict"].tolist() == ["tie", "best", "untested"]
    assert complete_means(table).loc["d"].isna().tolist() == [False, False, True]


def test_ranking_block_drops_the_columns_present_on_fewest_datasets_first():
    """C ran on 1 of 4 datasets (a reference that cannot run there): dropping it leaves 4
    complete datasets x 2 columns (8 cells) instead of 1 x 3; B missing on d4 too: 3 x 2 with
    A, B (6) beats 4 x 1 (a single column is no ranking)."""
    mean = pd.DataFrame({A: [0.1, 0.2, 0.3, 0.4], B: [0.2, 0.1, 0.4, 0.3],
                         C: [0.3, math.nan, math.nan, math.nan]}, index=["d1", "d2", "d3", "d4"])
    assert ranking_block(mean).shape == (4, 2)
    assert list(ranking_block(mean).columns) == [A, B]
    mean.loc["d4", B] = math.nan
    assert ranking_block(mean).index.tolist() == ["d1", "d2", "d3"]


def formula_cd(k: int, n_datasets: int, alpha: float) -> float:
    """CD = q_alpha sqrt(k(k+1) / (6N)), q_alpha the studentized range quantile (k groups,
    infinite df) over sqrt(2), from scipy directly."""
    q = studentized_range.ppf(1 - alpha, k, np.inf) / math.sqrt(2)
    return q * math.sqrt(k * (k + 1) / (6 * n_datasets))


def joined(avg_ranks: pd.Series, cd: float) -> list[set[str]]:
    """The groups of `nemenyi_cliques`, as sets of the names of `avg_ranks`."""
    names = avg_ranks.sort_values().index
    return [set(names[first : last + 1]) for first, last in nemenyi_cliques(avg_ranks, cd)]


# Demsar (2006), JMLR 7, Table 6: average ranks of 4 C4.5 variants over N = 14 data sets.
DEMSAR_RANKS = pd.Series({"C4.5": 3.143, "C4.5+m": 2.000, "C4.5+cf": 2.893, "C4.5+m+cf": 1.964})


def test_demsar_example_friedman_and_iman_davenport_statistics():
    """chi2_F = 12N/(k(k+1)) [sum R_j^2 - k(k+1)^2/4] = 9.28, F_F = 13 chi2_F / (14*3 - chi2_F)
    = 3.69 for k = 4, N = 14: the values printed in the paper."""
    chi2 = friedman_chi2(DEMSAR_RANKS.to_numpy(), 14)
    assert chi2 == pytest.approx(9.28, abs=0.01)
    assert iman_davenport(chi2, 14, 4) == pytest.approx(3.69, abs=0.01)


@pytest.mark.parametrize(
    ("alpha", "q", "cd"),
    [(0.05, 2.569, 1.254), (0.10, 2.291, 1.118)],
)
def test_nemenyi_cd_for_four_methods_on_fourteen_datasets(alpha, q, cd):
    """q_alpha (k = 4) = 2.569 at 0.05 and 2.291 at 0.10; CD = q_alpha sqrt(4*5 / (6*14))
    = q_alpha * 0.4880 = 1.254 and 1.118 (1.25 and 1.12 to the paper's two decimals)."""
    assert nemenyi_q(4, alpha) == pytest.approx(q, abs=5e-4)
    assert formula_cd(4, 14, alpha) == pytest.approx(cd, abs=5e-4)
    assert nemenyi_cd(4, 14, alpha) == pytest.approx(formula_cd(4, 14, alpha), rel=1e-12)


def test_demsar_example_no_difference_at_005_two_groups_at_010():
    """At alpha 0.05 the largest gap, C4.5 - C4.5+m+cf = 3.143 - 1.964 = 1.179, is below
    CD = 1.254: one bar joins all four. At alpha 0.10, CD = 1.118: C4.5 differs from C4.5+m+cf
    (1.179) and from C4.5+m (3.143 - 2.000 = 1.143), but not from C4.5+cf (0.250); C4.5+cf is
    within CD of both ends (2.893 - 1.964 = 0.929), so it sits in both groups."""
    assert joined(DEMSAR_RANKS, formula_cd(4, 14, 0.05)) == [set(DEMSAR_RANKS.index)]
    assert joined(DEMSAR_RANKS, formula_cd(4, 14, 0.10)) == [
        {"C4.5+m+cf", "C4.5+m", "C4.5+cf"},
        {"C4.5+cf", "C4.5"},
    ]


def test_cliques_are_maximal_runs_within_strictly_less_than_cd():
    """Positions in rank order, whatever the input order; a run contained in a longer one is
    left out; a gap equal to the CD is a significant difference (|R_i - R_j| >= CD)."""
    assert nemenyi_cliques(pd.Series([4.0, 1.0, 2.0, 3.0]), 1.5) == [(0, 1), (1, 2), (2, 3)]
    assert nemenyi_cliques(pd.Series([1.0, 1.2, 1.4, 3.0]), 0.5) == [(0, 2)]
    assert nemenyi_cliques(pd.Series([1.0, 2.0, 3.0]), 1.0) == []


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


def test_fewer_than_five_datasets_withhold_the_friedman_claim_and_the_cd_diagram():
    """Columns ranked A < B < C on every dataset: over 4 datasets the table shows k and N only
    and no CD diagram is drawn; over 5 the test and its diagram are given."""
    cells = {(f"d{i}", pair): [0.1 * rank + 0.01 * i]
             for i in range(5) for rank, pair in enumerate((A, B, C))}  # fmt: skip
    four = friedman_nemenyi(table_of({key: v for key, v in cells.items() if key[0] != "d4"}))
    five = friedman_nemenyi(table_of(cells))
    assert (four.n_datasets, four.claims, five.n_datasets, five.claims) == (4, False, 5, True)
    text = format_friedman_table([four, five]).cells
    assert text.iloc[0].tolist() == ["3", "4", *[WITHHELD] * 4]
    # 5 datasets, ranks 1, 2, 3: chi2 = 12*5/(3*4) * (1 + 4 + 9 - 12) = 10
    assert text.iloc[1].tolist()[:3] == ["3", "5", "10"]
    with pytest.raises(ValueError, match="4 datasets, fewer than 5"):
        cd_diagram(four)
    assert cd_diagram(five).axes[0].get_title().endswith("N = 5)")
