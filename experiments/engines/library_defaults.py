"""A reference library with its own defaults (engine.defaults_from=library): the estimator the lab
built for the method config, rebuilt from the library's constructor defaults for every
hyper-parameter. Kept are only what fixes the task (the objective or loss and its level, the
class count), the seed, the threads and the quiet flags. The lab's early stopping goes too: no
library stops early by default, but for scikit-learn's HistGradientBoosting, whose default
('auto') stops early above 10,000 rows and stays."""

from sklearn.base import BaseEstimator

from experiments.engines.early_stopping import HoldoutEarlyStopping
from experiments.engines.spec import Built, SkippedJob

TASK_PARAMS = frozenset({"objective", "loss", "quantile", "quantile_alpha", "alpha",
                         "num_class", "random_state", "n_jobs", "verbose", "verbosity"})
# LightGBM's random forest refuses its own defaults (rf needs 0 < bagging_fraction < 1 and
# bagging_freq > 0): the lab's row sampling is kept and said to be
LIGHTGBM_RF_PARAMS = frozenset({"boosting_type", "bagging_fraction", "bagging_freq"})
LIGHTGBM_RF_NOTE = ("lightgbm's rf has no default row sampling: the lab's bagging_fraction and "
                    "bagging_freq kept")


def with_library_defaults(built: Built, engine: str) -> Built:
    """The built estimator with its library's own defaults (module docstring); SkippedJob for
    the in-house engine, whose defaults are the lab's, and where the library's defaults equal
    the lab's mapping (no second column to show)."""
    if engine == "inhouse":
        raise SkippedJob("the in-house engine's own defaults are the lab's "
                         "(engine.defaults_from=library is a reference library's column)")
    estimator = built.estimator
    model = estimator.estimator if isinstance(estimator, HoldoutEarlyStopping) else estimator
    params = model.get_params(deep=False)
    kept = TASK_PARAMS | (LIGHTGBM_RF_PARAMS if params.get("boosting_type") == "rf" else set())
    library_model = type(model)(**{name: params[name] for name in kept if name in params})
    if described(library_model) == described(estimator):
        raise SkippedJob(f"{engine}'s own defaults are the lab's for this method config")
    note = LIGHTGBM_RF_NOTE if params.get("boosting_type") == "rf" else None
    return Built(library_model, note)


def described(estimator: BaseEstimator) -> tuple:
    """The estimator's class and parameters, nested estimators by their repr (what they set)."""
    params = estimator.get_params(deep=False)
    return type(estimator), {name: repr(value) if isinstance(value, BaseEstimator) else value
                             for name, value in params.items()}  # fmt: skip
