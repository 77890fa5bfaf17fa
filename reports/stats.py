"""Significance tests between the columns (method, engine[, encoding]) of a metric table: within
one dataset, Nadeau and Bengio's (2003) corrected resampled t-test on the (seed, split) pairs, whose
training sets overlap (Bouckaert and Frank 2004 for repeated k-fold), with the variance of an error
rate's difference bounded below by its test rows' sampling; across datasets, the dataset as the
unit (Demsar 2006, JMLR 7; Garcia and Herrera 2008)."""

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import friedmanchisquare, studentized_range, wilcoxon
from scipy.stats import t as student_t

from reports.tables import ERROR_RATES, TEST_ROWS, TEST_TRAIN_RATIO, MetricTable, column_keys

ALPHA = 0.05
PAIRING_KEYS = ["seed", "split"]
MIN_DATASETS = 5  # fewer datasets: an across-dataset ranking test (Friedman, Nemenyi) is withheld
# fewer paired resamples: no within-dataset test (untested). With J - 1 degrees of freedom and the
# variance inflated by n_test / n_train, a test on fewer cannot tell a large noisy difference from
# none (J = 3 of a 25% holdout: t_{2, 0.975} = 4.3 times a standard error of 0.82 s), so a "tie"
# there would only restate the missing resamples; 10 is Dietterich's 5x2cv count of values.
MIN_RESAMPLES = 10
ROUNDING = 1e-9  # differences equal to this precision relative to the values are equal


def paired_values(
    values: pd.DataFrame,
    dataset: str,
    first: tuple[str, ...],
    second: tuple[str, ...],
    keys: list[str] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The values of two columns (tuples of `keys`, default `column_keys(values)`) on `dataset`,
    matched by (seed, split).

    Pairing rule: a value of `first` is paired with the value of `second` of the same seed tag and
    split index (the same training/test split); (seed, split) keys present in only one of the two
    are dropped."""
    on_dataset = values[values["dataset"] == dataset]
    keys = keys or column_keys(values)

    def column(pair: tuple[str, ...]) -> pd.Series:
        rows = on_dataset[(on_dataset[keys] == list(pair)).all(axis=1)]
        return rows.set_index(PAIRING_KEYS)["value"]

    joined = pd.concat([column(first), column(second)], axis=1, join="inner")
    return joined.iloc[:, 0].to_numpy(float), joined.iloc[:, 1].to_numpy(float)


def paired_split_sizes(values: pd.DataFrame, dataset: str, columns: list[tuple[str, ...]],
                       keys: list[str] | None = None) -> tuple[float, float]:
    """The mean n_test and mean n_test / n_train of the rows of `columns` on `dataset` (columns
    TEST_ROWS and TEST_TRAIN_RATIO, tables.split_sizes_of_runs); NaN when the runs did not say."""
    keys = keys or column_keys(values)
    on_dataset = values[values["dataset"] == dataset]
    chosen = pd.concat([on_dataset[(on_dataset[keys] == list(c)).all(axis=1)] for c in columns])
    return tuple(float(chosen[name].mean()) if name in chosen.columns else math.nan
                 for name in (TEST_ROWS, TEST_TRAIN_RATIO))  # fmt: skip


def error_rate_variance_floor(mean: float, test_rows: float) -> float:
    """The least variance of one resample's difference of two error rates on n_test rows whose
    mean difference is d: the paired (McNemar) variance (q - d^2) / n_test of a difference with
    discordant share q, at its least q = |d|: (|d| - d^2) / n_test. A resampled sample variance
    below it (0 when every seed is one row worse) is a chance of the discrete values."""
    return (abs(mean) - mean**2) / test_rows


def corrected_resampled_t(first: np.ndarray, second: np.ndarray, ratio: float,
                          error_rate_rows: float | None = None) -> tuple[float, float]:
    """Nadeau and Bengio's (2003) corrected resampled t-test of the J paired differences
    d = first - second over resamples with overlapping training sets:
    t = mean(d) / sqrt((1/J + n_test/n_train) s^2), two-sided p from Student's t with J - 1 df
    (for repeated k-fold: Bouckaert and Frank 2004). For error rates on `error_rate_rows` test
    rows, s^2 is at least `error_rate_variance_floor`. Returns (t, p); p is NaN (untested) with
    fewer than MIN_RESAMPLES pairs, an unknown `ratio` or number of test rows, or a zero variance
    beside a non-zero mean (never p = 0); all-zero differences give p = 1."""
    first, second = np.asarray(first, float), np.asarray(second, float)
    diff = first - second
    n_pairs = diff.size
    if n_pairs < MIN_RESAMPLES or math.isnan(ratio):
        return math.nan, math.nan
    # differences within float rounding of the values themselves are equal (3/45 - 2/45 against
    # 4/45 - 3/45), and zero where they are within rounding of zero (two fits that agree)
    rounding = ROUNDING * max(np.abs(first).max(), np.abs(second).max())
    diff = np.where(np.abs(diff) <= rounding, 0.0, diff)
    mean, variance = diff.mean(), diff.var(ddof=1)
    if np.abs(diff - mean).max() <= rounding:
        variance = 0.0
    if error_rate_rows is not None:
        if math.isnan(error_rate_rows):
            return math.nan, math.nan
        variance = max(variance, error_rate_variance_floor(mean, error_rate_rows))
    if variance == 0:
        return (0.0, 1.0) if mean == 0 else (math.nan, math.nan)
    statistic = mean / math.sqrt((1 / n_pairs + ratio) * variance)
    return float(statistic), float(2 * student_t.sf(abs(statistic), n_pairs - 1))


def paired_p(table: MetricTable, dataset: str, first: tuple[str, ...],
             second: tuple[str, ...]) -> float:
    """Two-sided p of `corrected_resampled_t` on the (seed, split) pairs of two columns of
    `dataset` (`paired_values`), with their runs' `paired_split_sizes` (the error-rate floor for
    the metrics of ERROR_RATES); NaN: untested."""
    pairs = paired_values(table.values, dataset, first, second, table.keys)
    test_rows, ratio = paired_split_sizes(table.values, dataset, [first, second], table.keys)
    rows = test_rows if table.metric in ERROR_RATES else None
    return corrected_resampled_t(*pairs, ratio, rows)[1]


def smallest_wilcoxon_p(n_datasets: int) -> float:
    """The smallest two-sided exact Wilcoxon signed-rank p on n pairs: 2 / 2^n (every sign
    alike), 0.0625 for 5: fewer than 6 datasets can never reach alpha 0.05."""
    return 2 / 2**n_datasets


def wilcoxon_p(first: np.ndarray, second: np.ndarray) -> float:
    """Two-sided p-value of the Wilcoxon signed-rank test on the paired differences; 1.0 (not
    significant) with fewer than 2 pairs or when every difference is zero."""
    diff = np.asarray(first, float) - np.asarray(second, float)
    if diff.size < 2 or not np.any(diff != 0):
        return 1.0
    return float(wilcoxon(diff).pvalue)


def holm(pvalues: list[float]) -> np.ndarray:
    """Holm step-down adjusted p-values: p_(i) -> max_{j<=i} min(1, (m - j + 1) p_(j)), over the
    m tested comparisons; an untested one (NaN) stays NaN and does not count in m."""
    p = np.asarray(pvalues, float)
    adjusted = np.full(p.size, np.nan)
    tested = np.flatnonzero(~np.isnan(p))
    order = tested[np.argsort(p[tested])]
    m = order.size
    stepped = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted[order] = np.maximum.accumulate(stepped) if m else stepped
    return adjusted


def resample_counts(table: MetricTable) -> tuple[pd.DataFrame, pd.Series]:
    """Per cell its number of values, and per dataset (row) the number of distinct (seed, split)
    resamples of all its cells: a cell with fewer than its row's lacks a resample (a failed,
    missing or unfinished run)."""
    resamples = table.values.drop_duplicates(["dataset", *PAIRING_KEYS]).groupby("dataset").size()
    return table.count, resamples.reindex(table.mean.index).fillna(0).astype(int)


def complete_means(table: MetricTable) -> pd.DataFrame:
    """The table's means where a cell has every resample of its row (`resample_counts`), NaN
    elsewhere: a mean over fewer values is never ranked beside the others."""
    count, resamples = resample_counts(table)
    return table.mean.where(count.eq(resamples, axis=0) & count.gt(0))


def ranking_block(mean: pd.DataFrame) -> pd.DataFrame:
    """The datasets x columns of `mean` that ranks and the Friedman test use: the rows complete
    in the chosen columns, the columns chosen by dropping those present on the fewest datasets
    first (a reference that cannot run a method on some data), one at a time, keeping the block
    of most cells (N datasets x k columns, at least 2 columns; a tie keeps more columns)."""
    order = mean.notna().sum().sort_values(kind="stable").index  # fewest datasets first
    best = mean.iloc[:0, :0]
    for dropped in range(max(len(order) - 1, 1)):
        block = mean[order[dropped:]].dropna()
        if block.size > best.size:
            best = block
    return best[[column for column in mean.columns if column in best.columns]]


def average_ranks(mean: pd.DataFrame) -> pd.Series:
    """Mean over the rows of `mean` (every cell present) of the per-dataset rank (1 = lowest
    mean, ties get the average of the ranks they span), as in Demsar (2006), section 3.2.2."""
    return mean.rank(axis=1, method="average").mean(axis=0)


def friedman_chi2(avg_ranks: np.ndarray, n_datasets: int) -> float:
    """Friedman statistic from average ranks R_j: 12N/(k(k+1)) [sum R_j^2 - k(k+1)^2/4]."""
    ranks = np.asarray(avg_ranks, float)
    k = ranks.size
    return 12 * n_datasets / (k * (k + 1)) * (np.sum(ranks**2) - k * (k + 1) ** 2 / 4)


def iman_davenport(chi2: float, n_datasets: int, k: int) -> float:
    """Iman-Davenport F_F = (N - 1) chi2_F / (N (k - 1) - chi2_F), F with (k-1, (k-1)(N-1)) df."""
    return (n_datasets - 1) * chi2 / (n_datasets * (k - 1) - chi2)


def nemenyi_q(k: int, alpha: float = ALPHA) -> float:
    """Critical value q_alpha of the Nemenyi test: studentized range quantile (k groups, infinite
    df) divided by sqrt(2) (Demsar 2006, Table 5a)."""
    return float(studentized_range.ppf(1 - alpha, k, np.inf) / math.sqrt(2))


def nemenyi_cd(k: int, n_datasets: int, alpha: float = ALPHA) -> float:
    """Critical difference CD = q_alpha sqrt(k(k+1) / (6N)) (Demsar 2006, section 3.2.2)."""
    return nemenyi_q(k, alpha) * math.sqrt(k * (k + 1) / (6 * n_datasets))


@dataclass(frozen=True)
class FriedmanResult:
    """Friedman test over the datasets x columns of a table's `ranking_block` and the Nemenyi
    critical difference; `left_out` the table's columns outside the block."""

    metric: str
    n_datasets: int
    avg_ranks: pd.Series
    chi2: float
    pvalue: float
    iman_davenport: float
    cd: float
    left_out: tuple = ()
    alpha: float = ALPHA

    @property
    def claims(self) -> bool:
        """Whether the test may claim anything: at least MIN_DATASETS datasets (with fewer, the
        chi-squared approximation and the Nemenyi CD say nothing; Demsar 2006, section 3.2.2)."""
        return self.n_datasets >= MIN_DATASETS


def friedman_nemenyi(table: MetricTable, alpha: float = ALPHA) -> FriedmanResult | None:
    """scipy's Friedman test (tie-corrected) on the per-dataset means of the table's
    `ranking_block` (of its `complete_means`), with the Nemenyi CD; None with fewer than 3
    columns or 2 datasets there."""
    block = ranking_block(complete_means(table))
    k, n = block.shape[1], block.shape[0]
    if k < 3 or n < 2:
        return None
    test = friedmanchisquare(*(block[pair].to_numpy() for pair in block.columns))
    denominator = n * (k - 1) - test.statistic
    return FriedmanResult(
        metric=table.metric,
        n_datasets=n,
        avg_ranks=average_ranks(block),
        chi2=float(test.statistic),
        pvalue=float(test.pvalue),
        iman_davenport=iman_davenport(test.statistic, n, k) if denominator > 0 else math.inf,
        cd=nemenyi_cd(k, n, alpha),
        left_out=tuple(c for c in table.mean.columns if c not in block.columns),
        alpha=alpha,
    )
