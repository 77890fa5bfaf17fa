"""Method config -> an unfitted scikit-learn-compatible estimator, per engine.

Two engines differ here and nowhere else. A (method, loss, engine, task) combination without a
faithful mapping raises SkippedJob with a one-line reason, which the job logs as a skipped run;
one that a reference only approximates runs, and `approximation` says how (the run's tag).
"""

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

import numpy as np
from omegaconf import DictConfig
from sklearn.base import BaseEstimator

from ensembles.methods.validation import resolve_max_features
from experiments.configs import Criterion, GrowPolicy, Task, method_key
from experiments.early_stopping import HoldoutEarlyStopping

BOOTSTRAP_FRACTION = 1.0 - np.exp(-1.0)  # expected share of distinct rows in a bootstrap, 0.632
LIGHTGBM_MAX_LEAVES = 131072
# LightGBM's Poisson hessian is exp(F + poisson_max_delta_step), and the step must be > 0
LIGHTGBM_POISSON_DELTA = 1e-12


INHOUSE_FAMILIES = {"random_forest": "RandomForest", "extra_trees": "ExtraTrees",
                    "bagging": "Bagging", "adaboost": "AdaBoost", "logitboost": "LogitBoost",
                    "l2boost": "L2Boost"}


class SkippedJob(Exception):
    """A combination that cannot run; the message is the one-line reason."""


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
GBT_AUTO_LOSS = {Task.regression: "squared", Task.binary: "logistic", Task.multiclass: "softmax"}


@dataclass(frozen=True)
class Spec:
    """What a builder reads: the method and loss configs, the task, the data's
    (n_samples, n_features), the seed and the engine's thread count."""

    method: DictConfig
    loss: DictConfig
    task: Task
    shape: tuple[int, int]
    seed: int
    n_jobs: int

    @property
    def regression(self) -> bool:
        return self.task is Task.regression


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


def gbt_loss(loss: DictConfig, task: Task) -> str:
    """The GBT loss of a loss config: `auto` is squared, logistic or softmax by task."""
    return GBT_AUTO_LOSS[task] if loss.name == "auto" else loss.name


def _check_neutral(engine: str, method: DictConfig, **neutral: object) -> None:
    """Skip when a parameter the engine does not have is set away from its neutral value."""
    for name, value in neutral.items():
        if method[name] != value:
            raise SkippedJob(f"{engine} has no {name} (got {method[name]})")


# Forest family: random forest, extra trees, bagging.

SCIKIT_FORESTS = {"random_forest": "RandomForest", "extra_trees": "ExtraTrees"}


def inhouse_estimator(spec: Spec) -> BaseEstimator:
    """The in-house estimator of a method other than gbt: its constructor takes the method
    config's fields by name (criterion for classification only), the seed and the threads."""
    import ensembles

    params = {
        name: value.value if isinstance(value, Enum) else value
        for name, value in spec.method.items()
        if name != "name"
    }
    if spec.regression:
        params.pop("criterion", None)
    task = "Regressor" if spec.regression else "Classifier"
    model = getattr(ensembles, f"{INHOUSE_FAMILIES[method_key(spec.method)]}{task}")
    return model(**params, random_state=spec.seed, n_jobs=spec.n_jobs)


def _scikit_forest(module, spec: Spec) -> BaseEstimator:
    """RandomForest* or ExtraTrees* of a module with scikit-learn's constructor."""
    method = spec.method
    params = {
        "n_estimators": method.n_estimators,
        "max_depth": method.max_depth,
        "min_samples_split": method.min_samples_split,
        "min_samples_leaf": method.min_samples_leaf,
        "max_features": method.max_features,
        "max_leaf_nodes": method.max_leaf_nodes,
        "bootstrap": method.bootstrap,
        "oob_score": method.oob_score,
        "random_state": spec.seed,
        "n_jobs": spec.n_jobs,
    }
    prefix = SCIKIT_FORESTS[method_key(method)]
    if spec.regression:
        return getattr(module, f"{prefix}Regressor")(**params)
    return getattr(module, f"{prefix}Classifier")(criterion=method.criterion.value, **params)


def sklearn_forest(spec: Spec) -> BaseEstimator:
    import sklearn.ensemble

    return _scikit_forest(sklearn.ensemble, spec)


def _check_boosting_library_forest(spec: Spec, engine: str) -> None:
    """Skip the random-forest parameters that XGBoost's and LightGBM's rf modes do not have."""
    method = spec.method
    if method.oob_score:
        raise SkippedJob(f"{engine} has no out-of-bag score (oob_score=true)")
    if method.min_samples_split != 2:
        raise SkippedJob(f"{engine} has no min_samples_split (got {method.min_samples_split})")
    if not spec.regression and method.criterion is not Criterion.gini:
        raise SkippedJob(f"{engine} splits on gradient gain, not {method.criterion.value}")


def xgboost_random_forest(spec: Spec) -> BaseEstimator:
    """XGBRF*: one round of parallel trees from the base score, leaf weight -G/H (lambda = 0);
    bootstrap -> row subsample 0.632 without replacement; max_features -> colsample_bynode;
    max_leaf_nodes -> best-first growth (lossguide) to max_leaves."""
    import xgboost

    method = spec.method
    _check_boosting_library_forest(spec, "xgboost")
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
        "subsample": BOOTSTRAP_FRACTION if method.bootstrap else 1.0,
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
    if spec.regression:
        return xgboost.XGBRFRegressor(**params)
    return xgboost.XGBRFClassifier(**params)


def lightgbm_random_forest(spec: Spec) -> BaseEstimator:
    """LightGBM boosting_type="rf": bagging 0.632 every iteration, feature_fraction_bynode from
    max_features, min_child_samples = min_samples_leaf; num_leaves = max_leaf_nodes, else only
    as large as a tree can grow (LightGBM's time and memory grow with num_leaves)."""
    import lightgbm

    method = spec.method
    _check_boosting_library_forest(spec, "lightgbm")
    if not method.bootstrap:
        raise SkippedJob("lightgbm's rf mode needs row bagging (bootstrap=false)")
    n_samples, n_features = spec.shape
    count = resolve_max_features(method.max_features, n_features)
    if count < min(2, n_features):
        raise SkippedJob(
            f"lightgbm draws at least 2 features per node (max_features gives {count})"
        )
    # leaves hold >= min_samples_leaf of the bagged rows: a bound that never binds
    max_leaves = int(np.ceil(BOOTSTRAP_FRACTION * n_samples / method.min_samples_leaf))
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
        "bagging_fraction": BOOTSTRAP_FRACTION,
        "bagging_freq": 1,
        "feature_fraction_bynode": count / n_features,
        "reg_lambda": 0.0,
        "random_state": spec.seed,
        "n_jobs": spec.n_jobs,
        "verbose": -1,
    }
    if spec.regression:
        return lightgbm.LGBMRegressor(**params)
    return lightgbm.LGBMClassifier(**params)


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


def sklearn_bagging(spec: Spec) -> BaseEstimator:
    """Bagging* of DecisionTree* with the same tree parameters, on all rows and features."""
    from sklearn import ensemble, tree

    if spec.regression:
        model, cart = ensemble.BaggingRegressor, tree.DecisionTreeRegressor
    else:
        model, cart = ensemble.BaggingClassifier, tree.DecisionTreeClassifier
    return model(
        estimator=cart(**_cart_params(spec)),
        n_estimators=spec.method.n_estimators,
        bootstrap=spec.method.bootstrap,
        oob_score=spec.method.oob_score,
        random_state=spec.seed,
        n_jobs=spec.n_jobs,
    )


# AdaBoost, LogitBoost, L2Boost.


def sklearn_adaboost(spec: Spec) -> BaseEstimator:
    """AdaBoostClassifier (SAMME only since scikit-learn 1.6) of DecisionTreeClassifier."""
    from sklearn.ensemble import AdaBoostClassifier
    from sklearn.tree import DecisionTreeClassifier

    return AdaBoostClassifier(
        estimator=DecisionTreeClassifier(max_depth=spec.method.max_depth),
        n_estimators=spec.method.n_estimators,
        learning_rate=spec.method.learning_rate,
        random_state=spec.seed,
    )


def _l2boost_params(spec: Spec) -> dict:
    method = spec.method
    return {
        "n_estimators": method.n_estimators,
        "learning_rate": method.learning_rate,
        "max_depth": method.max_depth,
        "min_samples_leaf": method.min_samples_leaf,
        "subsample": method.subsample,
        "random_state": spec.seed,
    }


def sklearn_l2boost(spec: Spec) -> BaseEstimator:
    """GradientBoostingRegressor on squared error: mean start, least-squares trees on residuals."""
    from sklearn.ensemble import GradientBoostingRegressor

    if not spec.regression:
        raise SkippedJob(
            "no reference library fits least squares on +-1 class codes (L2Boost classification)"
        )
    return GradientBoostingRegressor(loss="squared_error", **_l2boost_params(spec))


# Regularized gradient tree boosting (GBT).


XGBOOST_NAMED = ("n_estimators", "learning_rate", "max_depth", "max_leaves", "grow_policy",
                 "reg_lambda", "reg_alpha", "gamma", "min_child_weight", "subsample",
                 "colsample_bytree", "colsample_bynode", "base_score")


def xgboost_named_params(method: DictConfig) -> dict:
    """The GBT parameters that the in-house estimator and XGBoost take by the same name and
    meaning (the contract's), as constructor arguments."""
    return {name: method[name].value if isinstance(method[name], Enum) else method[name]
            for name in XGBOOST_NAMED}  # fmt: skip


def inhouse_gbt(spec: Spec) -> BaseEstimator:
    import ensembles

    method, loss = spec.method, spec.loss
    params = {
        "loss": gbt_loss(loss, spec.task),
        **xgboost_named_params(method),
        "max_bins": method.max_bins,
        "min_child_samples": method.min_child_samples,
        "early_stopping_rounds": method.early_stopping_rounds,
        "validation_fraction": method.validation_fraction,
        "random_state": spec.seed,
        "n_jobs": spec.n_jobs,
    }
    if not spec.regression:
        return ensembles.GradientBoostingClassifier(**params)
    if loss.name == "quantile":
        params["quantile_alpha"] = loss.alpha
    if loss.name == "huber":
        params["huber_delta"] = loss.delta
    return ensembles.GradientBoostingRegressor(**params)


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


def xgboost_gbt(spec: Spec) -> BaseEstimator:
    """XGBRegressor / XGBClassifier with tree_method="hist": the parameters mean the same."""
    import xgboost

    method, loss = spec.method, spec.loss
    name = gbt_loss(loss, spec.task)
    if name in XGBOOST_MISSING_LOSSES:
        raise SkippedJob(XGBOOST_MISSING_LOSSES[name])
    if name == "softmax" and spec.task is Task.binary:
        raise SkippedJob("xgboost's XGBClassifier predicts 2-class softprob as multi-label")
    _check_neutral("xgboost", method, min_child_samples=1)
    params = {
        "objective": XGBOOST_OBJECTIVES[name],
        **xgboost_named_params(method),
        "max_bin": method.max_bins,
        "tree_method": "hist",
        "random_state": spec.seed,
        "n_jobs": spec.n_jobs,
    }
    if name == "quantile":
        params["quantile_alpha"] = loss.alpha
    if name == "poisson":
        params["max_delta_step"] = 0.0  # XGBoost's default 0.7 damps the Poisson hessian
    model = xgboost.XGBRegressor if spec.regression else xgboost.XGBClassifier
    return with_early_stopping(model(**params), spec)


LIGHTGBM_OBJECTIVES = {
    "squared": "regression",
    "absolute": "regression_l1",
    "huber": "huber",
    "quantile": "quantile",
    "poisson": "poisson",
    "logistic": "binary",
    "softmax": "multiclass",
}


def lightgbm_gbt(spec: Spec) -> BaseEstimator:
    """LGBMRegressor / LGBMClassifier: num_leaves = max_leaves (0: 2**max_depth), max_depth 0
    -> -1, gamma -> min_split_gain, subsample -> bagging every round, huber delta and quantile
    level -> alpha. LightGBM grows leaf-wise, so depthwise is approximated."""
    import lightgbm

    method, loss = spec.method, spec.loss
    name = gbt_loss(loss, spec.task)
    if name not in LIGHTGBM_OBJECTIVES:
        raise SkippedJob(f"lightgbm has no {name} loss")
    _check_neutral("lightgbm", method, base_score=None)
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
    return with_early_stopping(model(**params), spec)


def with_early_stopping(model: BaseEstimator, spec: Spec) -> BaseEstimator:
    """The library model, wrapped to stop early on the in-house GBT's validation rows when the
    method config asks for early stopping."""
    if spec.method.early_stopping_rounds is None:
        return model
    return HoldoutEarlyStopping(model, spec.method.early_stopping_rounds,
                                spec.method.validation_fraction, random_state=spec.seed)


SKLEARN_HIST_LOSSES = {
    "squared": "squared_error",
    "absolute": "absolute_error",
    "quantile": "quantile",
    "poisson": "poisson",
    "logistic": "log_loss",
    "softmax": "log_loss",
}


def sklearn_gbt(spec: Spec) -> BaseEstimator:
    """HistGradientBoosting*: max_iter = n_estimators, max_leaf_nodes = max_leaves (0: none),
    max_depth 0 -> None, min_samples_leaf = min_child_samples, l2_regularization = reg_lambda,
    max_features = colsample_bynode. It grows best-first, so depthwise is approximated."""
    from sklearn import ensemble

    method, loss = spec.method, spec.loss
    name = gbt_loss(loss, spec.task)
    if name not in SKLEARN_HIST_LOSSES:
        raise SkippedJob(f"scikit-learn's HistGradientBoosting has no {name} loss")
    if name == "softmax" and spec.task is Task.binary:
        raise SkippedJob("scikit-learn fits 2 classes with one logistic tree a round, not softmax")
    _check_neutral(
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
    if not spec.regression:
        return ensemble.HistGradientBoostingClassifier(**params)
    if name == "quantile":
        params["quantile"] = loss.alpha
    return ensemble.HistGradientBoostingRegressor(**params)


Builder = Callable[[Spec], BaseEstimator]

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


def build_estimator(
    cfg: DictConfig, shape: tuple[int, int], engine: str | None = None
) -> BaseEstimator:
    """The unfitted estimator of the job config for data of `shape` (n_samples, n_features),
    run by `engine` (default: the job's own)."""
    method, task = method_key(cfg.method), cfg.dataset.task
    engine = engine or cfg.engine.name
    check_loss(method, cfg.loss.name, task)
    if (method, engine) not in BUILDERS:
        default = f"no {engine} implementation of {method}"
        raise SkippedJob(NO_REFERENCE.get((method, engine), default))
    method_config = with_task_defaults(cfg.method, task)
    spec = Spec(method_config, cfg.loss, task, tuple(shape), cfg.seed, cfg.engine.n_jobs)
    return BUILDERS[method, engine](spec)


def with_task_defaults(method: DictConfig, task: Task) -> DictConfig:
    """The method config with max_features=auto resolved to scikit-learn's default for the
    task: sqrt for classification (Breiman 2001), 1.0 (every feature) for regression."""
    if method.get("max_features") != "auto":
        return method
    resolved = method.copy()
    resolved.max_features = 1.0 if task is Task.regression else "sqrt"
    return resolved


def approximation(cfg: DictConfig) -> str | None:
    """How the job's engine departs from the method config it runs; None where it does not."""
    method, engine = method_key(cfg.method), cfg.engine.name
    if method == "random_forest" and engine in ("xgboost", "lightgbm") and cfg.method.bootstrap:
        return f"{engine} subsamples 63.2% of the rows without replacement, not a bootstrap"
    if method != "gbt" or engine not in ("lightgbm", "sklearn"):
        return None
    notes = []
    if cfg.method.grow_policy is GrowPolicy.depthwise:
        notes.append(f"{engine} grows best-first, not depthwise")
    loss = gbt_loss(cfg.loss, cfg.dataset.task)
    if engine == "sklearn" and loss != "squared" and cfg.method.min_child_weight > 0:
        notes.append("sklearn bounds leaves by min_samples_leaf only (no min_child_weight)")
    return "; ".join(notes) or None
