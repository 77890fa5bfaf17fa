"""The method config -> estimator mapping of each engine, and the combinations it skips."""

import lightgbm
import numpy as np
import pytest
import sklearn.ensemble
import xgboost
from omegaconf import OmegaConf
from sklearn.datasets import make_friedman1
from sklearn.metrics import root_mean_squared_error
from sklearn.model_selection import train_test_split

import ensembles
from ensembles import warm
from ensembles.methods.validation import resolve_max_features
from experiments.configs import (
    BaggingConfig,
    Config,
    DatasetConfig,
    EngineConfig,
    LossConfig,
    RandomForestConfig,
    Task,
)
from experiments.engines import SkippedJob, build_estimator, inhouse_class_name
from experiments.engines.catalog import DECLARATIONS

CLASSES = {
    ("inhouse", Task.binary): ensembles.RandomForestClassifier,
    ("inhouse", Task.regression): ensembles.RandomForestRegressor,
    ("sklearn", Task.multiclass): sklearn.ensemble.RandomForestClassifier,
    ("sklearn", Task.regression): sklearn.ensemble.RandomForestRegressor,
    ("xgboost", Task.binary): xgboost.XGBRFClassifier,
    ("xgboost", Task.regression): xgboost.XGBRFRegressor,
    ("lightgbm", Task.multiclass): lightgbm.LGBMClassifier,
    ("lightgbm", Task.regression): lightgbm.LGBMRegressor,
}


def job(engine: str, task: Task = Task.regression, loss: str = "auto", seed: int = 0, **method):
    """A job config as composition would give it, without going through Hydra."""
    cfg = OmegaConf.structured(
        Config(
            dataset=DatasetConfig(name="friedman1", task=task),
            loss=LossConfig(name=loss),
            engine=EngineConfig(name=engine),
            seed=seed,
        )
    )
    cfg.method = OmegaConf.merge(RandomForestConfig, method)
    return cfg


@pytest.mark.parametrize(("engine", "task"), CLASSES)
def test_each_engine_builds_its_forest(engine, task):
    estimator = build_estimator(job(engine, task, seed=7), (1000, 10))
    assert type(estimator) is CLASSES[engine, task]
    assert estimator.get_params()["n_estimators"] == 100
    assert estimator.get_params()["random_state"] == 7


def test_inhouse_and_sklearn_get_the_same_hyper_parameters():
    method = {"max_depth": 4, "min_samples_leaf": 3, "max_features": 0.5, "criterion": "entropy"}
    inhouse = build_estimator(job("inhouse", Task.binary, **method), (100, 4)).get_params()
    reference = build_estimator(job("sklearn", Task.binary, **method), (100, 4)).get_params()
    assert {key: inhouse[key] for key in reference.keys() & inhouse.keys()} == {
        key: reference[key] for key in reference.keys() & inhouse.keys()
    }
    assert (reference["max_depth"], reference["criterion"]) == (4, "entropy")


@pytest.mark.parametrize("max_features", ["sqrt", "log2", 3, 0.5, 0.01, None])
def test_features_per_split_resolve_as_in_scikit_learn(max_features):
    X, y = make_friedman1(n_samples=50, n_features=30, random_state=0)
    forest = sklearn.ensemble.RandomForestRegressor(
        n_estimators=1, max_features=max_features, random_state=0
    ).fit(X, y)
    assert resolve_max_features(max_features, 30) == forest.estimators_[0].max_features_


@pytest.mark.parametrize(("task", "expected"), [(Task.binary, "sqrt"), (Task.regression, 1.0)])
def test_max_features_auto_is_scikit_learns_default_of_the_task(task, expected):
    """scikit-learn's own defaults: sqrt features per split to classify, all to regress."""
    sklearn_default = (
        sklearn.ensemble.RandomForestRegressor() if task is Task.regression
        else sklearn.ensemble.RandomForestClassifier()
    ).max_features
    assert expected == sklearn_default
    for engine in ("inhouse", "sklearn"):
        params = build_estimator(job(engine, task), (1000, 30)).get_params()
        assert params["max_features"] == expected
    xgboost_params = build_estimator(job("xgboost", task), (1000, 30)).get_params()
    assert int(xgboost_params["colsample_bynode"] * 30) == resolve_max_features(expected, 30)


def test_xgboost_draws_exactly_the_features_per_split():
    params = build_estimator(job("xgboost", max_features="sqrt"), (1000, 30)).get_params()
    assert int(params["colsample_bynode"] * 30) == 5  # XGBoost truncates fraction * n_features


@pytest.mark.parametrize(
    ("engine", "task", "method", "loss", "reason"),
    [
        ("sklearn", Task.binary, {}, "logistic", "random_forest does not take loss 'logistic'"),
        ("sklearn", Task.binary, {}, "squared", "random_forest does not take loss 'squared'"),
        ("xgboost", Task.regression, {"oob_score": True}, "auto", "xgboost has no out-of-bag"),
        ("xgboost", Task.binary, {"criterion": "entropy"}, "auto", "xgboost splits on gradient"),
        ("xgboost", Task.binary, {"min_samples_leaf": 5}, "auto", "xgboost bounds a class"),
        ("lightgbm", Task.regression, {"min_samples_split": 4}, "auto", "lightgbm has no min_"),
        ("lightgbm", Task.regression, {"bootstrap": False}, "auto", "lightgbm's rf mode needs"),
        ("lightgbm", Task.regression, {"max_features": 1}, "auto", "lightgbm draws at least 2"),
        ("nope", Task.regression, {}, "auto", "no nope implementation of random_forest"),
    ],
)
def test_combinations_without_a_faithful_mapping_are_skipped(engine, task, method, loss, reason):
    with pytest.raises(SkippedJob, match=reason):
        build_estimator(job(engine, task, loss, **method), (1000, 10))


def test_squared_loss_is_the_random_forest_regression_loss():
    assert build_estimator(job("sklearn", loss="squared"), (100, 4)) is not None


@pytest.mark.parametrize("max_depth", [None, 3])
@pytest.mark.parametrize("engine", ["inhouse", "xgboost", "lightgbm"])
def test_every_engine_forest_is_as_accurate_as_scikit_learn_on_friedman1(engine, max_depth):
    X, y = make_friedman1(n_samples=1200, noise=1.0, random_state=0)
    X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)

    def rmse(engine: str) -> float:
        estimator = build_estimator(
            job(engine, n_estimators=50, max_depth=max_depth), X_train.shape
        )
        return root_mean_squared_error(y_test, estimator.fit(X_train, y_train).predict(X_test))

    # RMSE 2.1 unlimited, 3.4 at depth 3: a depth that is not mapped fails this
    assert rmse(engine) == pytest.approx(rmse("sklearn"), rel=0.1)


def test_each_engine_gets_the_sample_fraction():
    """scikit-learn and in-house draw int(0.3 n) rows with replacement; XGBoost and LightGBM
    subsample without replacement the share of distinct rows such a bootstrap holds (measured
    here on numpy's draws)."""
    n_samples, share = 20000, 0.3
    draws = np.random.RandomState(0).randint(0, n_samples, int(share * n_samples))
    distinct = np.unique(draws).size / n_samples
    built = {engine: build_estimator(job(engine, max_samples=share), (n_samples, 10)).get_params()
             for engine in ("inhouse", "sklearn", "xgboost", "lightgbm")}  # fmt: skip
    assert built["inhouse"]["max_samples"] == share
    assert built["sklearn"]["max_samples"] == share
    assert built["xgboost"]["subsample"] == pytest.approx(distinct, abs=0.005)
    assert built["lightgbm"]["bagging_fraction"] == pytest.approx(distinct, abs=0.005)


@pytest.mark.parametrize("engine", ["sklearn", "inhouse", "xgboost", "lightgbm"])
def test_a_sample_fraction_without_a_bootstrap_is_refused_as_scikit_learn_does(engine):
    """scikit-learn's forests refuse max_samples with bootstrap=False (`max_sample` cannot be
    set...); every engine refuses it alike, by the time it fits."""
    X, y = make_friedman1(n_samples=50, random_state=0)
    with pytest.raises(ValueError, match="max_sample"):
        build_estimator(job(engine, bootstrap=False, max_samples=0.3), X.shape).fit(X, y)


@pytest.mark.parametrize("engine", ["inhouse", "sklearn"])
def test_bagging_takes_the_sample_fraction_as_the_forests(engine):
    bagging = job(engine)
    bagging.method = OmegaConf.merge(BaggingConfig, {"max_samples": 0.3})
    assert build_estimator(bagging, (100, 4)).get_params()["max_samples"] == 0.3
    bagging.method.bootstrap = False
    X, y = make_friedman1(n_samples=50, random_state=0)
    with pytest.raises(ValueError, match="max_samples is the size of a bootstrap"):
        build_estimator(bagging, X.shape).fit(X, y)


@pytest.mark.parametrize("declaration", DECLARATIONS, ids=lambda declaration: declaration.key)
def test_a_job_warms_the_class_it_builds(declaration):
    """inhouse_class_name (the estimator whose kernels a job compiles first: ensembles.warm)
    names the class build_estimator makes, and the warm-up has fits of it."""
    for task in declaration.losses:
        cfg = job("inhouse", task)
        cfg.method = OmegaConf.structured(declaration.schema)
        estimator = build_estimator(cfg, (1000, 10))
        assert inhouse_class_name(cfg) == type(estimator).__name__
        assert warm.estimator_fits(type(estimator).__name__)
