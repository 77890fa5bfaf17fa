"""scikit-learn's estimators for the lab's methods: forests, bagging of CART trees, SAMME
AdaBoost, GradientBoostingRegressor for L2Boost and HistGradientBoosting for GBT."""

import numpy as np

from experiments.configs import GrowPolicy, Task
from experiments.engines.spec import (
    Built,
    SkippedJob,
    Spec,
    check_bootstrap_size,
    check_neutral,
    gbt_loss,
)

SKLEARN_HIST_LOSSES = {
    "squared": "squared_error",
    "absolute": "absolute_error",
    "quantile": "quantile",
    "poisson": "poisson",
    "logistic": "log_loss",
    "softmax": "log_loss",
}


def _cart_params(spec: Spec) -> dict:
    """The CART parameters of bagging's trees (a criterion for classification only)."""
    method = spec.method
    params = {
        "max_depth": method.max_depth,
        "min_samples_split": method.min_samples_split,
        "min_samples_leaf": method.min_samples_leaf,
        "max_leaf_nodes": method.max_leaf_nodes,
    }
    if not spec.regression:
        params["criterion"] = method.criterion.value
    return params


def sklearn_forest(spec: Spec) -> Built:
    """RandomForest* or ExtraTrees*, the in-house forest's namesake (spec.family): the CART
    parameters and the forest's own."""
    import sklearn.ensemble

    method = spec.method
    params = {
        **_cart_params(spec),
        "n_estimators": method.n_estimators,
        "max_features": method.max_features,
        "bootstrap": method.bootstrap,
        "max_samples": method.max_samples,
        "oob_score": method.oob_score,
        "random_state": spec.seed,
        "n_jobs": spec.n_jobs,
    }
    task = "Regressor" if spec.regression else "Classifier"
    model = getattr(sklearn.ensemble, f"{spec.family}{task}")
    return Built(model(**params))


def sklearn_bagging(spec: Spec) -> Built:
    """Bagging* of DecisionTree* with the same tree parameters, on all features; max_samples None
    -> 1.0 (n draws), and refused without a bootstrap, as the forests (Bagging* would subsample
    without replacement)."""
    from sklearn import ensemble, tree

    check_bootstrap_size(spec.method)
    max_samples = spec.method.max_samples
    if spec.regression:
        model, cart = ensemble.BaggingRegressor, tree.DecisionTreeRegressor
    else:
        model, cart = ensemble.BaggingClassifier, tree.DecisionTreeClassifier
    return Built(model(
        estimator=cart(**_cart_params(spec)),
        n_estimators=spec.method.n_estimators,
        bootstrap=spec.method.bootstrap,
        max_samples=1.0 if max_samples is None else max_samples,
        oob_score=spec.method.oob_score,
        random_state=spec.seed,
        n_jobs=spec.n_jobs,
    ))


def sklearn_adaboost(spec: Spec) -> Built:
    """AdaBoostClassifier (SAMME only since scikit-learn 1.6) of DecisionTreeClassifier, of
    max_depth or best first to max_leaf_nodes leaves; AdaBoost.MH (multiclass=mh) only for two
    classes, where it is SAMME."""
    from sklearn.ensemble import AdaBoostClassifier
    from sklearn.tree import DecisionTreeClassifier

    method = spec.method
    if method.algorithm.value != "SAMME":
        raise SkippedJob(f"scikit-learn's AdaBoost is SAMME only (it removed SAMME.R in 1.6 and "
                         f"has no gentle AdaBoost), got algorithm={method.algorithm.value}")
    if method.multiclass.value == "mh" and spec.task is Task.multiclass:
        raise SkippedJob("scikit-learn's AdaBoost is SAMME only: it has no AdaBoost.MH for "
                         "K > 2 classes (multiclass=mh)")
    return Built(AdaBoostClassifier(
        estimator=DecisionTreeClassifier(max_depth=method.max_depth,
                                         max_leaf_nodes=method.max_leaf_nodes),
        n_estimators=method.n_estimators,
        learning_rate=method.learning_rate,
        random_state=spec.seed,
    ))


def sklearn_l2boost(spec: Spec) -> Built:
    """GradientBoostingRegressor on squared error: mean start, least-squares trees on residuals."""
    from sklearn.ensemble import GradientBoostingRegressor

    if not spec.regression:
        raise SkippedJob(
            "no reference library fits least squares on +-1 class codes (L2Boost classification)"
        )
    method = spec.method
    return Built(GradientBoostingRegressor(
        loss="squared_error",
        n_estimators=method.n_estimators,
        learning_rate=method.learning_rate,
        max_depth=method.max_depth,
        min_samples_leaf=method.min_samples_leaf,
        subsample=method.subsample,
        random_state=spec.seed,
    ))


def sklearn_gbt(spec: Spec) -> Built:
    """HistGradientBoosting*: max_iter = n_estimators, max_leaf_nodes = max_leaves (0: none),
    max_depth 0 -> None, min_samples_leaf = min_child_samples, l2_regularization = reg_lambda,
    max_features = colsample_bynode. It grows best-first, so depthwise is approximated, and
    bounds leaves by rows only, so min_child_weight is approximated but for squared loss."""
    from sklearn import ensemble

    method, loss = spec.method, spec.loss
    name = gbt_loss(loss, spec.task)
    if name not in SKLEARN_HIST_LOSSES:
        raise SkippedJob(f"scikit-learn's HistGradientBoosting has no {name} loss")
    if name == "softmax" and spec.task is Task.binary:
        raise SkippedJob("scikit-learn fits 2 classes with one logistic tree a round, not softmax")
    check_neutral(
        "sklearn",
        method,
        reg_alpha=0.0,
        gamma=0.0,
        subsample=1.0,
        colsample_bytree=1.0,
        base_score=None,
    )
    min_samples_leaf = method.min_child_samples
    if name == "squared":  # hessian 1 per row: min_child_weight counts rows
        min_samples_leaf = max(min_samples_leaf, int(np.ceil(method.min_child_weight)))
    params = {
        "loss": SKLEARN_HIST_LOSSES[name],
        "max_iter": method.n_estimators,
        "learning_rate": method.learning_rate,
        "max_leaf_nodes": method.max_leaves or None,
        "max_depth": method.max_depth or None,
        "min_samples_leaf": min_samples_leaf,
        "l2_regularization": method.reg_lambda,
        "max_features": method.colsample_bynode,
        "max_bins": method.max_bins,
        "early_stopping": False,
        "random_state": spec.seed,
    }
    if method.early_stopping_rounds is not None:
        params |= {
            "early_stopping": True,
            "n_iter_no_change": method.early_stopping_rounds,
            "validation_fraction": method.validation_fraction,
        }
    notes = []
    if method.grow_policy is GrowPolicy.depthwise:
        notes.append("sklearn grows best-first, not depthwise")
    if name != "squared" and method.min_child_weight > 0:
        notes.append("sklearn bounds leaves by min_samples_leaf only (no min_child_weight)")
    approximation = "; ".join(notes) or None
    if not spec.regression:
        return Built(ensemble.HistGradientBoostingClassifier(**params), approximation)
    if name == "quantile":
        params["quantile"] = loss.alpha
    return Built(ensemble.HistGradientBoostingRegressor(**params), approximation)
