"""The in-house engine's estimators (ensembles): the method config's fields by name."""

from enum import Enum

from experiments.configs import Task
from experiments.engines.categorical import category_split_params
from experiments.engines.spec import Built, Spec, gbt_loss, xgboost_named_params


def estimator_class_name(family: str, task: Task) -> str:
    """The in-house estimator of a method family for a task: ensembles.<family>Regressor for
    regression, else <family>Classifier."""
    return f"{family}{'Regressor' if task is Task.regression else 'Classifier'}"


def inhouse_estimator(spec: Spec) -> Built:
    """The in-house estimator of a method other than gbt, ensembles.<family>Classifier or
    <family>Regressor: its constructor takes the method config's fields by name (criterion for
    classification only), the seed and the threads."""
    import ensembles

    params = {
        name: value.value if isinstance(value, Enum) else value
        for name, value in spec.method.items()
        if name != "name"
    }
    if spec.regression:
        params.pop("criterion", None)
    model = getattr(ensembles, estimator_class_name(spec.family, spec.task))
    return Built(model(**params, random_state=spec.seed, n_jobs=spec.n_jobs))


def inhouse_gbt(spec: Spec) -> Built:
    """GradientBoosting*: XGBoost's parameter names, the loss of the loss config."""
    import ensembles

    method, loss = spec.method, spec.loss
    params = {
        "loss": gbt_loss(loss, spec.task),
        **xgboost_named_params(method),
        "max_bins": method.max_bins,
        "min_child_samples": method.min_child_samples,
        **category_split_params(method),
        "early_stopping_rounds": method.early_stopping_rounds,
        "validation_fraction": method.validation_fraction,
        "random_state": spec.seed,
        "n_jobs": spec.n_jobs,
    }
    if not spec.regression:
        return Built(ensembles.GradientBoostingClassifier(**params))
    if loss.name == "quantile":
        params["quantile_alpha"] = loss.alpha
    if loss.name == "huber":
        params["huber_delta"] = loss.delta
    return Built(ensembles.GradientBoostingRegressor(**params))
