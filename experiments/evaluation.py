"""The splitting protocol; per split the test metrics, the learning curve of an iterative
method and the parity with the in-house engine."""

import time
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from omegaconf import DictConfig
from sklearn import metrics, model_selection
from sklearn.base import BaseEstimator, clone

from experiments.analyses.diversity import diversity_findings
from experiments.analyses.findings import FittedSplit
from experiments.analyses.margins import margin_findings
from experiments.configs import EvalKind, Task
from experiments.engines.members import curve_points, size_metrics

if TYPE_CHECKING:
    from experiments.tuning.search import Tuner  # which imports this module

# the per-split analyses (experiments/analyses/): (model, FittedSplit) -> Findings on each split
SPLIT_ANALYSES = (diversity_findings, margin_findings)


def splits(
    cfg: DictConfig, task: Task, X: np.ndarray, y: np.ndarray, seed: int
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(train, test) index pairs of the eval config: n_repeats holdouts of test_size (kind
    bias_variance uses the first as its fixed test set), or n_repeats x n_splits folds."""
    kfold = cfg.kind is EvalKind.kfold
    return split_rows(task, X, y, kfold, cfg.test_size, cfg.n_splits, cfg.n_repeats, seed)


def cap_training_rows(
    folds: Iterable[tuple[np.ndarray, np.ndarray]], max_train_rows: int | None, seed: int
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Each split with at most max_train_rows training rows, drawn without replacement with
    the job seed (None: every split as it is)."""
    rng = np.random.RandomState(seed)
    for train, test in folds:
        if max_train_rows is not None and len(train) > max_train_rows:
            train = np.sort(rng.choice(train, max_train_rows, replace=False))
        yield train, test


def split_rows(
    task: Task,
    X: np.ndarray,
    y: np.ndarray,
    kfold: bool,
    test_size: float | int,
    n_splits: int,
    n_repeats: int,
    seed: int,
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """n_repeats x n_splits (train, test) folds, or n_repeats holdouts of test_size (a fraction
    or a number of rows); stratified on y for classification."""
    stratified = task is not Task.regression
    if kfold:
        splitter_class = (
            model_selection.RepeatedStratifiedKFold if stratified else model_selection.RepeatedKFold
        )
        splitter = splitter_class(n_splits=n_splits, n_repeats=n_repeats, random_state=seed)
    else:
        splitter_class = (
            model_selection.StratifiedShuffleSplit if stratified else model_selection.ShuffleSplit
        )
        splitter = splitter_class(n_splits=n_repeats, test_size=test_size, random_state=seed)
    return splitter.split(X, y)


def evaluate(
    estimator: BaseEstimator,
    inhouse: BaseEstimator | None,
    task: Task,
    X: np.ndarray,
    y: np.ndarray,
    folds: Iterable[tuple[np.ndarray, np.ndarray]],
    curve_every: int,
    tuner: "Tuner | None" = None,
) -> tuple[list[dict[str, float]], dict[int, float], dict[str, pd.DataFrame]]:
    """Fit and score the estimator on each (train, test) split and run every per-split
    analysis (experiments.analyses) on it; with an in-house twin, add the parity metrics of
    each split. With a tuner (experiments.tuning.search.Tuner), the estimator of a split is
    the best configuration found on its training rows, with the tune_* metrics. Return the
    scores of each split, the learning curve of the first and the analyses' tables."""
    scores, curve, tables = [], {}, {}
    for index, (train, test) in enumerate(folds):
        split = FittedSplit(index, X[train], y[train], X[test], y[test])
        split_estimator, tuning_scores = estimator, {}
        if tuner is not None:
            tuning = tuner.tune(split)
            split_estimator, tuning_scores = tuning.estimator, tuning.scores
        model, split_scores = fit_and_score(split_estimator, task, X[train], y[train], X[test],
                                            y[test])  # fmt: skip
        split_scores |= tuning_scores
        for analysis in SPLIT_ANALYSES:
            findings = analysis(model, split)
            split_scores |= findings.metrics
            tables |= findings.tables
        if index == 0:
            curve = learning_curve(model, task, X[test], y[test], curve_every)
        if inhouse is not None:
            twin = clone(inhouse).fit(X[train], y[train])
            split_scores |= parity_scores(twin, model, task, X[train], X[test], y[test])
        scores.append(split_scores)
    return scores, curve, tables


def fit_and_score(
    estimator: BaseEstimator,
    task: Task,
    X_train: np.ndarray,
    y_train: np.ndarray,
    X_test: np.ndarray,
    y_test: np.ndarray,
) -> tuple[BaseEstimator, dict[str, float]]:
    """Fit a clone of the estimator; return it with its test metrics, timings and size."""
    model = clone(estimator)
    start = time.perf_counter()
    model.fit(X_train, y_train)
    fit_seconds = time.perf_counter() - start
    start = time.perf_counter()
    scores = test_metrics(model, task, X_test, y_test)
    scores["predict_seconds"] = time.perf_counter() - start
    scores["fit_seconds"] = fit_seconds
    scores |= size_metrics(model)
    if getattr(model, "oob_score", False):
        scores["oob_score"] = float(model.oob_score_)
    return model, scores


def primary_metric(task: Task) -> str:
    """The metric a curve and a parity check report: test_error or test_rmse."""
    return "test_rmse" if task is Task.regression else "test_error"


def primary_score(task: Task, y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Classification error 1 - accuracy, or regression RMSE."""
    if task is Task.regression:
        return float(metrics.root_mean_squared_error(y_true, y_pred))
    return float(1.0 - metrics.accuracy_score(y_true, y_pred))


def test_metrics(
    model: BaseEstimator, task: Task, X_test: np.ndarray, y_test: np.ndarray
) -> dict[str, float]:
    """Classification: error = 1 - accuracy and log loss; regression: RMSE, MAE and R^2."""
    y_pred = model.predict(X_test)
    scores = {primary_metric(task): primary_score(task, y_test, y_pred)}
    if task is Task.regression:
        scores["test_mae"] = float(metrics.mean_absolute_error(y_test, y_pred))
        scores["test_r2"] = float(metrics.r2_score(y_test, y_pred))
    elif hasattr(model, "predict_proba"):
        proba = model.predict_proba(X_test)
        scores["test_logloss"] = float(metrics.log_loss(y_test, proba, labels=model.classes_))
    return scores


def learning_curve(
    model: BaseEstimator, task: Task, X_test: np.ndarray, y_test: np.ndarray, every: int
) -> dict[int, float]:
    """{rounds: primary test metric} after round (or member) 1, every `every` rounds and the
    last one; empty for a model that is not iterative or with every = 0."""
    if every < 1:
        return {}
    return {
        rounds: primary_score(task, y_test, y_pred)
        for rounds, y_pred in curve_points(model, X_test, every)
    }


def parity_scores(
    inhouse: BaseEstimator,
    reference: BaseEstimator,
    task: Task,
    X_train: np.ndarray,
    X_test: np.ndarray,
    y_test: np.ndarray,
) -> dict[str, float]:
    """parity_max_abs_diff = max |p_inhouse - p_reference| over the test rows (and classes) of
    predict_proba, or of predict for regression; parity_train_max_abs_diff, the same over the
    training rows, where a threshold placed at a training value or at the midpoint to the next
    one splits alike; parity_metric_diff = in-house primary metric minus the reference's."""
    return {
        "parity_max_abs_diff": max_abs_diff(inhouse, reference, task, X_test),
        "parity_train_max_abs_diff": max_abs_diff(inhouse, reference, task, X_train),
        "parity_metric_diff": primary_score(task, y_test, inhouse.predict(X_test))
        - primary_score(task, y_test, reference.predict(X_test)),
    }


def max_abs_diff(first: BaseEstimator, second: BaseEstimator, task: Task, X: np.ndarray) -> float:
    """max |p_first - p_second| of predict_proba (classification) or predict (regression)."""
    if task is Task.regression:
        return float(np.abs(first.predict(X) - second.predict(X)).max())
    return float(np.abs(first.predict_proba(X) - second.predict_proba(X)).max())
