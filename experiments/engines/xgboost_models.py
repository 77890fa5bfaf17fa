"""XGBoost's estimators for the lab's methods: XGBRF* for random forests, XGB* (hist) for GBT."""

from ensembles.methods.validation import resolve_max_features
from experiments.configs import Task
from experiments.engines.categorical import xgboost_category_params
from experiments.engines.early_stopping import with_early_stopping
from experiments.engines.library_forests import (
    check_library_forest,
    library_forest_approximation,
    row_fraction,
)
from experiments.engines.spec import (
    Built,
    SkippedJob,
    Spec,
    check_neutral,
    gbt_loss,
    xgboost_named_params,
)

XGBOOST_OBJECTIVES = {
    "squared": "reg:squarederror",
    "absolute": "reg:absoluteerror",
    "quantile": "reg:quantileerror",
    "poisson": "count:poisson",
    "logistic": "binary:logistic",
    "softmax": "multi:softprob",
}
XGBOOST_MISSING_LOSSES = {
    "huber": "xgboost's reg:pseudohubererror is the pseudo-Huber loss, not Huber's",
    "exponential": "xgboost has no exponential loss",
}


def xgboost_random_forest(spec: Spec) -> Built:
    """XGBRF*: one round of parallel trees from the base score, leaf weight -G/H (lambda = 0);
    bootstrap of max_samples * n draws -> subsample 1 - exp(-max_samples) of the rows without
    replacement (its share of distinct rows, 0.632 for n draws; an approximation); max_features ->
    colsample_bynode; max_leaf_nodes -> best-first growth (lossguide) to max_leaves."""
    import xgboost

    method = spec.method
    check_library_forest(spec, "xgboost")
    if not spec.regression and method.min_samples_leaf != 1:
        raise SkippedJob(
            "xgboost bounds a classification leaf by hessian sum (min_child_weight), "
            f"not by sample count (min_samples_leaf={method.min_samples_leaf})"
        )
    n_features = spec.shape[1]
    count = resolve_max_features(method.max_features, n_features)
    params = {
        "n_estimators": method.n_estimators,
        "max_depth": 0 if method.max_depth is None else method.max_depth,
        # the squared-error hessian is 1 per row, so min_child_weight counts rows
        "min_child_weight": method.min_samples_leaf if spec.regression else 0.0,
        "subsample": row_fraction(method),
        # XGBoost draws int(fraction * n_features) columns: the 0.5 keeps `count` exact
        "colsample_bynode": min(1.0, (count + 0.5) / n_features),
        "reg_lambda": 0.0,
        "learning_rate": 1.0,
        "tree_method": "hist",
        "random_state": spec.seed,
        "n_jobs": spec.n_jobs,
    }
    if method.max_leaf_nodes is not None:
        params |= {"grow_policy": "lossguide", "max_leaves": method.max_leaf_nodes}
    model = xgboost.XGBRFRegressor if spec.regression else xgboost.XGBRFClassifier
    return Built(model(**params), library_forest_approximation(spec, "xgboost"))


def xgboost_gbt(spec: Spec) -> Built:
    """XGBRegressor / XGBClassifier with tree_method="hist": the parameters mean the same."""
    import xgboost

    method, loss = spec.method, spec.loss
    name = gbt_loss(loss, spec.task)
    if name in XGBOOST_MISSING_LOSSES:
        raise SkippedJob(XGBOOST_MISSING_LOSSES[name])
    if name == "softmax" and spec.task is Task.binary:
        raise SkippedJob("xgboost's XGBClassifier predicts 2-class softprob as multi-label")
    check_neutral("xgboost", method, min_child_samples=1)
    params = {
        "objective": XGBOOST_OBJECTIVES[name],
        **xgboost_named_params(method),
        "max_bin": method.max_bins,
        "tree_method": "hist",
        **xgboost_category_params(method),
        "random_state": spec.seed,
        "n_jobs": spec.n_jobs,
    }
    if name == "quantile":
        params["quantile_alpha"] = loss.alpha
    if name == "poisson":
        params["max_delta_step"] = 0.0  # XGBoost's default 0.7 damps the Poisson hessian
    model = xgboost.XGBRegressor if spec.regression else xgboost.XGBClassifier
    return Built(with_early_stopping(model(**params), spec))
