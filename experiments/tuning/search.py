"""Nested tuning of one outer split (Grinsztajn et al. 2022; Probst et al. 2019): Optuna
samples the method's parameters from its search space, each trial fits on the inner training
rows, drawn from the outer training rows only, and is scored on the inner validation rows;
evaluation then refits the best trial's configuration on all the outer training rows and scores
it once on the outer test rows.

Trial 0 of every study is the default configuration (the method config's values of the
space's parameters), so the chosen configuration is never worse on the inner score than the
default (Grinsztajn et al.'s `default_first`); the best trial is chosen by
selection.selection_key. Each trial's models also predict the outer test rows, for the
best-so-far curves of the reports only: that score never reaches the sampler or the choice of
the best trial.
"""

import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from functools import partial

import numpy as np
import optuna
from omegaconf import DictConfig
from sklearn.base import BaseEstimator, clone

from experiments.analyses.findings import FittedSplit
from experiments.configs import InnerKind, Task, method_key
from experiments.engines import SkippedJob, build, openmp_threads
from experiments.engines.mapping import with_task_defaults
from experiments.evaluation import split_rows, test_metrics
from experiments.tuning.selection import selection_key, tiebreak_metric, tune_metric
from experiments.tuning.space import contains, distributions, probe_values
from experiments.tuning.trial_limit import WARM_UP_ROWS, TrialTimedOut, TrialWorker

optuna.logging.set_verbosity(optuna.logging.WARNING)  # a job logs its own summary line
SAMPLERS = {"random": optuna.samplers.RandomSampler, "tpe": optuna.samplers.TPESampler}


@dataclass(frozen=True)
class TrialRecord:
    """One trial: its number (0: the default configuration), parameters, inner validation
    score, inner value of the tie-break metric, the outer test score of its models (reports
    only), its wall time and the part of it spent fitting and scoring. A configuration the
    engine cannot run on this data (lightgbm's rf mode with max_features giving 1 feature) has
    the reason in `infeasible`, one whose fit or scoring raised the error line in `error`; both
    have NaN scores."""

    number: int
    params: dict
    inner_score: float
    inner_tiebreak: float
    outer_test_score: float
    seconds: float
    fit_score_seconds: float
    infeasible: str | None = None
    error: str | None = None

    @property
    def default(self) -> bool:
        return self.number == 0

    @property
    def scored(self) -> bool:
        return self.infeasible is None and self.error is None

    @property
    def timed_out(self) -> bool:
        """Stopped at tune.trial_seconds (a failed trial)."""
        return self.error is not None and self.error.startswith(TrialTimedOut.__name__)


@dataclass(frozen=True)
class Tuning:
    """The result of tuning one outer split: the unfitted estimator of the best trial, its
    parameters, and the tune_* metrics of the split."""

    estimator: BaseEstimator
    best_params: dict
    scores: dict[str, float]


class TrialsFailed(RuntimeError):
    """Every feasible trial of a study raised: the job fails with the first trial's error."""


def best_trial(trials: list[TrialRecord]) -> TrialRecord:
    """The scored trial first by selection_key (lowest inner score, then lowest inner
    tie-break metric, then the earlier trial); TrialsFailed when no trial ran but some failed,
    SkippedJob when every one was infeasible."""
    scored = [record for record in trials if record.scored]
    if scored:
        return min(scored, key=lambda record: selection_key(
            record.inner_score, record.inner_tiebreak, record.number))
    failed = next((record for record in trials if record.error is not None), None)
    if failed is not None:
        raise TrialsFailed(f"no trial ran: trial {failed.number} failed with {failed.error}")
    raise SkippedJob(f"no trial could run: {trials[0].infeasible}")


def default_params(method: DictConfig, task: Task, names: list[str]) -> dict:
    """The default configuration of a search over `names`: the method config's values, with
    max_features=auto resolved for the task as the engines resolve it (sqrt or 1.0)."""
    method = with_task_defaults(method, task)
    return {name: method[name].value if isinstance(method[name], Enum) else method[name]
            for name in names}  # fmt: skip


def estimator_params(estimator: BaseEstimator) -> dict[str, str]:
    """The estimator's parameters (nested ones by their `outer__inner` names), as text."""
    return {name: repr(value) for name, value in estimator.get_params(deep=True).items()
            if not isinstance(value, BaseEstimator)}  # fmt: skip


def with_params(cfg: DictConfig, params: dict) -> DictConfig:
    """The job config with method parameters replaced by `params`."""
    tuned = cfg.copy()
    for name, value in params.items():
        tuned.method[name] = value
    return tuned


def score(
    model: BaseEstimator, task: Task, metrics: tuple[str, ...], X: np.ndarray, y: np.ndarray
) -> tuple[float, ...]:
    """test_<metric> of the fitted model on (X, y) for each of `metrics`, from one prediction
    (the first must exist; NaN for a later one the model lacks: log-loss without
    predict_proba)."""
    values = test_metrics(model, task, X, y)
    first, *others = metrics
    return (values[f"test_{first}"], *(values.get(f"test_{metric}", np.nan) for metric in others))


def fit_inner(estimator: BaseEstimator, X: np.ndarray, y: np.ndarray) -> BaseEstimator:
    """A clone of the estimator fitted on inner training rows."""
    return clone(estimator).fit(X, y)


def outer_test_score(model: BaseEstimator, task: Task, metric: str, split: FittedSplit) -> float:
    """A trial model's score on the outer test rows: for the best-so-far curves of the reports,
    never for choosing a trial."""
    return score(model, task, (metric,), split.X_test, split.y_test)[0]


class Tuner:
    """Tunes the job's method on each outer split it is given. Building it checks that the
    job's engine maps every parameter of the space, and does not ignore one the in-house engine
    maps (SkippedJob otherwise, before any trial); a trial whose values the engine cannot run on
    this data is infeasible, not the job.
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
        self.metric = tune_metric(cfg.tune.metric, self.task)
        self.metrics = (self.metric, tiebreak_metric(self.metric))
        self.seed = cfg.seed if cfg.tune.seed is None else cfg.tune.seed
        self.log_trials = log_trials
        limit = cfg.tune.get("trial_seconds")
        self.worker = None if limit is None else TrialWorker(limit)
        self.best_params: list[dict] = []
        for name, values in probe_values(self.space, cfg.method).items():
            self._check_mapped(name, values, shape)

    def _check_mapped(self, name: str, values: list, shape: tuple[int, int]) -> None:
        """SkippedJob unless the engine builds the job with at least one of the values and maps
        the parameter: where some value changes the in-house estimator, some value changes the
        engine's (scikit-learn's GBT ignores min_child_weight to classify: searching it there
        would search a smaller space than on the other engines, at the same trial count)."""
        engine = self.cfg.engine.name
        if self._changes_estimator(name, values, shape, engine) or engine == "inhouse":
            return
        try:
            mapped_inhouse = self._changes_estimator(name, values, shape, "inhouse")
        except SkippedJob:
            return
        if mapped_inhouse:
            raise SkippedJob(
                f"{engine} ignores {name} on {self.task.value} tasks (one estimator for every "
                f"value of search_space.{method_key(self.cfg.method)}.{name}): tuning it there "
                "would search a smaller space than the other engines")

    def _changes_estimator(self, name: str, values: list, shape: tuple[int, int],
                           engine: str) -> bool:  # fmt: skip
        """Whether some value of `name` builds another `engine` estimator than the method
        config's; SkippedJob (the first reason) when the engine builds with none of them."""
        default = estimator_params(build(self.cfg, shape, engine).estimator)
        reasons, changed = [], False
        for value in values:
            try:
                built = build(with_params(self.cfg, {name: value}), shape, engine)
            except SkippedJob as reason:
                reasons.append(reason)
                continue
            changed = changed or estimator_params(built.estimator) != default
        if reasons and len(reasons) == len(values):
            raise reasons[0]
        return changed

    def tune(self, split: FittedSplit) -> Tuning:
        """Run the trials on the split's training rows; return the best trial's estimator (with
        `tunability`, also the outer test scores of the defaults and of each parameter tuned
        alone). The trials are logged before the best is chosen: a job whose trials all failed
        fails (TrialsFailed) with them on record."""
        try:
            return self._tune(split)
        finally:
            if self.worker is not None:
                self.worker.close()

    def _tune(self, split: FittedSplit) -> Tuning:
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
            "tune_trials": float(sum(record.scored for record in trials)),
            "tune_failed_trials": float(sum(record.error is not None for record in trials)),
            "tune_timed_out_trials": float(sum(record.timed_out for record in trials)),
            "tune_infeasible_trials": float(sum(record.infeasible is not None
                                                for record in trials)),  # fmt: skip
            "tune_seconds": seconds,
            f"tune_best_inner_{self.metric}": best.inner_score,
            "tune_overhead_fraction": 1.0 - fit_score_seconds / seconds,
        }
        if tune.tunability:
            scores |= self._tunability(split, inner)
        return Tuning(estimator, best.params, scores)

    def _study(self, space: dict, split: FittedSplit, inner: list[tuple]) -> list[TrialRecord]:
        """Optuna's ask-and-tell loop over `space`, the sampler seeded by the job, until
        n_trials feasible trials (scored or failed) or timeout_seconds, checked between trials.

        Trial 0 is the default configuration (default_params). It is enqueued, so that the
        sampler learns from it, when each value lies in its distribution; otherwise it runs
        beside the study, untold (Optuna stores a fixed value out of range with a warning, for
        TPE to model, and refuses a value out of a log range or a categorical's choices). The
        random sampler draws trials 1, 2, ... alike either way. A trial whose values the engine
        cannot run on this data (infeasible) is told as failed and resampled, at most n_trials
        times a study; a trial that raises is told as failed and counts as a trial."""
        start = time.perf_counter()
        tune = self.cfg.tune
        study = optuna.create_study(direction="minimize",
                                    sampler=SAMPLERS[tune.name](seed=self.seed))  # fmt: skip
        default = default_params(self.cfg.method, self.task, list(space))
        default_told = contains(space, default)
        if default_told:
            study.enqueue_trial(default, skip_if_exists=False)
        trials: list[TrialRecord] = []
        feasible = infeasible = 0
        while (feasible < tune.n_trials and infeasible < tune.n_trials
               and not (trials and tune.timeout_seconds is not None
                        and time.perf_counter() - start >= tune.timeout_seconds)):  # fmt: skip
            if trials or default_told:
                trial = study.ask(space)
                record = self._trial(len(trials), dict(trial.params), split, inner)
                if record.scored:
                    study.tell(trial, record.inner_score)
                else:
                    study.tell(trial, state=optuna.trial.TrialState.FAIL)
            else:
                record = self._trial(0, default, split, inner)
            trials.append(record)
            infeasible += record.infeasible is not None
            feasible += record.infeasible is None
        return trials

    def _trial(
        self, number: int, params: dict, split: FittedSplit, inner: list[tuple]
    ) -> TrialRecord:
        """_run_trial, with a configuration the engine cannot run on this data recorded as
        infeasible and one whose fit or scoring raises (values the estimator refuses, a
        library's error, a trial stopped at tune.trial_seconds) as failed, with the error's
        first line and the seconds it took."""
        start = time.perf_counter()
        try:
            return self._run_trial(number, params, split, inner)
        except SkippedJob as reason:
            return TrialRecord(number, params, np.nan, np.nan, np.nan, 0.0, 0.0,
                               infeasible=str(reason))  # fmt: skip
        except Exception as error:
            line = (str(error).strip().splitlines() or [""])[0]
            seconds = time.perf_counter() - start
            return TrialRecord(number, params, np.nan, np.nan, np.nan, seconds, seconds,
                               error=f"{type(error).__name__}: {line}")  # fmt: skip

    def _tunability(self, split: FittedSplit, inner: list[tuple]) -> dict[str, float]:
        """Probst et al. (2019, eq. 2 with nested scores): the outer test scores of the method
        config (default_test_<metric>) and, per parameter p, of the best configuration of a
        study that tunes p alone on the same inner split, the others at the method config's
        values, refitted on the outer training rows (tunability_<p>_test_<metric>), for the
        tuned metric and its tie-break metric (error and logloss, rmse and mae). The
        tunability of p on this split is default - tuned alone."""
        scores = {f"default_{key}": value for key, value in self._refit_scores({}, split).items()}
        for name, distribution in self.distributions.items():
            alone = best_trial(self._study({name: distribution}, split, inner))
            scores |= {f"tunability_{name}_{key}": value
                       for key, value in self._refit_scores(alone.params, split).items()}
        return scores

    def _refit_scores(self, params: dict, split: FittedSplit) -> dict[str, float]:
        """test_<metric> of the method config with `params`, fitted on the outer training rows
        and scored once on the outer test rows, for the tuned and the tie-break metric."""
        estimator = build(with_params(self.cfg, params), split.X_train.shape).estimator
        model = fit_inner(estimator, split.X_train, split.y_train)
        values = score(model, self.task, self.metrics, split.X_test, split.y_test)
        return {f"test_{metric}": value for metric, value in zip(self.metrics, values,
                                                                 strict=True)}  # fmt: skip

    def _run_trial(
        self, number: int, params: dict, split: FittedSplit, inner: list[tuple]
    ) -> TrialRecord:
        """run_trial here, or in the trial worker when tune.trial_seconds limits a trial."""
        if self.worker is None:
            return run_trial(self.cfg, self.metrics, number, params, split, inner)
        warm = partial(warm_up, self.cfg, self.metrics, split)
        return self.worker.run(warm, run_trial, self.cfg, self.metrics, number, params, split,
                               inner)  # fmt: skip


def run_trial(cfg: DictConfig, metrics: tuple[str, str], number: int, params: dict,
              split: FittedSplit, inner: list[tuple]) -> TrialRecord:  # fmt: skip
    """Fit the trial's configuration on each inner training part; its inner scores (`metrics`:
    the tuned one and its tie-break) are the means over the inner validation parts, its outer
    test score the mean of its models'."""
    start = time.perf_counter()
    task = cfg.dataset.task
    estimator = build(with_params(cfg, params), split.X_train.shape).estimator
    working = 0.0
    inner_scores, test_scores = [], []
    with openmp_threads(cfg):  # in a trial worker, the job's limit does not hold
        for fit_rows, val_rows in inner:
            begin = time.perf_counter()
            model = fit_inner(estimator, split.X_train[fit_rows], split.y_train[fit_rows])
            inner_scores.append(score(model, task, metrics, split.X_train[val_rows],
                                      split.y_train[val_rows]))  # fmt: skip
            test_scores.append(outer_test_score(model, task, metrics[0], split))
            working += time.perf_counter() - begin
    inner_score, inner_tiebreak = np.mean(inner_scores, axis=0)
    return TrialRecord(number, dict(params), float(inner_score), float(inner_tiebreak),
                       float(np.mean(test_scores)), time.perf_counter() - start,
                       working)  # fmt: skip


def warm_up(cfg: DictConfig, metrics: tuple[str, str], split: FittedSplit) -> None:
    """Fit the job's own (default) configuration on the first WARM_UP_ROWS training rows and
    score it there: the imports and the engine's compilation of a new trial worker
    (trial_limit), paid before any trial (never a trial's configuration, which may be the one
    that overran)."""
    X, y = split.X_train[:WARM_UP_ROWS], split.y_train[:WARM_UP_ROWS]
    with openmp_threads(cfg):
        model = fit_inner(build(cfg, split.X_train.shape).estimator, X, y)
        score(model, cfg.dataset.task, metrics, X, y)
