"""Method config -> the Built estimator of an engine: which builder serves each (method,
engine), which losses each method takes per task, and why a pair without a builder is skipped."""

from collections.abc import Callable

import numpy as np
from omegaconf import DictConfig
from sklearn.base import BaseEstimator
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

from experiments.configs import EngineDefaults, Task, method_key
from experiments.datasets import categorical_columns, native_category_counts
from experiments.engines.categorical import with_native_categories
from experiments.engines.inhouse import inhouse_estimator, inhouse_gbt
from experiments.engines.library_defaults import with_library_defaults
from experiments.engines.lightgbm_models import lightgbm_gbt, lightgbm_random_forest
from experiments.engines.sklearn_models import (
    sklearn_adaboost,
    sklearn_bagging,
    sklearn_forest,
    sklearn_gbt,
    sklearn_l2boost,
)
from experiments.engines.spec import Built, SkippedJob, Spec
from experiments.engines.xgboost_models import xgboost_gbt, xgboost_random_forest

FOREST_LOSSES = {
    Task.binary: {"auto"},
    Task.multiclass: {"auto"},
    Task.regression: {"auto", "squared"},
}
VALID_LOSSES: dict[str, dict[Task, set[str]]] = {
    "random_forest": FOREST_LOSSES,
    "extra_trees": FOREST_LOSSES,
    "bagging": FOREST_LOSSES,
    "adaboost": {Task.binary: {"auto", "exponential"}, Task.multiclass: {"auto", "exponential"}},
    "logitboost": {Task.binary: {"auto", "logistic"}, Task.multiclass: {"auto", "softmax"}},
    "l2boost": {task: {"auto", "squared"} for task in Task},
    "gbt": {
        Task.regression: {"auto", "squared", "absolute", "huber", "quantile", "poisson"},
        Task.binary: {"auto", "logistic", "exponential", "softmax"},
        Task.multiclass: {"auto", "softmax"},
    },
}

Builder = Callable[[Spec], Built]

BUILDERS: dict[tuple[str, str], Builder] = {
    ("random_forest", "inhouse"): inhouse_estimator,
    ("random_forest", "sklearn"): sklearn_forest,
    ("random_forest", "xgboost"): xgboost_random_forest,
    ("random_forest", "lightgbm"): lightgbm_random_forest,
    ("extra_trees", "inhouse"): inhouse_estimator,
    ("extra_trees", "sklearn"): sklearn_forest,
    ("bagging", "inhouse"): inhouse_estimator,
    ("bagging", "sklearn"): sklearn_bagging,
    ("adaboost", "inhouse"): inhouse_estimator,
    ("adaboost", "sklearn"): sklearn_adaboost,
    ("logitboost", "inhouse"): inhouse_estimator,
    ("l2boost", "inhouse"): inhouse_estimator,
    ("l2boost", "sklearn"): sklearn_l2boost,
    ("gbt", "inhouse"): inhouse_gbt,
    ("gbt", "xgboost"): xgboost_gbt,
    ("gbt", "lightgbm"): lightgbm_gbt,
    ("gbt", "sklearn"): sklearn_gbt,
}

NO_REFERENCE: dict[tuple[str, str], str] = {
    ("extra_trees", "xgboost"): "xgboost has no random-threshold (extra) trees",
    ("extra_trees", "lightgbm"): "lightgbm's rf mode needs row bagging; extra trees use all rows",
    ("bagging", "xgboost"): "xgboost subsamples rows without replacement; no bootstrap of trees",
    ("bagging", "lightgbm"): "lightgbm subsamples rows without replacement; no bootstrap of trees",
    ("adaboost", "xgboost"): "xgboost has no AdaBoost (SAMME)",
    ("adaboost", "lightgbm"): "lightgbm has no AdaBoost (SAMME)",
    ("l2boost", "xgboost"): "l2boost's reference is scikit-learn's GradientBoostingRegressor",
    ("l2boost", "lightgbm"): "l2boost's reference is scikit-learn's GradientBoostingRegressor",
    **{
        ("logitboost", engine): "no reference library implements LogitBoost (FHT 2000)"
        for engine in ("sklearn", "xgboost", "lightgbm")
    },
}


def check_loss(method: str, loss: str, task: Task) -> None:
    """Raise SkippedJob unless `method` can be trained with `loss` on a `task` problem."""
    valid = VALID_LOSSES.get(method, {}).get(task, set())
    if not valid:
        raise SkippedJob(f"{method} does not run on {task.value} tasks")
    if loss not in valid:
        raise SkippedJob(
            f"{method} does not take loss '{loss}' on {task.value} tasks; "
            f"valid: {', '.join(sorted(valid))}"
        )


def build(cfg: DictConfig, shape: tuple[int, int], engine: str | None = None) -> Built:
    """The unfitted estimator of the job config for data of `shape` (n_samples, n_features),
    run by `engine` (default: the job's own), with its approximation tag; SkippedJob with the
    reason where the combination cannot run. With dataset.categorical=native it splits the
    dataset's categorical columns natively where it can (engines.categorical); with
    engine.defaults_from=library a reference library runs at its own defaults
    (engines.library_defaults)."""
    method, task = method_key(cfg.method), cfg.dataset.task
    engine = engine or cfg.engine.name
    check_loss(method, cfg.loss.name, task)
    if (method, engine) not in BUILDERS:
        default = f"no {engine} implementation of {method}"
        raise SkippedJob(NO_REFERENCE.get((method, engine), default))
    method_config = with_task_defaults(cfg.method, task)
    spec = Spec(method_config, cfg.loss, task, tuple(shape), cfg.seed, cfg.engine.n_jobs)
    built = BUILDERS[method, engine](spec)
    if cfg.engine.get("defaults_from") is EngineDefaults.library:
        if cfg.tune.name != "none":
            raise SkippedJob("engine.defaults_from=library is an untuned column: tuning "
                             "starts from the lab's defaults")
        built, method_config = with_library_defaults(built, engine), None
    columns = native_columns(cfg.dataset)
    if columns:
        check_category_counts(built.estimator, native_category_counts(cfg.dataset))
    return with_native_categories(built, columns, shape[1], method_config)


def check_category_counts(estimator: BaseEstimator, counts: dict[str, int]) -> None:
    """SkippedJob when scikit-learn's HistGradientBoosting is to split a column of more
    categories than its max_bins (255): it refuses them, where the in-house engine and LightGBM
    group the rarest and XGBoost takes any."""
    if not isinstance(estimator, HistGradientBoostingClassifier | HistGradientBoostingRegressor):
        return
    for name, count in counts.items():
        if count > estimator.max_bins:
            raise SkippedJob(f"{type(estimator).__name__} splits at most {estimator.max_bins} "
                             f"categories; column '{name}' has {count} "
                             "(dataset.categorical=ordinal runs it)")


def check_takes_missing_values(estimator: BaseEstimator, X: np.ndarray) -> None:
    """SkippedJob when X has missing values (NaN) and the estimator does not take them
    (scikit-learn's tag allow_nan: its AdaBoost and GradientBoosting): imputing would change
    the data the engines compare on, so the job is skipped rather than run on other data."""
    if estimator.__sklearn_tags__().input_tags.allow_nan:
        return
    share = float(np.isnan(X).mean())
    if share > 0:
        raise SkippedJob(f"{type(estimator).__name__} does not take missing values (NaN in "
                         f"{100 * share:.2g}% of the cells of X)")


def native_columns(dataset: DictConfig) -> tuple[int, ...]:
    """The categorical columns of a dataset with categorical=native (from the loaded data,
    which the job has loaded before it builds); none otherwise."""
    encoding = dataset.get("categorical")
    if getattr(encoding, "value", encoding) != "native":
        return ()
    return categorical_columns(dataset)


def build_estimator(cfg: DictConfig, shape: tuple[int, int], engine: str | None = None):
    """build(...) without its approximation tag: the unfitted estimator alone."""
    return build(cfg, shape, engine).estimator


def with_task_defaults(method: DictConfig, task: Task) -> DictConfig:
    """The method config with max_features=auto resolved to scikit-learn's default for the
    task: sqrt for classification (Breiman 2001), 1.0 (every feature) for regression."""
    if method.get("max_features") != "auto":
        return method
    resolved = method.copy()
    resolved.max_features = 1.0 if task is Task.regression else "sqrt"
    return resolved
