"""The tuning report: default against tuned with its significance, best-so-far curves, and
the tunability of each hyper-parameter."""

import itertools

import numpy as np
import pandas as pd
import pytest

from reports.tables import summarize
from reports.tuning import (
    best_so_far,
    best_so_far_curves,
    default_vs_tuned,
    format_tunability,
    tunability,
)


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


def test_tunability_averages_datasets_and_shares_the_joint_gain():
    """Two datasets, 8 seeds each: tuning max_depth alone gains 0.04 and 0.02 (mean 0.03) of a
    joint gain of 0.06 and 0.04 (mean 0.05); tuning reg_lambda alone gains nothing."""
    rng = np.random.RandomState(0)
    rows = []
    for dataset, depth_gain, joint_gain in [("a", 0.04, 0.06), ("b", 0.02, 0.04)]:
        for seed in range(8):
            default = 0.3 + rng.normal(0, 0.01)
            rows.append({"dataset": dataset, "method": "gbt+tpe", "engine": "inhouse",
                         "seed": seed, "default_test_error": default,
                         "test_error": default - joint_gain,
                         "tunability_max_depth_test_error": default - depth_gain,
                         "tunability_reg_lambda_test_error": default + rng.normal(0, 0.005)})
    rows.append({"dataset": "a", "method": "gbt", "engine": "inhouse", "seed": 0,
                 "test_error": 0.3})  # an untuned run has no tunability
    table = tunability(pd.DataFrame(rows), "test_error")
    assert list(table["parameter"]) == ["max_depth", "reg_lambda"]  # by tunability
    depth, reg_lambda = table.itertuples()
    assert (depth.method, depth.sampler, depth.engine) == ("gbt", "tpe", "inhouse")
    assert depth.tunability == pytest.approx(0.03)
    assert depth.share == pytest.approx(0.03 / 0.05)
    assert depth.datasets == 2
    assert depth.p_holm < 0.01
    assert abs(reg_lambda.tunability) < 0.005 and reg_lambda.p_holm > 0.05
    text = format_tunability(table, "test_error")
    assert list(text.cells.index) == ["gbt / inhouse (tpe): max_depth",
                                      "gbt / inhouse (tpe): reg_lambda"]
    assert text.cells.loc["gbt / inhouse (tpe): max_depth", "share of joint gain"] == "60%"
    assert text.bold["tunability"].tolist() == [True, False]


def test_no_tunability_without_runs_that_logged_it():
    runs = pd.DataFrame({"dataset": ["a"], "method": ["gbt"], "engine": ["inhouse"],
                         "test_error": [0.3]})
    assert tunability(runs, "test_error").empty
