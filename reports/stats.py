"""Significance tests between the columns (method, engine[, encoding]) of a metric table: within
one dataset, Nadeau and Bengio's (2003) corrected resampled t-test on the (seed, split) pairs, whose
training sets overlap; across datasets, the dataset as the unit (Demsar 2006, JMLR 7)."""

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import friedmanchisquare, studentized_range, wilcoxon
from scipy.stats import t as student_t

from reports.tables import TEST_TRAIN_RATIO, MetricTable, column_keys

ALPHA = 0.05
PAIRING_KEYS = ["seed", "split"]
MIN_DATASETS = 5  # fewer datasets: an across-dataset ranking test (Friedman, Nemenyi) is withheld


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


def paired_split_ratio(values: pd.DataFrame, dataset: str, columns: list[tuple[str, ...]],
                       keys: list[str] | None = None) -> float:
    """The mean n_test / n_train of the rows of `columns` on `dataset` (column TEST_TRAIN_RATIO,
    tables.split_ratios); NaN when the runs did not say their split sizes."""
    if TEST_TRAIN_RATIO not in values.columns:
        return math.nan
    keys = keys or column_keys(values)
    on_dataset = values[values["dataset"] == dataset]
    chosen = pd.concat([on_dataset[(on_dataset[keys] == list(c)).all(axis=1)] for c in columns])
    return float(chosen[TEST_TRAIN_RATIO].mean())


def corrected_resampled_t(
    first: np.ndarray, second: np.ndarray, ratio: float
) -> tuple[float, float]:
    """Nadeau and Bengio's (2003) corrected resampled t-test of the J paired differences
    d = first - second over resamples with overlapping training sets:
    t = mean(d) / sqrt((1/J + n_test/n_train) s^2), s^2 the sample variance (ddof 1), two-sided
    p from Student's t with J - 1 df (for repeated k-fold: Bouckaert and Frank 2004).
    Returns (t, p); p is NaN (no test) with fewer than 2 pairs or an unknown `ratio`; equal
    non-zero differences give p = 0, all-zero differences p = 1."""
    diff = np.asarray(first, float) - np.asarray(second, float)
    n_pairs = diff.size
    if n_pairs < 2 or math.isnan(ratio):
        return math.nan, math.nan
    mean, variance = diff.mean(), diff.var(ddof=1)
    if variance == 0:
        return (0.0, 1.0) if mean == 0 else (math.copysign(math.inf, mean), 0.0)
    statistic = mean / math.sqrt((1 / n_pairs + ratio) * variance)
    return float(statistic), float(2 * student_t.sf(abs(statistic), n_pairs - 1))


def paired_p(values: pd.DataFrame, dataset: str, first: tuple[str, ...],
             second: tuple[str, ...], keys: list[str] | None = None) -> float:
    """Two-sided p of `corrected_resampled_t` on the (seed, split) pairs of two columns of
    `dataset` (`paired_values`), with their runs' `paired_split_ratio`; NaN: no test."""
    pairs = paired_values(values, dataset, first, second, keys)
    ratio = paired_split_ratio(values, dataset, [first, second], keys)
    return corrected_resampled_t(*pairs, ratio)[1]


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


def _adjusted_against(
    table: MetricTable, dataset: str, reference: tuple[str, ...]
) -> dict[tuple[str, ...], float]:
    """Holm-adjusted `paired_p` (corrected resampled t) of every other non-empty column of
    `dataset`'s row against `reference` (the adjustment runs over the tested comparisons of that
    row; NaN: untested)."""
    means = table.mean.loc[dataset]
    others = [pair for pair in means.index if pair != reference and not math.isnan(means[pair])]
    raw = [paired_p(table.values, dataset, pair, reference, table.keys) for pair in others]
    return dict(zip(others, holm(raw), strict=True)) if others else {}


def not_worse_than_best(table: MetricTable, alpha: float = ALPHA) -> pd.DataFrame:
    """True at cells that are not the best of their row but not significantly different from it:
    Holm-adjusted two-sided corrected resampled t-test p >= alpha against the best column (the
    first of a tie), pairing by (seed, split) as in `paired_values`; an untested cell (`paired_p`
    NaN) is not marked."""
    marks = pd.DataFrame(False, index=table.mean.index, columns=table.mean.columns)
    for dataset, means in table.mean.iterrows():
        if means.isna().all():
            continue
        best = means.idxmin()
        for pair, p in _adjusted_against(table, dataset, best).items():
            marks.loc[dataset, pair] = p >= alpha and not table.best.loc[dataset, pair]
    return marks


def average_ranks(mean: pd.DataFrame) -> pd.Series:
    """Mean over the datasets with a value in every column of the per-dataset rank (1 = lowest
    mean, ties get the average of the ranks they span), as in Demsar (2006), section 3.2.2."""
    complete = mean.dropna()
    return complete.rank(axis=1, method="average").mean(axis=0)


OUTCOMES = ("wins", "ties", "losses", "untested")


def wins_ties_losses(
    table: MetricTable, baseline: tuple[str, ...], alpha: float = ALPHA
) -> pd.DataFrame:
    """Per column other than `baseline`: the datasets where it is significantly better (win),
    not significantly different (tie) or significantly worse (loss) than `baseline`, by the
    Holm-adjusted corrected resampled t-test of `not_worse_than_best` with `baseline` as the
    reference, or untested (`paired_p` NaN)."""
    counts = {pair: dict.fromkeys(OUTCOMES, 0) for pair in table.mean.columns}
    for dataset, means in table.mean.iterrows():
        if math.isnan(means[baseline]):
            continue
        for pair, p in _adjusted_against(table, dataset, baseline).items():
            if math.isnan(p):
                outcome = "untested"
            elif p >= alpha:
                outcome = "ties"
            else:
                outcome = "wins" if means[pair] < means[baseline] else "losses"
            counts[pair][outcome] += 1
    del counts[baseline]
    result = pd.DataFrame.from_dict(counts, orient="index", columns=list(OUTCOMES))
    result.index = pd.MultiIndex.from_tuples(result.index, names=table.keys)
    return result


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
    """Friedman test over the complete datasets of a table and the Nemenyi critical difference."""

    metric: str
    n_datasets: int
    avg_ranks: pd.Series
    chi2: float
    pvalue: float
    iman_davenport: float
    cd: float
    alpha: float = ALPHA

    @property
    def claims(self) -> bool:
        """Whether the test may claim anything: at least MIN_DATASETS datasets (with fewer, the
        chi-squared approximation and the Nemenyi CD say nothing; Demsar 2006, section 3.2.2)."""
        return self.n_datasets >= MIN_DATASETS


def friedman_nemenyi(table: MetricTable, alpha: float = ALPHA) -> FriedmanResult | None:
    """scipy's Friedman test (tie-corrected) on the per-dataset means of the datasets with every
    column present, with the Nemenyi CD; None with fewer than 3 columns or 2 such datasets."""
    complete = table.mean.dropna()
    k, n = complete.shape[1], complete.shape[0]
    if k < 3 or n < 2:
        return None
    test = friedmanchisquare(*(complete[pair].to_numpy() for pair in complete.columns))
    denominator = n * (k - 1) - test.statistic
    return FriedmanResult(
        metric=table.metric,
        n_datasets=n,
        avg_ranks=average_ranks(table.mean),
        chi2=float(test.statistic),
        pvalue=float(test.pvalue),
        iman_davenport=iman_davenport(test.statistic, n, k) if denominator > 0 else math.inf,
        cd=nemenyi_cd(k, n, alpha),
        alpha=alpha,
    )
