"""Method config -> the Built estimator of an engine: the builder the method's declaration
(engines.catalog) names for the engine, after its losses per task, or the declaration's reason
why the engine has none."""

from contextlib import contextmanager

import numpy as np
from omegaconf import DictConfig
from sklearn.base import BaseEstimator
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from threadpoolctl import threadpool_limits

from experiments.configs import EngineDefaults, Task, method_key
from experiments.data.datasets import categorical_columns, native_category_counts
from experiments.engines.catalog import METHODS
from experiments.engines.categorical import with_native_categories
from experiments.engines.inhouse import estimator_class_name
from experiments.engines.library_defaults import with_library_defaults
from experiments.engines.spec import Built, SkippedJob, Spec


def check_loss(method: str, loss: str, task: Task) -> None:
    """Raise SkippedJob unless `method` can be trained with `loss` on a `task` problem."""
    valid = METHODS[method].losses.get(task, frozenset())
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
    declaration = METHODS[method]
    if engine not in declaration.engines:
        default = f"no {engine} implementation of {method}"
        raise SkippedJob(declaration.no_reference.get(engine, default))
    method_config = with_task_defaults(cfg.method, task)
    spec = Spec(method_config, cfg.loss, task, tuple(shape), cfg.seed, cfg.engine.n_jobs,
                declaration.family)
    built = declaration.engines[engine](spec)
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
    """The unfitted estimator a job would fit: its method config run by an engine.

    Parameters
    ----------
    cfg : DictConfig
        A job config (method, loss, engine, dataset, seed).
    shape : tuple of int
        (n_samples, n_features) of the data it is to fit.
    engine : str, optional
        inhouse, sklearn, xgboost or lightgbm; default: the job's `engine.name`.

    Returns
    -------
    BaseEstimator
        The engine's estimator with the lab's mapping of the method's parameters.

    Raises
    ------
    SkippedJob
        The engine cannot run this method, loss or data, with the reason.
    """
    return build(cfg, shape, engine).estimator


def inhouse_class_name(cfg: DictConfig) -> str:
    """The class name of the in-house estimator a job config fits (inhouse.estimator_class_name
    of its method's family and dataset's task), e.g. for ensembles.warm."""
    return estimator_class_name(METHODS[method_key(cfg.method)].family, cfg.dataset.task)


def with_task_defaults(method: DictConfig, task: Task) -> DictConfig:
    """The method config with max_features=auto resolved to scikit-learn's default for the
    task: sqrt for classification (Breiman 2001), 1.0 (every feature) for regression."""
    if method.get("max_features") != "auto":
        return method
    resolved = method.copy()
    resolved.max_features = 1.0 if task is Task.regression else "sqrt"
    return resolved


@contextmanager
def openmp_threads(cfg: DictConfig):
    """engine.n_jobs threads (-1: every core) for OpenMP code that takes no n_jobs
    (HistGradientBoosting), in this process: the job's, and a trial worker's
    (tune.trial_seconds), which a limit set in the job's process does not reach."""
    threads = cfg.engine.n_jobs if cfg.engine.n_jobs > 0 else None
    with threadpool_limits(limits=threads, user_api="openmp"):
        yield
