"""Significance tests between the columns (method, engine[, encoding]) of a metric table (Demsar
2006, JMLR 7)."""

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import friedmanchisquare, studentized_range, wilcoxon

from reports.tables import MetricTable, column_keys

ALPHA = 0.05
PAIRING_KEYS = ["seed", "split"]


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


def wilcoxon_p(first: np.ndarray, second: np.ndarray) -> float:
    """Two-sided p-value of the Wilcoxon signed-rank test on the paired differences; 1.0 (not
    significant) with fewer than 2 pairs or when every difference is zero."""
    diff = np.asarray(first, float) - np.asarray(second, float)
    if diff.size < 2 or not np.any(diff != 0):
        return 1.0
    return float(wilcoxon(diff).pvalue)


def holm(pvalues: list[float]) -> np.ndarray:
    """Holm step-down adjusted p-values: p_(i) -> max_{j<=i} min(1, (m - j + 1) p_(j))."""
    p = np.asarray(pvalues, float)
    order = np.argsort(p)
    m = p.size
    stepped = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(stepped)
    return adjusted


def _adjusted_against(
    table: MetricTable, dataset: str, reference: tuple[str, ...]
) -> dict[tuple[str, ...], float]:
    """Holm-adjusted Wilcoxon p-values of every other non-empty column of `dataset`'s row against
    `reference` (the adjustment runs over the comparisons of that row)."""
    means = table.mean.loc[dataset]
    others = [pair for pair in means.index if pair != reference and not math.isnan(means[pair])]
    raw = [wilcoxon_p(*paired_values(table.values, dataset, pair, reference, table.keys))
           for pair in others]  # fmt: skip
    return dict(zip(others, holm(raw), strict=True)) if others else {}


def not_worse_than_best(table: MetricTable, alpha: float = ALPHA) -> pd.DataFrame:
    """True at cells that are not the best of their row but not significantly different from it:
    Holm-adjusted two-sided Wilcoxon p >= alpha against the best column (the first of a tie),
    pairing by (seed, split) as in `paired_values`."""
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


def wins_ties_losses(
    table: MetricTable, baseline: tuple[str, ...], alpha: float = ALPHA
) -> pd.DataFrame:
    """Per column other than `baseline`: the datasets where it is significantly better (win),
    not significantly different (tie) or significantly worse (loss) than `baseline`, by the
    Holm-adjusted Wilcoxon test of `not_worse_than_best` with `baseline` as the reference."""
    counts = {pair: {"wins": 0, "ties": 0, "losses": 0} for pair in table.mean.columns}
    for dataset, means in table.mean.iterrows():
        if math.isnan(means[baseline]):
            continue
        for pair, p in _adjusted_against(table, dataset, baseline).items():
            if p >= alpha:
                outcome = "ties"
            else:
                outcome = "wins" if means[pair] < means[baseline] else "losses"
            counts[pair][outcome] += 1
    del counts[baseline]
    result = pd.DataFrame.from_dict(counts, orient="index", columns=["wins", "ties", "losses"])
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
