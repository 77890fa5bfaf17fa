"""The tuning report: default against tuned with its significance, and best-so-far curves."""

import itertools

import numpy as np
import pandas as pd
import pytest

from reports.tables import summarize
from reports.tuning import best_so_far, best_so_far_curves, default_vs_tuned


def test_best_so_far_follows_the_inner_score_and_averages_over_orders():
    inner = np.array([0.3, 0.1, 0.2])
    test = np.array([0.5, 0.7, 0.6])
    orders = np.array(list(itertools.permutations(range(3))))
    # k = 1: any trial; k = 2: the better by inner of two (trial 1 wins 4 of 6 pairs, else 2);
    # k = 3: trial 1, the best by inner score, whose test score is the worst of the three
    np.testing.assert_allclose(best_so_far(test, inner, orders), [0.6, (4 * 0.7 + 2 * 0.6) / 6,
                                                                  0.7])


def test_best_so_far_curves_are_normalized_per_dataset():
    trials = pd.DataFrame({
        "dataset": ["a"] * 4 + ["b"] * 4,
        "method": ["gbt+tpe"] * 8,
        "engine": ["inhouse", "inhouse", "xgboost", "xgboost"] * 2,
        "run_id": ["r1", "r1", "r2", "r2", "r3", "r3", "r4", "r4"],
        "outer_split": 0,
        "trial": [0, 1] * 4,
        "inner": [0.2, 0.1, 0.2, 0.1, 2.0, 1.0, 2.0, 1.0],
        "test": [0.3, 0.1, 0.4, 0.2, 30.0, 10.0, 40.0, 20.0],
    })
    curves = best_so_far_curves(trials).set_index(["dataset", "engine", "trials"])
    assert curves.loc[("a", "inhouse", 2), "value"] == pytest.approx(0.1)
    assert curves.loc[("b", "xgboost", 1), "value"] == pytest.approx(30.0)
    assert curves.loc[("a", "inhouse", 2), "normalized"] == 0.0
    assert curves.loc[("a", "xgboost", 1), "normalized"] == pytest.approx(1.0)
    assert curves.loc[("b", "xgboost", 2), "normalized"] == pytest.approx(
        curves.loc[("a", "xgboost", 2), "normalized"]
    )


def test_default_vs_tuned_pairs_by_seed_and_tests_the_gain():
    rng = np.random.RandomState(0)
    rows = []
    for seed in range(12):
        default = 0.2 + rng.normal(0, 0.01)
        rows += [("d", "gbt", "inhouse", seed, 0, default),
                 ("d", "gbt+tpe", "inhouse", seed, 0, default - 0.05),  # always better
                 ("d", "random_forest", "sklearn", seed, 0, default),
                 ("d", "random_forest+tpe", "sklearn", seed, 0, default + rng.normal(0, 0.01))]
    values = pd.DataFrame(rows, columns=["dataset", "method", "engine", "seed", "split", "value"])
    comparison = default_vs_tuned(summarize(values, "test_error")).set_index("method")
    assert list(comparison.index) == ["gbt", "random_forest"]
    assert comparison.loc["gbt", "gain"] == pytest.approx(0.05)
    assert comparison.loc["gbt", "p_holm"] < 0.01
    assert comparison.loc["random_forest", "p_holm"] > 0.05
    assert set(comparison["sampler"]) == {"tpe"}
