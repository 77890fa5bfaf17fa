"""The tuning report: default against tuned with its significance (within a dataset the
corrected resampled t-test, across datasets the Wilcoxon test with the dataset as the unit),
best-so-far curves, and the tunability of each hyper-parameter."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import t as student_t

from experiments.tuning.search import TrialRecord, best_trial
from reports.tables import TEST_ROWS, TEST_TRAIN_RATIO, summarize
from reports.tuning import (
    CURVE_SCORES,
    N_ORDERS,
    across_datasets,
    best_so_far_curves,
    best_so_far_figure,
    best_so_far_time_figure,
    default_vs_tuned,
    format_across_datasets,
    format_default_vs_tuned,
    format_tunability,
    format_tuning_cost,
    normalized_scores,
    order_bands,
    trial_orders,
    tunability,
    tuning_cost,
)

COLUMNS = ["dataset", "method", "engine", "seed", "split", "value", TEST_TRAIN_RATIO]


def curve_trials(method: str, inner: list[float], test: list[float], metric: str = "test_error",
                 **cell) -> pd.DataFrame:
    """One study's trial table as reports.runs.load_trials gives it (trials 0..n-1)."""
    cell = {"dataset": "d", "engine": "inhouse", "seed": 0, "run_id": "r", "outer_split": 0,
            **cell}  # fmt: skip
    return pd.DataFrame({**cell, "method": method, "metric": metric, "trial": range(len(inner)),
                         "inner": inner, "test": test})  # fmt: skip


def test_tpe_trials_keep_their_real_order():
    # trial 1 is best by inner score: in the real order the curve holds trial 0's test score
    # for k = 1 and trial 1's from k = 2 (shuffled orders would average 0.5, 0.7 and 0.6)
    trials = curve_trials("gbt+tpe", [0.3, 0.1, 0.2], [0.5, 0.7, 0.6])
    curves = best_so_far_curves(trials)
    assert curves["order"].nunique() == 1
    np.testing.assert_allclose(curves.sort_values("trials")["value"], [0.5, 0.7, 0.7])


def test_random_search_keeps_the_default_first_and_shuffles_the_others():
    # trial 0 (the default) always first; trials 1..3 in all 3! = 6 orders: at k = 2, the
    # default (inner 0.25) meets trial 1 (0.3: the default stays, 0.55), 2 (0.1: 0.7) or 3
    # (0.2: 0.6), each in 2 of the 6 orders
    trials = curve_trials("gbt+random", [0.25, 0.3, 0.1, 0.2], [0.55, 0.5, 0.7, 0.6])
    curves = best_so_far_curves(trials)
    assert curves["order"].nunique() == 6
    bands = order_bands(curves, ["method", "engine"], "value").set_index("trials")
    assert bands.loc[1, ["mean", "min", "max"]].tolist() == pytest.approx([0.55, 0.55, 0.55])
    assert bands.loc[2, "mean"] == pytest.approx((0.55 + 0.7 + 0.6) / 3)
    assert bands.loc[2, ["min", "max"]].tolist() == pytest.approx([0.55, 0.7])
    assert bands.loc[4, ["min", "max"]].tolist() == pytest.approx([0.7, 0.7])
    figure = best_so_far_figure(curves, "test_error")
    [band] = figure.axes[0].collections  # the band drawn: min-max over the 6 orders
    assert band.get_paths()[0].vertices[:, 1].min() == pytest.approx(0.55)
    assert band.get_paths()[0].vertices[:, 1].max() == pytest.approx(0.7)
    assert "mean over 6 orders" in figure.legends[0].get_title().get_text()
    rng = np.random.RandomState(0)
    orders = trial_orders(6, "random", rng, n_orders=15)  # 5! = 120 > 15: 15 random orders
    assert orders.shape == (15, 6) and (orders[:, 0] == 0).all()
    assert all(sorted(order) == list(range(6)) for order in orders)
    assert len({tuple(order) for order in orders}) > 1
    assert trial_orders(6, "tpe", rng).tolist() == [list(range(6))]


def test_scores_are_normalized_as_grinsztajn_et_al():
    # classification: s = -error, anchored at its 10% quantile: numpy's (linear) quantile of
    # [-0.5, -0.4, -0.3, -0.2, -0.1] at 0.1 is -0.5 + 0.4 * 0.1 = -0.46, the max -0.1; no
    # truncation, the worst trial scores below 0
    error = pd.Series([0.1, 0.2, 0.3, 0.4, 0.5])
    np.testing.assert_allclose(normalized_scores(error, CURVE_SCORES["test_error"]),
                               [(s + 0.46) / 0.36 for s in [-0.1, -0.2, -0.3, -0.4, -0.5]])
    # regression: s = -rmse^2 (R^2 is affine in it on one test set): [-1, -4, -9, -2.25] has
    # the median -3.125 and the max -1; rmse 2 (-4) and 3 (-9) fall below the median:
    # truncated to 0
    rmse = pd.Series([1.0, 2.0, 3.0, 1.5])
    np.testing.assert_allclose(normalized_scores(rmse, CURVE_SCORES["test_rmse"]),
                               [1.0, 0.0, 0.0, 0.875 / 2.125])
    # per trial, among the trials on the same outer test rows (here: two engines' studies)
    trials = pd.concat([
        curve_trials("gbt+tpe", [0.2, 0.1], [1.0, 1.5], "test_rmse"),
        curve_trials("gbt+tpe", [0.1, 0.2], [2.0, 3.0], "test_rmse", engine="xgboost",
                     run_id="r2"),
    ])  # fmt: skip
    curves = best_so_far_curves(trials).set_index(["engine", "trials"])["normalized"]
    assert curves[("inhouse", 2)] == pytest.approx(0.875 / 2.125)
    assert curves[("xgboost", 2)] == 0.0


def test_trials_are_counted_as_the_tuner_counts_them():
    """A failed trial (no inner score) counts and is never chosen; an infeasible one, which the
    tuner resampled, does not count: both engines' curves have the 4 trials of their tuners."""
    study = curve_trials("gbt+tpe", [np.nan, 0.9, 0.2, 0.0, 0.1], [np.nan, 0.0, 0.4, 0.1, 0.3])
    study["infeasible"] = [False, True, False, False, False]
    other = curve_trials("gbt+tpe", [0.5, 0.4, 0.3, 0.2], [0.5, 0.4, 0.3, 0.2],
                         engine="xgboost", run_id="r2")  # fmt: skip
    curves = best_so_far_curves(pd.concat([study, other]))
    inhouse = curves[curves["engine"] == "inhouse"].sort_values("trials")
    assert inhouse["trials"].tolist() == [1, 2, 3, 4]
    np.testing.assert_allclose(inhouse["value"], [np.nan, 0.4, 0.1, 0.1])
    assert curves.groupby("engine")["trials"].max().tolist() == [4, 4]


def test_the_curve_ends_at_the_tuners_choice_in_every_order():
    """The tuner's rule (experiments.tuning.search.best_trial): trials 1, 3 and 4 tie at the
    lowest inner score, the tie-break metric prefers 3 and 4 over 1, the trial number 3 over 4;
    every order of a random search ends there, whichever came first in it."""
    inner, tiebreak = [0.3, 0.1, 0.2, 0.1, 0.1], [0.9, 0.5, 0.1, 0.4, 0.4]
    test = [0.5, 0.7, 0.6, 0.9, 0.8]
    records = [TrialRecord(number=i, params={}, inner_score=s, inner_tiebreak=b,
                           outer_test_score=t, seconds=0.0, fit_score_seconds=0.0)
               for i, (s, b, t) in enumerate(zip(inner, tiebreak, test, strict=True))]
    assert best_trial(records).outer_test_score == 0.9
    trials = curve_trials("gbt+random", inner, test).assign(tiebreak=tiebreak)
    curves = best_so_far_curves(trials)
    assert curves["order"].nunique() == N_ORDERS  # 4! = 24 orders of trials 1..4 > 15
    assert (curves.loc[curves["trials"] == 5, "value"] == 0.9).all()


def test_curves_against_time_place_trial_k_at_the_mean_seconds_of_the_first_k():
    """Random search on dataset a: trials 0 (the default), 1, 2 of 1, 2 and 6 s in the 2 orders
    0-1-2 and 0-2-1: cumulative seconds 1, 3, 9 and 1, 7, 9 (mean 1, 5, 9); the chosen trial's
    test score 0.55, 0.55, 0.7 and 0.55, 0.7, 0.7 (mean 0.55, 0.625, 0.7). TPE on dataset b,
    two seeds in their real order: 1, 3, 7 s and 3, 3, 5 s (trial 1 failed: no time logged,
    counted as 0 s), mean 2, 3, 6; chosen test scores 0.5, 0.7, 0.7 and 0.5, 0.5, 0.6 (the
    failed trial never chosen), mean 0.5, 0.6, 0.65."""
    random = curve_trials("gbt+random", [0.25, 0.3, 0.1], [0.55, 0.5, 0.7], dataset="a")
    random["seconds"] = [1.0, 2.0, 6.0]
    tpe = pd.concat([
        curve_trials("gbt+tpe", [0.3, 0.1, 0.2], [0.5, 0.7, 0.6], dataset="b").assign(
            seconds=[1.0, 2.0, 4.0]),
        curve_trials("gbt+tpe", [0.3, np.nan, 0.2], [0.5, np.nan, 0.6], dataset="b", seed=1,
                     run_id="r1").assign(seconds=[3.0, np.nan, 2.0]),
    ])  # fmt: skip
    curves = best_so_far_curves(pd.concat([random, tpe]))
    by_order = curves[curves["dataset"] == "a"].set_index(["order", "trials"])["seconds"]
    assert by_order.tolist() == pytest.approx([1, 3, 9, 1, 7, 9])
    figure = best_so_far_time_figure(curves, "test_error")
    lines = [{"x": ax.get_lines()[0].get_xdata().tolist(),
              "y": ax.get_lines()[0].get_ydata().tolist()} for ax in figure.axes[:2]]
    assert lines[0] == {"x": pytest.approx([1, 5, 9]), "y": pytest.approx([0.55, 0.625, 0.7])}
    assert lines[1] == {"x": pytest.approx([2, 3, 6]), "y": pytest.approx([0.5, 0.6, 0.65])}
    assert figure.axes[0].get_xscale() == "log"
    assert "seconds of the first k trials" in figure.axes[0].get_xlabel()
    [band] = figure.axes[0].collections  # min-max over the 2 orders at k = 2: 0.55 to 0.7
    assert band.get_paths()[0].vertices[:, 1].max() == pytest.approx(0.7)
    untimed = best_so_far_curves(curve_trials("gbt+tpe", [0.2, 0.1], [0.3, 0.2]))
    assert untimed["seconds"].isna().all()  # trials from before trial_seconds: no time


def test_tuning_cost_per_column_is_per_study_over_every_dataset():
    """gbt+tpe/inhouse: 30 s with 19 scored + 1 failed (timed out) trials on d1, 90 s with 18
    scored and 2 infeasible on d2: 60 s and (20 + 18) / 2 = 19 trials a study, 60 x 19 / 60 = 19
    trials a minute; gbt+random/xgboost: 10 and 20 s, 20 trials each: 15 s, 60 x 20 / 15 = 80 a
    minute; the untuned run has no cost."""
    runs = pd.DataFrame({
        "dataset": ["d1", "d2", "d1", "d1", "d1"],
        "method": ["gbt+tpe", "gbt+tpe", "gbt+random", "gbt+random", "gbt"],
        "engine": ["inhouse", "inhouse", "xgboost", "xgboost", "inhouse"],
        "tune_seconds": [30.0, 90.0, 10.0, 20.0, np.nan],
        "tune_trials": [19.0, 18.0, 20.0, 20.0, np.nan],
        "tune_failed_trials": [1.0, 0.0, 0.0, 0.0, np.nan],
        "tune_timed_out_trials": [1.0, 0.0, 0.0, 0.0, np.nan],
        "tune_infeasible_trials": [0.0, 2.0, 0.0, 0.0, np.nan],
    })  # fmt: skip
    cost = tuning_cost(runs).set_index(["method", "sampler", "engine"])
    assert cost.loc[("gbt", "tpe", "inhouse")].tolist() == pytest.approx(
        [2, 2, 60.0, 19.0, 19.0, 0.5, 0.5, 1.0])
    assert cost.loc[("gbt", "random", "xgboost")].tolist() == pytest.approx(
        [2, 1, 15.0, 20.0, 80.0, 0.0, 0.0, 0.0])
    text = format_tuning_cost(tuning_cost(runs))
    assert text.cells.loc["gbt / inhouse (tpe)", "trials / minute"] == "19"
    assert text.cells.loc["gbt / xgboost (random)", "seconds / study"] == "15"
    assert tuning_cost(runs.drop(columns="tune_seconds")).empty


def test_default_vs_tuned_pairs_by_seed_and_marks_gains_and_losses():
    """Within one dataset, 12 seeds of a 25% holdout of 1600 rows (n_test 400, n_test/n_train =
    1/3): gbt tuned is 0.05 better on every seed (s^2 ~ 0, floored at (0.05 - 0.05^2) / 400:
    t = 7.1, p = 2e-5), extra_trees 0.03 worse on average (a significant loss), random_forest
    differs by noise only; with 9 seeds, fewer than a verdict needs, all are untested."""
    rng = np.random.RandomState(0)
    rows = []
    for seed in range(12):
        default = 0.2 + rng.normal(0, 0.01)
        rows += [("d", "gbt", "inhouse", seed, 0, default),
                 ("d", "gbt+tpe", "inhouse", seed, 0, default - 0.05),  # always better
                 ("d", "extra_trees", "inhouse", seed, 0, default),
                 ("d", "extra_trees+tpe", "inhouse", seed, 0, default + 0.03
                  + rng.normal(0, 0.01)),
                 ("d", "random_forest", "sklearn", seed, 0, default),
                 ("d", "random_forest+tpe", "sklearn", seed, 0, default + rng.normal(0, 0.01))]
    values = pd.DataFrame([(*row, 1 / 3) for row in rows], columns=COLUMNS).assign(
        **{TEST_ROWS: 400.0})
    comparison = default_vs_tuned(summarize(values, "test_error"))
    assert list(comparison["method"]) == ["extra_trees", "gbt", "random_forest"]
    by_method = comparison.set_index("method")
    assert by_method.loc["gbt", "gain"] == pytest.approx(0.05)
    floor = (0.05 - 0.05**2) / 400
    t = 0.05 / math.sqrt((1 / 12 + 1 / 3) * floor)
    assert by_method.loc["gbt", "p_holm"] == pytest.approx(3 * 2 * student_t.sf(t, 11))
    assert by_method.loc["extra_trees", "gain"] < -0.02 and by_method.loc["extra_trees",
                                                                           "p_holm"] < 0.05
    assert by_method.loc["random_forest", "p_holm"] > 0.05
    assert set(comparison["sampler"]) == {"tpe"}
    text = format_default_vs_tuned(comparison, "test_error")
    assert text.cells["verdict"].tolist() == ["tuned worse", "tuned better", "not significant"]
    assert text.bold["gain"].tolist() == [True, True, False]
    untested = default_vs_tuned(summarize(values.drop(columns=TEST_TRAIN_RATIO), "test_error"))
    assert untested["p_holm"].isna().all()  # runs without their split sizes: no test
    assert set(format_default_vs_tuned(untested, "test_error").cells["verdict"]) == {"untested"}
    few = default_vs_tuned(summarize(values[values["seed"] < 9], "test_error"))
    assert few["p_holm"].isna().all()


def test_the_librarys_own_defaults_are_a_second_default_column():
    """gbt on xgboost at the lab's defaults (0.20), tuned (0.15), at XGBoost's own defaults
    (0.30, label gbt@library as reports.runs gives it); in-house has no library column."""
    rows = [(dataset, method, engine, seed, 0, value)
            for dataset in ("d",) for seed in range(3)
            for method, engine, value in [("gbt", "xgboost", 0.2), ("gbt+tpe", "xgboost", 0.15),
                                          ("gbt@library", "xgboost", 0.3), ("gbt", "inhouse", 0.2),
                                          ("gbt+tpe", "inhouse", 0.16)]]  # fmt: skip
    values = pd.DataFrame([(*row, 1 / 3) for row in rows], columns=COLUMNS).assign(
        **{TEST_ROWS: 400.0})
    comparison = default_vs_tuned(summarize(values, "test_error"))
    by_engine = comparison.set_index("engine")
    assert by_engine.loc["xgboost", "library_default"] == pytest.approx(0.3)
    assert np.isnan(by_engine.loc["inhouse", "library_default"])
    assert by_engine.loc["xgboost", "gain"] == pytest.approx(0.05)  # against the lab's default
    cells = format_default_vs_tuned(comparison, "test_error").cells
    assert list(cells.columns[:3]) == ["default", "library default", "tuned"]
    assert cells["library default"].tolist() == ["–", "0.300"]
    without = default_vs_tuned(summarize(values[values["method"] != "gbt@library"], "test_error"))
    assert "library default" not in format_default_vs_tuned(without, "test_error").cells


def study(n_datasets: int, bad: float, worse: float = 0.0, seed: int = 0) -> pd.DataFrame:
    """A generated family of datasets (errors on scales 0.1 to 0.45), 3 seeds x 2 splits each:
    gbt's default worse than tuned by `bad` (0: equal to tuned), random_forest's tuned worse
    than its default by `worse`; noise 0.01 per (seed, split)."""
    rng = np.random.RandomState(seed)
    rows = []
    for index in range(n_datasets):
        level = 0.1 + 0.05 * index
        for seed_, split in itertools.product(range(3), range(2)):
            tuned = level + rng.normal(0, 0.01)
            forest = level + rng.normal(0, 0.01)
            rows += [(f"d{index}", "gbt", "inhouse", seed_, split, tuned + bad),
                     (f"d{index}", "gbt+random", "inhouse", seed_, split, tuned),
                     (f"d{index}", "random_forest", "inhouse", seed_, split, forest),
                     (f"d{index}", "random_forest+random", "inhouse", seed_, split,
                      forest + worse + rng.normal(0, 0.01))]  # fmt: skip
    return pd.DataFrame([(*row, 0.25 / 0.75) for row in rows], columns=COLUMNS)


def test_across_datasets_wilcoxon_finds_a_bad_default_and_a_harmful_tuning():
    """8 datasets: a default 0.02 worse than tuned is worse on all 8, two-sided exact Wilcoxon
    p = 2/2^8, Holm over the 2 comparisons 4/2^8 < 0.05; tuning that costs 0.02 on all 8 is a
    significant loss, marked."""
    summary = across_datasets(default_vs_tuned(summarize(study(8, 0.02, 0.02), "test_error")))
    gbt, forest = summary.itertuples()
    assert (gbt.method, gbt.sampler, gbt.engine, gbt.datasets, gbt.tuned_better) == (
        "gbt", "random", "inhouse", 8, 8)
    assert gbt.p == pytest.approx(2 / 2**8)
    assert gbt.p_holm == pytest.approx(4 / 2**8)
    assert gbt.gain == pytest.approx(0.02)
    assert (forest.tuned_better, forest.p_holm) == (0, pytest.approx(4 / 2**8))
    text = format_across_datasets(summary, "test_error")
    assert text.cells["verdict"].tolist() == ["tuned better", "tuned worse"]
    assert text.cells["datasets"].tolist() == ["8", "8"]
    assert text.bold["gain"].tolist() == [True, True]
    assert "at most 8" in text.caption


def test_across_datasets_default_equal_to_tuned_is_not_significant():
    equal = across_datasets(default_vs_tuned(summarize(study(8, 0.0), "test_error")))
    assert equal.set_index("method").loc["gbt", "p"] == 1.0  # every difference zero
    noise = across_datasets(default_vs_tuned(summarize(study(8, 0.0, seed=1), "test_error")))
    assert noise.set_index("method").loc["random_forest", "p_holm"] > 0.05
    verdicts = format_across_datasets(equal, "test_error").cells["verdict"].tolist()
    assert verdicts == ["not significant", "not significant"]


def test_across_five_datasets_is_too_few_whatever_the_gain():
    """5 datasets, the default worse on all: the smallest two-sided p is 2/2^5 = 0.0625."""
    summary = across_datasets(default_vs_tuned(summarize(study(5, 0.05), "test_error")))
    assert summary.set_index("method").loc["gbt", "p"] == pytest.approx(2 / 2**5)
    text = format_across_datasets(summary, "test_error")
    assert text.cells["verdict"].tolist()[0] == "too few datasets"


def tunability_runs(n_datasets: int, seeds: int) -> pd.DataFrame:
    """Tuning max_depth alone gains 0.04 and 0.02 on alternate datasets (mean 0.03) of a joint
    gain of 0.06 and 0.04 (mean 0.05); tuning reg_lambda alone gains nothing."""
    rng = np.random.RandomState(0)
    rows = []
    for index in range(n_datasets):
        dataset = f"d{index}"
        depth_gain, joint_gain = (0.04, 0.06) if index % 2 == 0 else (0.02, 0.04)
        for seed in range(seeds):
            default = 0.3 + rng.normal(0, 0.01)
            rows.append({"dataset": dataset, "method": "gbt+tpe", "engine": "inhouse",
                         "seed": seed, "default_test_error": default,
                         "test_error": default - joint_gain,
                         "tunability_max_depth_test_error": default - depth_gain,
                         "tunability_reg_lambda_test_error": default + rng.normal(0, 0.005)})
    rows.append({"dataset": "d0", "method": "gbt", "engine": "inhouse", "seed": 0,
                 "test_error": 0.3})  # an untuned run has no tunability
    return pd.DataFrame(rows)


def test_tunability_tests_per_dataset_means_and_shares_the_joint_gain():
    """8 datasets, 2 seeds each: max_depth's per-dataset gain is positive on all 8, Wilcoxon
    p = 2/2^8, Holm over the 2 parameters 4/2^8."""
    table = tunability(tunability_runs(8, 2), "test_error")
    assert list(table["parameter"]) == ["max_depth", "reg_lambda"]  # by tunability
    depth, reg_lambda = table.itertuples()
    assert (depth.method, depth.sampler, depth.engine) == ("gbt", "tpe", "inhouse")
    assert depth.tunability == pytest.approx(0.03)
    assert depth.share == pytest.approx(0.03 / 0.05)
    assert depth.datasets == 8
    assert depth.p_holm == pytest.approx(4 / 2**8)
    assert abs(reg_lambda.tunability) < 0.005 and reg_lambda.p_holm > 0.05
    text = format_tunability(table, "test_error")
    assert list(text.cells.index) == ["gbt / inhouse (tpe): max_depth",
                                      "gbt / inhouse (tpe): reg_lambda"]
    assert text.cells.loc["gbt / inhouse (tpe): max_depth", "share of joint gain"] == "60%"
    assert text.bold["tunability"].tolist() == [True, False]
    assert text.cells["verdict"].tolist() == ["tuned better", "not significant"]


def test_tunability_over_two_datasets_is_not_significant_however_many_runs():
    """2 datasets x 8 seeds: 16 runs pooled would give p < 0.001; the dataset as the unit gives
    2 pairs, p = 0.5 at best."""
    depth = tunability(tunability_runs(2, 8), "test_error").iloc[0]
    assert depth.parameter == "max_depth" and depth.datasets == 2
    assert depth.p_holm >= 0.5


def test_no_tunability_without_runs_that_logged_it():
    runs = pd.DataFrame({"dataset": ["a"], "method": ["gbt"], "engine": ["inhouse"],
                         "test_error": [0.3]})
    assert tunability(runs, "test_error").empty


def test_a_swept_method_parameter_keeps_its_tuned_and_library_columns_apart():
    """Labels as reports.runs gives them for a sweep over method.max_depth=2,4: each depth's
    tuned column meets its own default and library column."""
    rows = [("d", f"gbt{suffix} [max_depth={depth}]", "xgboost", seed, 0, value + 0.01 * depth)
            for depth in (2, 4) for seed in range(3)
            for suffix, value in [("", 0.2), ("+random", 0.15), ("@library", 0.3)]]  # fmt: skip
    values = pd.DataFrame([(*row, 1 / 3) for row in rows], columns=COLUMNS).assign(
        **{TEST_ROWS: 400.0})
    comparison = default_vs_tuned(summarize(values, "test_error")).set_index("method")
    assert list(comparison.index) == ["gbt [max_depth=2]", "gbt [max_depth=4]"]
    assert comparison["sampler"].tolist() == ["random", "random"]
    assert comparison["library_default"].tolist() == pytest.approx([0.32, 0.34])
    assert comparison["gain"].tolist() == pytest.approx([0.05, 0.05])
