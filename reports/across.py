"""Across datasets, every column against a baseline column, the dataset as the unit (its mean
over resamples, `stats.complete_means`): the Wilcoxon signed-rank test, Holm-adjusted over the
columns (Demsar 2006, section 3.1.3; Garcia and Herrera 2008), and the Bayesian signed-rank test
with a region of practical equivalence (Benavoli, Corani, Demsar and Zaffalon 2017, "Time for a
change", JMLR 18, section 5; the `baycomp` package)."""

import math

import numpy as np
import pandas as pd
from baycomp import SignedRankTest

from reports.stats import ALPHA, MIN_DATASETS, holm, smallest_wilcoxon_p, wilcoxon_p
from reports.tables import ERROR_RATES, MetricTable

# The region of practical equivalence: an error rate within 0.01 of the baseline's (one point of
# accuracy, Benavoli et al. 2017's choice), another metric within 1% of it (its log ratio within
# log 1.01: RMSE and log-loss have each dataset's own scale).
ROPE = {"absolute": 0.01, "relative": math.log(1.01)}
BAYES_SAMPLES = 20000  # Monte Carlo draws of the Dirichlet process posterior (seeded)
ACROSS_COLUMNS = ["datasets", "median_difference", "p", "p_holm", "p_better", "p_rope",
                  "p_worse"]  # fmt: skip


def scale(metric: str) -> str:
    """`absolute` for the error rates (ERROR_RATES), `relative` for the other metrics."""
    return "absolute" if metric in ERROR_RATES else "relative"


def differences(metric: str, column: pd.Series, baseline: pd.Series) -> np.ndarray:
    """Per dataset the column's difference from the baseline on the metric's `scale`:
    column - baseline for error rates, log(column / baseline) for the others (> 0: worse)."""
    if scale(metric) == "absolute":
        return (column - baseline).to_numpy(float)
    return np.log(column.to_numpy(float) / baseline.to_numpy(float))


def bayesian_signed_rank(diff: np.ndarray, rope: float) -> tuple[float, float, float]:
    """(P(better), P(practically equivalent), P(worse)) of the column against the baseline:
    baycomp's Bayesian signed-rank test (prior weight 0.5 at zero difference) on the per-dataset
    differences `diff` (> 0: the column worse), rope `rope`, seeded draws."""
    probabilities = SignedRankTest.probs(np.zeros_like(diff), diff, rope=rope,
                                         nsamples=BAYES_SAMPLES, random_state=0)
    return tuple(float(p) for p in probabilities)


def against_baseline(means: pd.DataFrame, metric: str,
                     baseline: tuple[str, ...]) -> pd.DataFrame:
    """Per column of `means` (datasets x columns, NaN where a cell lacks resamples) other than
    `baseline`: over the datasets where both have a mean, their number, the median difference
    (`differences`), Wilcoxon's two-sided p (NaN on too few datasets to reach ALPHA:
    stats.smallest_wilcoxon_p), its Holm adjustment over the columns, and the Bayesian
    signed-rank probabilities (NaN below stats.MIN_DATASETS: on fewer, the Dirichlet process
    posterior sits on the few observed differences and states near-certainties)."""
    rows = {}
    for column in means.columns:
        if column == baseline:
            continue
        both = means[[column, baseline]].dropna()
        diff = differences(metric, both[column], both[baseline])
        enough = smallest_wilcoxon_p(len(diff)) < ALPHA
        p = wilcoxon_p(diff, np.zeros_like(diff)) if enough else math.nan
        bayes = (bayesian_signed_rank(diff, ROPE[scale(metric)]) if len(diff) >= MIN_DATASETS
                 else (math.nan,) * 3)  # fmt: skip
        rows[column] = [len(diff), float(np.median(diff)) if len(diff) else math.nan, p,
                        math.nan, *bayes]  # fmt: skip
    result = pd.DataFrame.from_dict(rows, orient="index", columns=ACROSS_COLUMNS)
    result["p_holm"] = holm(result["p"].tolist()) if len(result) else []
    result.index = pd.MultiIndex.from_tuples(result.index, names=means.columns.names)
    return result


def default_baseline(table: MetricTable) -> tuple[str, ...]:
    """The table's first column with the most datasets (each table's baseline unless
    --baseline names one)."""
    return table.mean.notna().sum().idxmax()
