"""What a job logs beyond its test metrics: the learning curve of an iterative method, the parity
with the in-house engine, the estimator that ran and how a reference approximates the config."""

import numpy as np
import pytest
import sklearn.ensemble
from mlflow import MlflowClient
from sklearn.datasets import load_breast_cancer, load_diabetes, load_wine
from sklearn.metrics import accuracy_score, root_mean_squared_error
from sklearn.model_selection import ShuffleSplit, StratifiedShuffleSplit
from sklearn.tree import DecisionTreeClassifier

import ensembles
from experiments.run import run_job


def curve(cfg, logged, name: str) -> list[tuple[int, float]]:
    history = MlflowClient(cfg.mlflow.tracking_uri).get_metric_history(logged.info.run_id, name)
    return [(metric.step, metric.value) for metric in history]


def holdout(X: np.ndarray, y: np.ndarray, seed: int, stratified: bool = True):
    """The job's split: one holdout of 25%, stratified for classification."""
    splitter = StratifiedShuffleSplit if stratified else ShuffleSplit
    return next(splitter(n_splits=1, test_size=0.25, random_state=seed).split(X, y))


def test_adaboost_logs_its_test_error_every_k_rounds_and_at_the_last(compose_job, runs_of):
    cfg = compose_job(
        "dataset=breast_cancer",
        "method=adaboost",
        "engine=sklearn",
        "method.n_estimators=25",
        "eval.curve_every=10",
        "seed=2",
    )
    assert run_job(cfg) == "ok"
    [logged] = runs_of(cfg)
    steps, errors = zip(*curve(cfg, logged, "curve_test_error"), strict=True)
    assert steps == (1, 10, 20, 25)

    # independent: scikit-learn's own staged predictions on the same split
    X, y = load_breast_cancer(return_X_y=True)
    train, test = holdout(X, y, seed=2)
    model = sklearn.ensemble.AdaBoostClassifier(
        DecisionTreeClassifier(max_depth=1), n_estimators=25, random_state=2
    ).fit(X[train], y[train])
    staged = [1 - accuracy_score(y[test], y_pred) for y_pred in model.staged_predict(X[test])]
    np.testing.assert_allclose(errors, [staged[step - 1] for step in steps])
    assert logged.data.metrics["test_error"] == pytest.approx(staged[-1])


def test_inhouse_gbt_logs_a_test_rmse_curve_ending_at_its_test_rmse(compose_job, runs_of):
    cfg = compose_job(
        "dataset=diabetes", "method=gbt", "method.n_estimators=5", "eval.curve_every=2"
    )
    assert run_job(cfg) == "ok"
    [logged] = runs_of(cfg)
    points = curve(cfg, logged, "curve_test_rmse")
    assert [step for step, _ in points] == [1, 2, 4, 5]
    assert points[-1][1] == pytest.approx(logged.data.metrics["test_rmse"])
    assert points[0][1] > points[-1][1]  # boosting lowers the test error on diabetes


def test_a_forest_curve_point_is_the_error_of_a_forest_of_that_many_trees(compose_job, runs_of):
    cfg = compose_job(
        "dataset=breast_cancer",
        "method=random_forest",
        "engine=sklearn",
        "method.n_estimators=12",
        "eval.curve_every=5",
        "seed=3",
    )
    assert run_job(cfg) == "ok"
    [logged] = runs_of(cfg)
    points = dict(curve(cfg, logged, "curve_test_error"))
    assert sorted(points) == [1, 5, 10, 12]

    # independent: scikit-learn's forest of the first k trees (same seeds, k at a time)
    X, y = load_breast_cancer(return_X_y=True)
    train, test = holdout(X, y, seed=3)
    for n_trees, error in points.items():
        forest = sklearn.ensemble.RandomForestClassifier(n_trees, random_state=3)
        forest.fit(X[train], y[train])
        assert error == pytest.approx(1 - accuracy_score(y[test], forest.predict(X[test])))


def test_an_xgboost_curve_point_is_the_error_of_that_many_rounds(compose_job, runs_of):
    import xgboost

    cfg = compose_job(
        "dataset=diabetes", "method=gbt", "engine=xgboost", "method.n_estimators=7",
        "eval.curve_every=3",
    )
    assert run_job(cfg) == "ok"
    [logged] = runs_of(cfg)
    points = dict(curve(cfg, logged, "curve_test_rmse"))
    assert sorted(points) == [1, 3, 6, 7]
    X, y = load_diabetes(return_X_y=True)
    train, test = holdout(X, y, seed=0, stratified=False)
    for rounds, rmse in points.items():
        booster = xgboost.XGBRegressor(n_estimators=rounds, tree_method="hist", learning_rate=0.3,
                                       max_depth=6, max_bin=255)
        y_pred = booster.fit(X[train], y[train]).predict(X[test])
        assert rmse == pytest.approx(root_mean_squared_error(y[test], y_pred), rel=1e-5)


def test_curve_every_0_logs_no_curve(compose_job, runs_of):
    cfg = compose_job("dataset=wine", "engine=sklearn", "method=adaboost", "eval.curve_every=0")
    assert run_job(cfg) == "ok"
    [logged] = runs_of(cfg)
    assert not any(name.startswith("curve_") for name in logged.data.metrics)


def test_a_job_logs_the_number_of_trees_and_leaves_its_library_reports(compose_job, runs_of):
    cfg = compose_job("dataset=wine", "engine=sklearn", "method.n_estimators=6", "seed=4")
    assert run_job(cfg) == "ok"
    [logged] = runs_of(cfg)
    X, y = load_wine(return_X_y=True)
    train, _ = holdout(X, y, seed=4)
    forest = sklearn.ensemble.RandomForestClassifier(6, random_state=4).fit(X[train], y[train])
    assert logged.data.metrics["n_trees"] == 6
    assert logged.data.metrics["n_leaves"] == sum(tree.tree_.n_leaves for tree in forest)


def test_a_parity_job_logs_the_largest_probability_difference(compose_job, runs_of):
    cfg = compose_job(
        "dataset=wine", "engine=sklearn", "method.n_estimators=10", "eval.parity=true", "seed=1"
    )
    assert run_job(cfg) == "ok"
    [logged] = runs_of(cfg)
    metrics = logged.data.metrics

    # independent: both forests fitted here on the job's split
    X, y = load_wine(return_X_y=True)
    train, test = holdout(X, y, seed=1)
    params = dict(n_estimators=10, max_features="sqrt", random_state=1, n_jobs=1)
    ours = ensembles.RandomForestClassifier(**params).fit(X[train], y[train])
    theirs = sklearn.ensemble.RandomForestClassifier(**params).fit(X[train], y[train])
    difference = np.abs(ours.predict_proba(X[test]) - theirs.predict_proba(X[test])).max()
    assert metrics["parity_max_abs_diff"] == pytest.approx(difference)
    assert metrics["parity_max_abs_diff"] > 0.05  # two random forests: not the same trees
    on_train = np.abs(ours.predict_proba(X[train]) - theirs.predict_proba(X[train])).max()
    assert metrics["parity_train_max_abs_diff"] == pytest.approx(on_train)
    error_difference = accuracy_score(y[test], theirs.predict(X[test])) - accuracy_score(
        y[test], ours.predict(X[test])
    )
    assert metrics["parity_metric_diff"] == pytest.approx(error_difference)


def test_a_deterministic_exact_mapping_has_parity_zero(compose_job, runs_of):
    """SAMME of stumps on wine (at most 178 distinct values a feature: binning loses nothing)."""
    cfg = compose_job(
        "dataset=wine", "method=adaboost", "engine=sklearn", "eval.parity=true", "seed=4"
    )
    assert run_job(cfg) == "ok"
    [logged] = runs_of(cfg)
    assert logged.data.metrics["parity_max_abs_diff"] < 1e-9
    assert logged.data.metrics["parity_metric_diff"] == 0.0


def test_xgboost_gbt_agrees_on_training_rows_but_not_between_training_values(compose_job, runs_of):
    """diabetes: at most 255 distinct values a feature, so binning loses nothing and the trees
    are XGBoost's; XGBoost splits at x < v_next and we at the midpoint of v and v_next, so a
    test row between two training values can take the other branch."""
    cfg = compose_job(
        "dataset=diabetes",
        "method=gbt",
        "engine=xgboost",
        "method.n_estimators=20",
        "eval.parity=true",
    )
    assert run_job(cfg) == "ok"
    [logged] = runs_of(cfg)
    assert logged.data.metrics["parity_train_max_abs_diff"] < 1e-3
    assert logged.data.metrics["parity_max_abs_diff"] > 1.0


def test_regression_parity_compares_predictions(compose_job, runs_of):
    cfg = compose_job(
        "dataset=diabetes", "method=l2boost", "engine=sklearn", "eval.parity=true", "seed=5"
    )
    assert run_job(cfg) == "ok"
    [logged] = runs_of(cfg)
    X, y = load_diabetes(return_X_y=True)
    train, test = holdout(X, y, seed=5, stratified=False)
    ours = ensembles.L2BoostRegressor(random_state=5).fit(X[train], y[train])
    theirs = sklearn.ensemble.GradientBoostingRegressor(random_state=5).fit(X[train], y[train])
    difference = np.abs(ours.predict(X[test]) - theirs.predict(X[test])).max()
    assert logged.data.metrics["parity_max_abs_diff"] == pytest.approx(difference)
    rmse_difference = root_mean_squared_error(
        y[test], ours.predict(X[test])
    ) - root_mean_squared_error(y[test], theirs.predict(X[test]))
    assert logged.data.metrics["parity_metric_diff"] == pytest.approx(rmse_difference)


def test_an_inhouse_job_has_no_parity_metrics(compose_job, runs_of):
    cfg = compose_job("dataset=wine", "method.n_estimators=5", "eval.parity=true")
    assert run_job(cfg) == "ok"
    [logged] = runs_of(cfg)
    assert not any(name.startswith("parity_") for name in logged.data.metrics)


def test_a_run_names_its_estimator_and_how_a_reference_approximates_it(compose_job, runs_of):
    cfg = compose_job(
        "dataset=breast_cancer", "method=gbt", "engine=lightgbm", "method.n_estimators=5"
    )
    assert run_job(cfg) == "ok"
    [logged] = runs_of(cfg)
    assert logged.data.tags["estimator"] == "lightgbm.sklearn.LGBMClassifier"
    assert logged.data.tags["approximation"] == "lightgbm grows best-first, not depthwise"


def test_a_method_on_a_task_it_does_not_run_is_a_skipped_run(compose_job, runs_of):
    cfg = compose_job("dataset=diabetes", "method=adaboost")
    assert run_job(cfg) == "skipped"
    [logged] = runs_of(cfg)
    assert logged.data.tags["skip_reason"] == "adaboost does not run on regression tasks"
