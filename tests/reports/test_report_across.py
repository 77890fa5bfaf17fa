"""Every column against a baseline across datasets: Wilcoxon-Holm against scipy directly, the
Bayesian signed-rank test's direction and region of practical equivalence, and what is withheld
on too few datasets."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import wilcoxon

from reports.across import against_baseline, differences

BASE, WORSE, SAME, FEW = ("a", "inhouse"), ("b", "xgboost"), ("c", "lightgbm"), ("d", "sklearn")


def means(n_datasets: int) -> pd.DataFrame:
    """Error rates of 8 datasets: b worse by 0.03-0.10 on each, c within 0.002 of a, d ran on 4."""
    base = np.linspace(0.05, 0.3, n_datasets)
    frame = pd.DataFrame({BASE: base, WORSE: base + np.linspace(0.03, 0.1, n_datasets),
                          SAME: base + np.resize([0.002, -0.001], n_datasets),
                          FEW: np.r_[base[:4], [math.nan] * (n_datasets - 4)]})
    frame.columns = pd.MultiIndex.from_tuples(frame.columns, names=["method", "engine"])
    return frame


def test_wilcoxon_holm_against_scipy_and_the_bayesian_test_direction():
    table = means(8)
    result = against_baseline(table, "test_error", BASE)
    worse, same = result.loc[WORSE], result.loc[SAME]
    p_worse = wilcoxon(table[WORSE] - table[BASE]).pvalue  # all 8 positive: 2 / 2^8
    p_same = wilcoxon(table[SAME] - table[BASE]).pvalue
    assert worse["p"] == pytest.approx(p_worse) and p_worse == pytest.approx(2 / 256)
    assert worse["p_holm"] == pytest.approx(min(1.0, 2 * min(p_worse, p_same)))
    assert worse["median_difference"] == pytest.approx(np.median(np.linspace(0.03, 0.1, 8)))
    assert worse["p_worse"] > 0.95 and worse["p_better"] < 0.01
    assert same["p_rope"] > 0.95  # every difference within the ROPE of 0.01
    assert result.loc[FEW, "datasets"] == 4
    assert math.isnan(result.loc[FEW, "p"]) and math.isnan(result.loc[FEW, "p_rope"])


def test_other_metrics_compare_log_ratios():
    """RMSE of each dataset's own scale: 2% worse everywhere is outside the 1% ROPE."""
    assert differences("test_rmse", pd.Series([102.0, 2.04]), pd.Series([100.0, 2.0])) == (
        pytest.approx([math.log(1.02)] * 2))
    table = means(8) * 100
    table[WORSE] = table[BASE] * 1.02
    assert against_baseline(table, "test_rmse", BASE).loc[WORSE, "p_worse"] > 0.95
