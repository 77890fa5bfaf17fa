"""LightGBM's estimators for the lab's methods: boosting_type="rf" for random forests, LGBM*
for GBT (it grows leaf-wise, so depthwise growth is an approximation)."""

import numpy as np

from ensembles.methods.validation import resolve_max_features
from experiments.configs import GrowPolicy, Task
from experiments.engines.categorical import lightgbm_category_params
from experiments.engines.early_stopping import with_early_stopping
from experiments.engines.library_forests import (
    check_library_forest,
    library_forest_approximation,
    row_fraction,
)
from experiments.engines.spec import Built, SkippedJob, Spec, check_neutral, gbt_loss

LIGHTGBM_MAX_LEAVES = 131072
# LightGBM's Poisson hessian is exp(F + poisson_max_delta_step), and the step must be > 0
LIGHTGBM_POISSON_DELTA = 1e-12
LIGHTGBM_OBJECTIVES = {
    "squared": "regression",
    "absolute": "regression_l1",
    "huber": "huber",
    "quantile": "quantile",
    "poisson": "poisson",
    "logistic": "binary",
    "softmax": "multiclass",
}


def lightgbm_random_forest(spec: Spec) -> Built:
    """LightGBM boosting_type="rf": bagging_fraction 1 - exp(-max_samples) every iteration (a
    bootstrap's share of distinct rows, 0.632 for n draws), feature_fraction_bynode from
    max_features, min_child_samples = min_samples_leaf; num_leaves = max_leaf_nodes, else only
    as large as a tree can grow (LightGBM's time and memory grow with num_leaves)."""
    import lightgbm

    method = spec.method
    check_library_forest(spec, "lightgbm")
    if not method.bootstrap:
        raise SkippedJob("lightgbm's rf mode needs row bagging (bootstrap=false)")
    n_samples, n_features = spec.shape
    count = resolve_max_features(method.max_features, n_features)
    if count < min(2, n_features):
        raise SkippedJob(
            f"lightgbm draws at least 2 features per node (max_features gives {count})"
        )
    # leaves hold >= min_samples_leaf of the bagged rows: a bound that never binds
    fraction = row_fraction(method)
    max_leaves = int(np.ceil(fraction * n_samples / method.min_samples_leaf))
    if method.max_depth is not None:
        max_leaves = min(max_leaves, 2**method.max_depth)
    if method.max_leaf_nodes is not None:
        max_leaves = min(max_leaves, method.max_leaf_nodes)
    params = {
        "boosting_type": "rf",
        "n_estimators": method.n_estimators,
        "max_depth": -1 if method.max_depth is None else method.max_depth,
        "num_leaves": max(2, min(max_leaves, LIGHTGBM_MAX_LEAVES)),
        "min_child_samples": method.min_samples_leaf,
        "min_child_weight": 0.0,
        "bagging_fraction": fraction,
        "bagging_freq": 1,
        "feature_fraction_bynode": count / n_features,
        "reg_lambda": 0.0,
        "random_state": spec.seed,
        "n_jobs": spec.n_jobs,
        "verbose": -1,
    }
    model = lightgbm.LGBMRegressor if spec.regression else lightgbm.LGBMClassifier
    return Built(model(**params), library_forest_approximation(spec, "lightgbm"))


def lightgbm_gbt(spec: Spec) -> Built:
    """LGBMRegressor / LGBMClassifier: num_leaves = max_leaves (0: 2**max_depth), max_depth 0
    -> -1, gamma -> min_split_gain, subsample -> bagging every round, huber delta and quantile
    level -> alpha. LightGBM grows leaf-wise, so depthwise is approximated."""
    import lightgbm

    method, loss = spec.method, spec.loss
    name = gbt_loss(loss, spec.task)
    if name not in LIGHTGBM_OBJECTIVES:
        raise SkippedJob(f"lightgbm has no {name} loss")
    check_neutral("lightgbm", method, base_score=None)
    params = {
        "objective": LIGHTGBM_OBJECTIVES[name],
        "n_estimators": method.n_estimators,
        "learning_rate": method.learning_rate,
        "num_leaves": min(method.max_leaves or 2**method.max_depth, LIGHTGBM_MAX_LEAVES),
        "max_depth": method.max_depth or -1,
        "reg_lambda": method.reg_lambda,
        "reg_alpha": method.reg_alpha,
        "min_split_gain": method.gamma,
        "min_child_weight": method.min_child_weight,
        "min_child_samples": method.min_child_samples,
        "subsample": method.subsample,
        "subsample_freq": 1 if method.subsample < 1.0 else 0,
        "colsample_bytree": method.colsample_bytree,
        "feature_fraction_bynode": method.colsample_bynode,
        "max_bin": method.max_bins,
        "min_data_in_bin": 1,  # LightGBM's default 3 would merge rare values into one bin
        **lightgbm_category_params(method),
        "random_state": spec.seed,
        "n_jobs": spec.n_jobs,
        "verbose": -1,
    }
    if name == "quantile":
        params["alpha"] = loss.alpha
    if name == "huber":
        params["alpha"] = loss.delta
    if name == "poisson":
        params["poisson_max_delta_step"] = LIGHTGBM_POISSON_DELTA
    if name == "softmax" and spec.task is Task.binary:
        params["num_class"] = 2
    model = lightgbm.LGBMRegressor if spec.regression else lightgbm.LGBMClassifier
    approximation = None
    if method.grow_policy is GrowPolicy.depthwise:
        approximation = "lightgbm grows best-first, not depthwise"
    return Built(with_early_stopping(model(**params), spec), approximation)
