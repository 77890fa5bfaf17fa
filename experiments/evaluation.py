"""The splitting protocol, the test metrics of one fitted estimator and the job's peak memory."""

import resource
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from omegaconf import DictConfig
from sklearn import metrics, model_selection
from sklearn.base import BaseEstimator, clone

from experiments.configs import EvalKind, Task


def splits(
    cfg: DictConfig, task: Task, X: np.ndarray, y: np.ndarray, seed: int
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(train, test) index pairs: n_repeats holdouts of test_size, or n_repeats x n_splits folds;
    stratified on y for classification."""
    stratified = task is not Task.regression
    if cfg.kind is EvalKind.holdout:
        splitter_class = (
            model_selection.StratifiedShuffleSplit if stratified else model_selection.ShuffleSplit
        )
        splitter = splitter_class(
            n_splits=cfg.n_repeats, test_size=cfg.test_size, random_state=seed
        )
    else:
        splitter_class = (
            model_selection.RepeatedStratifiedKFold if stratified else model_selection.RepeatedKFold
        )
        splitter = splitter_class(n_splits=cfg.n_splits, n_repeats=cfg.n_repeats, random_state=seed)
    return splitter.split(X, y)


def fit_and_score(
    estimator: BaseEstimator,
    task: Task,
    X_train: np.ndarray,
    y_train: np.ndarray,
    X_test: np.ndarray,
    y_test: np.ndarray,
) -> dict[str, float]:
    """Fit a clone of the estimator and return its test metrics and timings."""
    model = clone(estimator)
    start = time.perf_counter()
    model.fit(X_train, y_train)
    fit_seconds = time.perf_counter() - start
    start = time.perf_counter()
    scores = test_metrics(model, task, X_test, y_test)
    scores["predict_seconds"] = time.perf_counter() - start
    scores["fit_seconds"] = fit_seconds
    if getattr(model, "oob_score", False):
        scores["oob_score"] = float(model.oob_score_)
    return scores


def test_metrics(
    model: BaseEstimator, task: Task, X_test: np.ndarray, y_test: np.ndarray
) -> dict[str, float]:
    """Classification: error = 1 - accuracy and log loss; regression: RMSE, MAE and R^2."""
    if task is Task.regression:
        y_pred = model.predict(X_test)
        return {
            "test_rmse": float(metrics.root_mean_squared_error(y_test, y_pred)),
            "test_mae": float(metrics.mean_absolute_error(y_test, y_pred)),
            "test_r2": float(metrics.r2_score(y_test, y_pred)),
        }
    scores = {"test_error": float(1.0 - metrics.accuracy_score(y_test, model.predict(X_test)))}
    if hasattr(model, "predict_proba"):
        proba = model.predict_proba(X_test)
        scores["test_logloss"] = float(metrics.log_loss(y_test, proba, labels=model.classes_))
    return scores


def reset_peak_rss() -> None:
    """Restart the process's peak resident memory (Linux: proc(5), /proc/<pid>/clear_refs), so a
    job run inside a long-lived sweep process measures its own peak; elsewhere a no-op."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def peak_rss_mb() -> float:
    """Peak resident memory of the process since the last reset, in MiB (ru_maxrss is in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
