"""Nested tuning of one outer split (Grinsztajn et al. 2022; Probst et al. 2019): Optuna
samples the method's parameters from its search space, each trial fits on the inner training
rows, drawn from the outer training rows only, and is scored on the inner validation rows;
evaluation then refits the best trial's configuration on all the outer training rows and scores
it once on the outer test rows.

Each trial's models also predict the outer test rows, for the best-so-far curves of the
reports only: that score never reaches the sampler or the choice of the best trial.
"""

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import optuna
from omegaconf import DictConfig
from sklearn.base import BaseEstimator, clone

from experiments.analyses import FittedSplit
from experiments.configs import InnerKind, Task, method_key
from experiments.engines import SkippedJob, build
from experiments.evaluation import primary_metric, split_rows, test_metrics
from experiments.tuning.space import distributions, probe_values

optuna.logging.set_verbosity(optuna.logging.WARNING)  # a job logs its own summary line
SAMPLERS = {"random": optuna.samplers.RandomSampler, "tpe": optuna.samplers.TPESampler}
TUNE_METRICS = {
    Task.binary: ("error", "logloss"),
    Task.multiclass: ("error", "logloss"),
    Task.regression: ("rmse", "mae"),
}


@dataclass(frozen=True)
class TrialRecord:
    """One trial: its number, parameters, inner validation score, the outer test score of its
    models (reports only), its wall time and the part of it spent fitting and scoring; a
    configuration the engine cannot run on this data (lightgbm's rf mode with max_features
    giving 1 feature) has the reason instead of scores (NaN)."""

    number: int
    params: dict
    inner_score: float
    outer_test_score: float
    seconds: float
    fit_score_seconds: float
    infeasible: str | None = None


@dataclass(frozen=True)
class Tuning:
    """The result of tuning one outer split: the unfitted estimator of the best trial, its
    parameters, and the tune_* metrics of the split."""

    estimator: BaseEstimator
    best_params: dict
    scores: dict[str, float]


def best_trial(trials: list[TrialRecord]) -> TrialRecord:
    """The feasible trial of lowest inner score (ties: the earlier); SkippedJob if none ran."""
    feasible = [record for record in trials if record.infeasible is None]
    if not feasible:
        raise SkippedJob(f"no trial could run: {trials[0].infeasible}")
    return min(feasible, key=lambda record: (record.inner_score, record.number))


def tune_metric(tune: DictConfig, task: Task) -> str:
    """The inner metric to minimize: tune.metric, else the task's primary one (error, rmse)."""
    return tune.metric or primary_metric(task).removeprefix("test_")


def with_params(cfg: DictConfig, params: dict) -> DictConfig:
    """The job config with method parameters replaced by `params`."""
    tuned = cfg.copy()
    for name, value in params.items():
        tuned.method[name] = value
    return tuned


def score(model: BaseEstimator, task: Task, metric: str, X: np.ndarray, y: np.ndarray) -> float:
    """test_<metric> of the fitted model on (X, y)."""
    return test_metrics(model, task, X, y)[f"test_{metric}"]


def fit_inner(estimator: BaseEstimator, X: np.ndarray, y: np.ndarray) -> BaseEstimator:
    """A clone of the estimator fitted on inner training rows."""
    return clone(estimator).fit(X, y)


def outer_test_score(model: BaseEstimator, task: Task, metric: str, split: FittedSplit) -> float:
    """A trial model's score on the outer test rows: for the best-so-far curves of the reports,
    never for choosing a trial."""
    return score(model, task, metric, split.X_test, split.y_test)


class Tuner:
    """Tunes the job's method on each outer split it is given. Building it checks that the
    job's engine maps every parameter of the space (SkippedJob otherwise, before any trial); a
    trial whose values the engine cannot run on this data is infeasible, not the job.
    `log_trials(split_index, metric, trials)` receives each split's trials; `best_params` holds the
    chosen parameters of every split tuned so far."""

    def __init__(
        self,
        cfg: DictConfig,
        shape: tuple[int, int],
        log_trials: Callable[[int, str, list[TrialRecord]], None],
    ):
        self.cfg = cfg
        self.task = cfg.dataset.task
        self.space = cfg.search_space[method_key(cfg.method)]
        self.distributions = distributions(self.space)
        self.metric = tune_metric(cfg.tune, self.task)
        self.seed = cfg.seed if cfg.tune.seed is None else cfg.tune.seed
        self.log_trials = log_trials
        self.best_params: list[dict] = []
        for name, values in probe_values(self.space, cfg.method).items():
            self._check_mapped(name, values, shape)

    def _check_mapped(self, name: str, values: list, shape: tuple[int, int]) -> None:
        """SkippedJob unless the engine builds the job with at least one of the values."""
        reasons = []
        for value in values:
            try:
                build(with_params(self.cfg, {name: value}), shape)
                return
            except SkippedJob as reason:
                reasons.append(reason)
        if reasons:
            raise reasons[0]

    def tune(self, split: FittedSplit) -> Tuning:
        """Run the trials on the split's training rows; return the best trial's estimator (with
        `tunability`, also the outer test scores of the defaults and of each parameter tuned
        alone)."""
        start = time.perf_counter()
        tune = self.cfg.tune
        inner = list(split_rows(self.task, split.X_train, split.y_train,
                                tune.inner is InnerKind.kfold, tune.test_size, tune.n_splits, 1,
                                self.seed))  # fmt: skip
        trials = self._study(self.distributions, split, inner)
        self.log_trials(split.index, self.metric, trials)
        best = best_trial(trials)
        self.best_params.append(best.params)
        estimator = build(with_params(self.cfg, best.params), split.X_train.shape).estimator
        seconds = time.perf_counter() - start
        fit_score_seconds = sum(record.fit_score_seconds for record in trials)
        scores = {
            "tune_trials": float(len(trials)),
            "tune_seconds": seconds,
            f"tune_best_inner_{self.metric}": best.inner_score,
            "tune_overhead_fraction": 1.0 - fit_score_seconds / seconds,
        }
        if tune.tunability:
            scores |= self._tunability(split, inner)
        return Tuning(estimator, best.params, scores)

    def _study(self, space: dict, split: FittedSplit, inner: list[tuple]) -> list[TrialRecord]:
        """Optuna's ask-and-tell loop over `space` (the sampler seeded by the job), until
        n_trials or timeout_seconds; a trial the engine cannot run is told as failed."""
        start = time.perf_counter()
        tune = self.cfg.tune
        study = optuna.create_study(direction="minimize",
                                    sampler=SAMPLERS[tune.name](seed=self.seed))  # fmt: skip
        trials = []
        while len(trials) < tune.n_trials and not (
            tune.timeout_seconds is not None
            and time.perf_counter() - start >= tune.timeout_seconds
        ):
            trial = study.ask(space)
            try:
                record = self._run_trial(trial.number, trial.params, split, inner)
                study.tell(trial, record.inner_score)
            except SkippedJob as reason:
                record = TrialRecord(trial.number, dict(trial.params), np.nan, np.nan, 0.0, 0.0,
                                     str(reason))  # fmt: skip
                study.tell(trial, state=optuna.trial.TrialState.FAIL)
            trials.append(record)
        return trials

    def _tunability(self, split: FittedSplit, inner: list[tuple]) -> dict[str, float]:
        """Probst et al. (2019, eq. 2 with nested scores): the outer test score of the method
        config (default_test_<metric>) and, per parameter p, of the best configuration of a
        study that tunes p alone on the same inner split, the others at the method config's
        values, refitted on the outer training rows (tunability_<p>_test_<metric>). The
        tunability of p on this split is default - tuned alone."""
        scores = {f"default_test_{self.metric}": self._refit_score({}, split)}
        for name, distribution in self.distributions.items():
            alone = best_trial(self._study({name: distribution}, split, inner))
            score_alone = self._refit_score(alone.params, split)
            scores[f"tunability_{name}_test_{self.metric}"] = score_alone
        return scores

    def _refit_score(self, params: dict, split: FittedSplit) -> float:
        """The method config with `params`, fitted on the outer training rows and scored once on
        the outer test rows."""
        estimator = build(with_params(self.cfg, params), split.X_train.shape).estimator
        model = fit_inner(estimator, split.X_train, split.y_train)
        return outer_test_score(model, self.task, self.metric, split)

    def _run_trial(
        self, number: int, params: dict, split: FittedSplit, inner: list[tuple]
    ) -> TrialRecord:
        """Fit the trial's configuration on each inner training part; its inner score is the
        mean over the inner validation parts, its outer test score the mean of its models."""
        start = time.perf_counter()
        estimator = build(with_params(self.cfg, params), split.X_train.shape).estimator
        working = 0.0
        inner_scores, test_scores = [], []
        for fit_rows, val_rows in inner:
            begin = time.perf_counter()
            model = fit_inner(estimator, split.X_train[fit_rows], split.y_train[fit_rows])
            inner_scores.append(score(model, self.task, self.metric,
                                      split.X_train[val_rows], split.y_train[val_rows]))
            test_scores.append(outer_test_score(model, self.task, self.metric, split))
            working += time.perf_counter() - begin
        return TrialRecord(number, dict(params), float(np.mean(inner_scores)),
                           float(np.mean(test_scores)), time.perf_counter() - start,
                           working)  # fmt: skip
