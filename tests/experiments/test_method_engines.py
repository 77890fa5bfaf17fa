"""Every method on every engine: the estimator it builds (and that it fits), or the reason it is
skipped; the loss and tree parameters each reference receives; and, on data that binning does
not coarsen, the same predictions as the in-house engine where the mapping claims to be exact."""

import inspect
import re

import lightgbm
import numpy as np
import pytest
import sklearn.ensemble as sk
import xgboost
from omegaconf import OmegaConf
from sklearn.base import is_classifier
from sklearn.datasets import make_classification, make_friedman1
from threadpoolctl import threadpool_limits

import ensembles
from experiments.configs import (
    SCHEMAS,
    Config,
    DatasetConfig,
    EngineConfig,
    HuberLossConfig,
    LossConfig,
    QuantileLossConfig,
    Task,
    method_key,
)
from experiments.engines import SkippedJob, build, build_estimator, with_task_defaults

ENGINES = ["inhouse", "sklearn", "xgboost", "lightgbm"]
NO_REGRESSION = "does not run on regression tasks"

# (method, engine) -> what a binary task and a regression task give: a class, or a skip reason
MAPPING = {
    ("random_forest", "inhouse"): (
        ensembles.RandomForestClassifier,
        ensembles.RandomForestRegressor,
    ),
    ("random_forest", "sklearn"): (sk.RandomForestClassifier, sk.RandomForestRegressor),
    ("random_forest", "xgboost"): (xgboost.XGBRFClassifier, xgboost.XGBRFRegressor),
    ("random_forest", "lightgbm"): (lightgbm.LGBMClassifier, lightgbm.LGBMRegressor),
    ("extra_trees", "inhouse"): (ensembles.ExtraTreesClassifier, ensembles.ExtraTreesRegressor),
    ("extra_trees", "sklearn"): (sk.ExtraTreesClassifier, sk.ExtraTreesRegressor),
    ("extra_trees", "xgboost"): ("xgboost has no random-threshold",) * 2,
    ("extra_trees", "lightgbm"): ("lightgbm's rf mode needs row bagging",) * 2,
    ("bagging", "inhouse"): (ensembles.BaggingClassifier, ensembles.BaggingRegressor),
    ("bagging", "sklearn"): (sk.BaggingClassifier, sk.BaggingRegressor),
    ("bagging", "xgboost"): ("xgboost subsamples rows without replacement",) * 2,
    ("bagging", "lightgbm"): ("lightgbm subsamples rows without replacement",) * 2,
    ("adaboost", "inhouse"): (ensembles.AdaBoostClassifier, NO_REGRESSION),
    ("adaboost", "sklearn"): (sk.AdaBoostClassifier, NO_REGRESSION),
    ("adaboost", "xgboost"): ("xgboost has no AdaBoost", NO_REGRESSION),
    ("adaboost", "lightgbm"): ("lightgbm has no AdaBoost", NO_REGRESSION),
    ("logitboost", "inhouse"): (ensembles.LogitBoostClassifier, NO_REGRESSION),
    **{
        ("logitboost", engine): ("no reference library implements LogitBoost", NO_REGRESSION)
        for engine in ("sklearn", "xgboost", "lightgbm")
    },
    ("l2boost", "inhouse"): (ensembles.L2BoostClassifier, ensembles.L2BoostRegressor),
    ("l2boost", "sklearn"): (
        "no reference library fits least squares on +-1 class codes",
        sk.GradientBoostingRegressor,
    ),
    ("l2boost", "xgboost"): ("l2boost's reference is scikit-learn's",) * 2,
    ("l2boost", "lightgbm"): ("l2boost's reference is scikit-learn's",) * 2,
    ("gbt", "inhouse"): (
        ensembles.GradientBoostingClassifier,
        ensembles.GradientBoostingRegressor,
    ),
    ("gbt", "sklearn"): (sk.HistGradientBoostingClassifier, sk.HistGradientBoostingRegressor),
    ("gbt", "xgboost"): (xgboost.XGBClassifier, xgboost.XGBRegressor),
    ("gbt", "lightgbm"): (lightgbm.LGBMClassifier, lightgbm.LGBMRegressor),
}
CASES = [
    (method, engine, task, outcome)
    for (method, engine), outcomes in MAPPING.items()
    for task, outcome in zip((Task.binary, Task.regression), outcomes, strict=True)
]


def job(method: str, engine: str, task: Task, loss: str = "auto", seed: int = 0, **overrides):
    """A job config as composition gives it (schema defaults), without going through Hydra."""
    losses = {"quantile": QuantileLossConfig, "huber": HuberLossConfig}
    loss_node = OmegaConf.merge(losses.get(loss, LossConfig), {"name": loss})
    cfg = OmegaConf.structured(
        Config(
            dataset=DatasetConfig(name="data", task=task),
            engine=EngineConfig(name=engine),
            seed=seed,
        )
    )
    cfg.loss = loss_node
    cfg.method = OmegaConf.merge(SCHEMAS["method"][f"{method}_schema"], overrides)
    return cfg


def small_data(task: Task) -> tuple[np.ndarray, np.ndarray]:
    if task is Task.regression:
        return make_friedman1(n_samples=120, random_state=0)
    return make_classification(n_samples=120, n_features=6, random_state=0)


def test_the_table_covers_every_method_and_engine():
    methods = {name.removesuffix("_schema") for name in SCHEMAS["method"]}
    assert {method for method, _ in MAPPING} == methods
    assert len(MAPPING) == len(methods) * len(ENGINES)


@pytest.mark.parametrize(("method", "engine", "task", "outcome"), CASES)
def test_each_method_builds_and_fits_on_each_engine_or_is_skipped(method, engine, task, outcome):
    X, y = small_data(task)
    cfg = job(method, engine, task, seed=3, n_estimators=3)
    if isinstance(outcome, str):
        with pytest.raises(SkippedJob, match=re.escape(outcome)):
            build_estimator(cfg, X.shape)
        return
    estimator = build_estimator(cfg, X.shape)
    assert type(estimator) is outcome
    params = estimator.get_params()
    assert params.get("n_estimators", params.get("max_iter")) == 3
    assert params["random_state"] == 3
    with threadpool_limits(limits=1, user_api="openmp"):  # as a job runs it
        assert estimator.fit(X, y).predict(X).shape == y.shape


@pytest.mark.parametrize(
    ("method", "task", "loss", "reason"),
    [
        ("gbt", Task.multiclass, "logistic", "gbt does not take loss 'logistic' on multiclass"),
        ("gbt", Task.regression, "exponential", "gbt does not take loss 'exponential'"),
        ("gbt", Task.binary, "poisson", "gbt does not take loss 'poisson' on binary"),
        ("logitboost", Task.binary, "softmax", "valid: auto, logistic"),
        ("logitboost", Task.multiclass, "logistic", "valid: auto, softmax"),
        ("adaboost", Task.binary, "logistic", "valid: auto, exponential"),
        ("l2boost", Task.regression, "absolute", "valid: auto, squared"),
        ("bagging", Task.regression, "huber", "valid: auto, squared"),
        ("extra_trees", Task.binary, "squared", "valid: auto$"),
    ],
)
def test_an_invalid_method_loss_task_triple_is_skipped(method, task, loss, reason):
    for engine in ENGINES:
        with pytest.raises(SkippedJob, match=reason):
            build_estimator(job(method, engine, task, loss), (100, 4))


# (loss, task, engine) -> the parameters the reference receives, or the reason it is skipped
GBT_LOSSES = [
    ("auto", Task.regression, "inhouse", {"loss": "squared"}),
    ("auto", Task.binary, "inhouse", {"loss": "logistic"}),
    ("auto", Task.multiclass, "inhouse", {"loss": "softmax"}),
    ("quantile", Task.regression, "inhouse", {"loss": "quantile", "quantile_alpha": 0.8}),
    ("huber", Task.regression, "inhouse", {"loss": "huber", "huber_delta": 2.5}),
    ("exponential", Task.binary, "inhouse", {"loss": "exponential"}),
    ("auto", Task.regression, "xgboost", {"objective": "reg:squarederror"}),
    ("absolute", Task.regression, "xgboost", {"objective": "reg:absoluteerror"}),
    ("quantile", Task.regression, "xgboost", {"objective": "reg:quantileerror"}),
    ("poisson", Task.regression, "xgboost", {"objective": "count:poisson", "max_delta_step": 0}),
    ("logistic", Task.binary, "xgboost", {"objective": "binary:logistic"}),
    ("auto", Task.multiclass, "xgboost", {"objective": "multi:softprob"}),
    ("huber", Task.regression, "xgboost", "pseudo-Huber loss, not Huber's"),
    ("exponential", Task.binary, "xgboost", "xgboost has no exponential loss"),
    ("softmax", Task.binary, "xgboost", "predicts 2-class softprob as multi-label"),
    ("squared", Task.regression, "lightgbm", {"objective": "regression"}),
    ("absolute", Task.regression, "lightgbm", {"objective": "regression_l1"}),
    ("huber", Task.regression, "lightgbm", {"objective": "huber", "alpha": 2.5}),
    ("quantile", Task.regression, "lightgbm", {"objective": "quantile", "alpha": 0.8}),
    ("poisson", Task.regression, "lightgbm", {"objective": "poisson"}),
    ("auto", Task.binary, "lightgbm", {"objective": "binary"}),
    ("softmax", Task.binary, "lightgbm", {"objective": "multiclass", "num_class": 2}),
    ("softmax", Task.multiclass, "lightgbm", {"objective": "multiclass"}),
    ("exponential", Task.binary, "lightgbm", "lightgbm has no exponential loss"),
    ("squared", Task.regression, "sklearn", {"loss": "squared_error"}),
    ("absolute", Task.regression, "sklearn", {"loss": "absolute_error"}),
    ("quantile", Task.regression, "sklearn", {"loss": "quantile", "quantile": 0.8}),
    ("poisson", Task.regression, "sklearn", {"loss": "poisson"}),
    ("auto", Task.binary, "sklearn", {"loss": "log_loss"}),
    ("auto", Task.multiclass, "sklearn", {"loss": "log_loss"}),
    ("huber", Task.regression, "sklearn", "HistGradientBoosting has no huber loss"),
    ("softmax", Task.binary, "sklearn", "one logistic tree a round, not softmax"),
]


@pytest.mark.parametrize(("loss", "task", "engine", "expected"), GBT_LOSSES)
def test_each_gbt_loss_reaches_each_engine_with_its_parameter(loss, task, engine, expected):
    cfg = job("gbt", engine, task, loss)
    if loss == "quantile":
        cfg.loss.alpha = 0.8
    if loss == "huber":
        cfg.loss.delta = 2.5
    if isinstance(expected, str):
        with pytest.raises(SkippedJob, match=expected):
            build_estimator(cfg, (100, 4))
        return
    params = build_estimator(cfg, (100, 4)).get_params()
    assert {key: params[key] for key in expected} == expected


@pytest.mark.parametrize(
    ("engine", "tree", "expected"),
    [
        ("lightgbm", {}, {"num_leaves": 64, "max_depth": 6}),
        ("lightgbm", {"max_depth": 0, "max_leaves": 31}, {"num_leaves": 31, "max_depth": -1}),
        (
            "lightgbm",
            {"gamma": 0.5, "subsample": 0.8},
            {"min_split_gain": 0.5, "subsample_freq": 1},
        ),
        ("sklearn", {}, {"max_leaf_nodes": None, "max_depth": 6, "early_stopping": False}),
        ("sklearn", {"max_depth": 0, "max_leaves": 31}, {"max_leaf_nodes": 31, "max_depth": None}),
        ("sklearn", {"min_child_weight": 5.0}, {"min_samples_leaf": 5}),
        ("sklearn", {"reg_lambda": 2.0}, {"l2_regularization": 2.0}),
        ("sklearn", {"early_stopping_rounds": 5}, {"early_stopping": True, "n_iter_no_change": 5}),
        ("xgboost", {"grow_policy": "lossguide"}, {"grow_policy": "lossguide", "max_bin": 255}),
    ],
)
def test_gbt_tree_parameters_are_mapped(engine, tree, expected):
    params = build_estimator(job("gbt", engine, Task.regression, **tree), (100, 4)).get_params()
    assert {key: params[key] for key in expected} == expected


@pytest.mark.parametrize(
    ("engine", "tree", "reason"),
    [
        ("xgboost", {"min_child_samples": 5}, "xgboost has no min_child_samples"),
        ("lightgbm", {"base_score": 0.5}, "lightgbm has no base_score"),
        ("sklearn", {"reg_alpha": 1.0}, "sklearn has no reg_alpha"),
        ("sklearn", {"subsample": 0.8}, r"sklearn has no subsample \(got 0.8\)"),
    ],
)
def test_gbt_parameters_a_reference_lacks_are_skipped(engine, tree, reason):
    with pytest.raises(SkippedJob, match=reason):
        build_estimator(job("gbt", engine, Task.regression, **tree), (100, 4))


def approximation(*job_args, **method) -> str | None:
    return build(job(*job_args, **method), (100, 4)).approximation


def test_each_builder_tags_what_its_engine_approximates():
    assert approximation("gbt", "xgboost", Task.binary) is None
    assert approximation("gbt", "lightgbm", Task.regression) == (
        "lightgbm grows best-first, not depthwise"
    )
    assert approximation("gbt", "sklearn", Task.regression) == (
        "sklearn grows best-first, not depthwise"
    )
    lossguide = {"grow_policy": "lossguide", "max_depth": 0, "max_leaves": 31}
    assert approximation("gbt", "sklearn", Task.regression, **lossguide) is None
    assert approximation("gbt", "sklearn", Task.binary, **lossguide) == (
        "sklearn bounds leaves by min_samples_leaf only (no min_child_weight)"
    )
    assert approximation("random_forest", "sklearn", Task.binary) is None
    assert approximation("random_forest", "inhouse", Task.binary) is None
    for engine in ("xgboost", "lightgbm"):
        assert approximation("random_forest", engine, Task.regression) == (
            f"{engine} subsamples 63.2% of the rows without replacement, not a bootstrap"
        )
        binary = approximation("random_forest", engine, Task.binary)
        assert binary.startswith(f"{engine} subsamples 63.2% of the rows without replacement")
        assert "one Newton step of the logistic loss" in binary
        assert "leans to the minority class" in binary
        assert "one tree per class" in approximation("random_forest", engine, Task.multiclass)
    assert approximation("random_forest", "xgboost", Task.regression, bootstrap=False) is None


@pytest.mark.parametrize(
    ("method", "model"),
    [
        ("random_forest", ensembles.RandomForestClassifier),
        ("extra_trees", ensembles.ExtraTreesClassifier),
        ("bagging", ensembles.BaggingClassifier),
        ("adaboost", ensembles.AdaBoostClassifier),
        ("logitboost", ensembles.LogitBoostClassifier),
        ("l2boost", ensembles.L2BoostRegressor),
        ("gbt", ensembles.GradientBoostingClassifier),
    ],
)
def test_method_defaults_are_the_estimator_defaults(method, model):
    task = Task.binary if is_classifier(model()) else Task.regression
    config = with_task_defaults(OmegaConf.structured(SCHEMAS["method"][f"{method}_schema"]), task)
    defaults = OmegaConf.to_container(config, enum_to_str=True)
    assert method_key(OmegaConf.structured(SCHEMAS["method"][f"{method}_schema"])) == method
    signature = inspect.signature(model).parameters
    shared = defaults.keys() & signature.keys()
    assert len(shared) >= len(defaults) - 2  # name, and criterion/loss where the model has none
    assert {key: defaults[key] for key in shared} == {key: signature[key].default for key in shared}


def rounded_data(task: Task) -> tuple[np.ndarray, np.ndarray]:
    """At most 255 distinct values per feature: binning loses nothing, every engine sees the
    same thresholds."""
    if task is Task.regression:
        X, y = make_friedman1(n_samples=1000, random_state=0)
        return np.round(X, 2), y
    X, y = make_classification(n_samples=1000, n_features=8, n_informative=5, random_state=0)
    return np.round(X, 1), y


LOSSGUIDE = {
    "grow_policy": "lossguide",
    "max_depth": 0,
    "max_leaves": 15,
    "min_child_weight": 1e-3,
    "min_child_samples": 20,
    "learning_rate": 0.1,
}


@pytest.mark.parametrize(
    ("method", "engine", "task", "overrides"),
    [
        ("gbt", "xgboost", Task.regression, {"base_score": 0.5}),
        ("gbt", "xgboost", Task.binary, {"base_score": 0.3, "reg_lambda": 2.0, "gamma": 0.5}),
        ("gbt", "lightgbm", Task.regression, LOSSGUIDE),
        ("gbt", "sklearn", Task.regression, LOSSGUIDE),
        ("adaboost", "sklearn", Task.binary, {"n_estimators": 40}),
        ("l2boost", "sklearn", Task.regression, {}),
    ],
)
def test_exact_mappings_predict_as_the_inhouse_engine(method, engine, task, overrides):
    X, y = rounded_data(task)
    cfg = job(method, engine, task, **{"n_estimators": 20, **overrides})
    with threadpool_limits(limits=1, user_api="openmp"):  # as a job runs it
        reference = build_estimator(cfg, X.shape).fit(X, y)
        inhouse = build_estimator(cfg, X.shape, engine="inhouse").fit(X, y)
    if task is Task.regression:
        np.testing.assert_allclose(inhouse.predict(X), reference.predict(X), atol=1e-4)
    else:
        np.testing.assert_allclose(inhouse.predict_proba(X), reference.predict_proba(X), atol=1e-4)
