"""Method config -> an unfitted scikit-learn-compatible estimator, per engine.

Two engines differ here and nowhere else. A (method, loss, engine, task) combination without a
faithful mapping raises SkippedJob with a one-line reason, which the job logs as a skipped run.
"""

from collections.abc import Callable
from types import ModuleType

import numpy as np
from omegaconf import DictConfig
from sklearn.base import BaseEstimator

from experiments.configs import Criterion, Task

BOOTSTRAP_FRACTION = 1.0 - np.exp(-1.0)  # expected share of distinct rows in a bootstrap, 0.632
LIGHTGBM_MAX_LEAVES = 131072


class SkippedJob(Exception):
    """A combination that cannot run; the message is the one-line reason."""


VALID_LOSSES: dict[str, dict[Task, set[str]]] = {
    "random_forest": {
        Task.binary: {"auto"},
        Task.multiclass: {"auto"},
        Task.regression: {"auto", "squared"},
    },
}


def check_loss(method: str, loss: str, task: Task) -> None:
    """Raise SkippedJob unless `method` can be trained with `loss` on a `task` problem."""
    valid = VALID_LOSSES.get(method, {}).get(task, set())
    if loss not in valid:
        raise SkippedJob(
            f"{method} does not take loss '{loss}' on {task.value} tasks; "
            f"valid: {', '.join(sorted(valid)) or 'none'}"
        )


def n_features_per_split(max_features: object, n_features: int) -> int:
    """Features drawn per split, resolved as scikit-learn does for max_features."""
    if max_features is None:
        return n_features
    if max_features == "sqrt":
        return max(1, int(np.sqrt(n_features)))
    if max_features == "log2":
        return max(1, int(np.log2(n_features)))
    if isinstance(max_features, int) and not isinstance(max_features, bool):
        return max_features
    if isinstance(max_features, float):
        return max(1, int(max_features * n_features))
    raise ValueError(f"max_features: {max_features!r} is not sqrt, log2, an int, a float or null")


def _scikit_forest(
    module: ModuleType, method: DictConfig, task: Task, seed: int, n_jobs: int
) -> BaseEstimator:
    """RandomForest* of a module with scikit-learn's constructor (sklearn.ensemble, ensembles)."""
    params = {
        "n_estimators": method.n_estimators,
        "max_depth": method.max_depth,
        "min_samples_split": method.min_samples_split,
        "min_samples_leaf": method.min_samples_leaf,
        "max_features": method.max_features,
        "bootstrap": method.bootstrap,
        "oob_score": method.oob_score,
        "random_state": seed,
        "n_jobs": n_jobs,
    }
    if task is Task.regression:
        return module.RandomForestRegressor(**params)
    return module.RandomForestClassifier(criterion=method.criterion.value, **params)


def inhouse_random_forest(
    method: DictConfig, task: Task, shape: tuple[int, int], seed: int, n_jobs: int
) -> BaseEstimator:
    import ensembles

    return _scikit_forest(ensembles, method, task, seed, n_jobs)


def sklearn_random_forest(
    method: DictConfig, task: Task, shape: tuple[int, int], seed: int, n_jobs: int
) -> BaseEstimator:
    import sklearn.ensemble

    return _scikit_forest(sklearn.ensemble, method, task, seed, n_jobs)


def _check_boosting_library_forest(method: DictConfig, task: Task, engine: str) -> None:
    """Skip the random-forest parameters that XGBoost's and LightGBM's rf modes do not have."""
    if method.oob_score:
        raise SkippedJob(f"{engine} has no out-of-bag score (oob_score=true)")
    if method.min_samples_split != 2:
        raise SkippedJob(f"{engine} has no min_samples_split (got {method.min_samples_split})")
    if task is not Task.regression and method.criterion is not Criterion.gini:
        raise SkippedJob(f"{engine} splits on gradient gain, not {method.criterion.value}")


def xgboost_random_forest(
    method: DictConfig, task: Task, shape: tuple[int, int], seed: int, n_jobs: int
) -> BaseEstimator:
    """XGBRF*: one round of parallel trees from the base score, leaf weight -G/H (lambda = 0);
    bootstrap -> row subsample 0.632 without replacement; max_features -> colsample_bynode."""
    import xgboost

    _check_boosting_library_forest(method, task, "xgboost")
    if task is not Task.regression and method.min_samples_leaf != 1:
        raise SkippedJob(
            "xgboost bounds a classification leaf by hessian sum (min_child_weight), "
            f"not by sample count (min_samples_leaf={method.min_samples_leaf})"
        )
    n_features = shape[1]
    count = n_features_per_split(method.max_features, n_features)
    params = {
        "n_estimators": method.n_estimators,
        "max_depth": 0 if method.max_depth is None else method.max_depth,
        # the squared-error hessian is 1 per row, so min_child_weight counts rows
        "min_child_weight": method.min_samples_leaf if task is Task.regression else 0.0,
        "subsample": BOOTSTRAP_FRACTION if method.bootstrap else 1.0,
        # XGBoost draws int(fraction * n_features) columns: the 0.5 keeps `count` exact
        "colsample_bynode": min(1.0, (count + 0.5) / n_features),
        "reg_lambda": 0.0,
        "learning_rate": 1.0,
        "tree_method": "hist",
        "random_state": seed,
        "n_jobs": n_jobs,
    }
    if task is Task.regression:
        return xgboost.XGBRFRegressor(**params)
    return xgboost.XGBRFClassifier(**params)


def lightgbm_random_forest(
    method: DictConfig, task: Task, shape: tuple[int, int], seed: int, n_jobs: int
) -> BaseEstimator:
    """LightGBM boosting_type="rf": bagging 0.632 every iteration, feature_fraction_bynode from
    max_features, min_child_samples = min_samples_leaf; num_leaves only as large as a tree can
    grow (LightGBM's time and memory grow with num_leaves)."""
    import lightgbm

    _check_boosting_library_forest(method, task, "lightgbm")
    if not method.bootstrap:
        raise SkippedJob("lightgbm's rf mode needs row bagging (bootstrap=false)")
    n_samples, n_features = shape
    count = n_features_per_split(method.max_features, n_features)
    if count < min(2, n_features):
        raise SkippedJob(
            f"lightgbm draws at least 2 features per node (max_features gives {count})"
        )
    # leaves hold >= min_samples_leaf of the bagged rows: a bound that never binds
    max_leaves = int(np.ceil(BOOTSTRAP_FRACTION * n_samples / method.min_samples_leaf))
    if method.max_depth is not None:
        max_leaves = min(max_leaves, 2**method.max_depth)
    params = {
        "boosting_type": "rf",
        "n_estimators": method.n_estimators,
        "max_depth": -1 if method.max_depth is None else method.max_depth,
        "num_leaves": max(2, min(max_leaves, LIGHTGBM_MAX_LEAVES)),
        "min_child_samples": method.min_samples_leaf,
        "min_child_weight": 0.0,
        "bagging_fraction": BOOTSTRAP_FRACTION,
        "bagging_freq": 1,
        "feature_fraction_bynode": count / n_features,
        "reg_lambda": 0.0,
        "random_state": seed,
        "n_jobs": n_jobs,
        "verbose": -1,
    }
    if task is Task.regression:
        return lightgbm.LGBMRegressor(**params)
    return lightgbm.LGBMClassifier(**params)


Builder = Callable[[DictConfig, Task, tuple[int, int], int, int], BaseEstimator]

BUILDERS: dict[tuple[str, str], Builder] = {
    ("random_forest", "inhouse"): inhouse_random_forest,
    ("random_forest", "sklearn"): sklearn_random_forest,
    ("random_forest", "xgboost"): xgboost_random_forest,
    ("random_forest", "lightgbm"): lightgbm_random_forest,
}


def build_estimator(cfg: DictConfig, shape: tuple[int, int]) -> BaseEstimator:
    """The unfitted estimator of the job config for data of `shape` (n_samples, n_features)."""
    method, engine, task = cfg.method.name, cfg.engine.name, cfg.dataset.task
    check_loss(method, cfg.loss.name, task)
    builder = BUILDERS.get((method, engine))
    if builder is None:
        raise SkippedJob(f"no {engine} implementation of {method}")
    return builder(cfg.method, task, shape, cfg.seed, cfg.engine.n_jobs)
