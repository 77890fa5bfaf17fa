"""No row leaks across the nested protocol (Cawley and Talbot 2010; Varma and Simon 2006): every
row carries its id in its last column, and a ledger records the exact rows each model is fitted
on, predicts, bins (the in-house BinMapper), holds out to stop early (the in-house GBT's and
HoldoutEarlyStopping's split) and hands XGBoost (X, eval_set) and LightGBM (X, eval_X).
check_ledger then asserts, for every trial and every refit:
- a trial fits on a strict subset of the outer training rows; its inner score is computed on
  exactly the rest of them (never on a fit row); its only other prediction is the outer test
  rows (the best-so-far curves);
- a refit fits on exactly the outer training rows;
- binning, the early-stopping split, XGBoost and LightGBM see only the rows of the fit they
  belong to, so never an inner validation or an outer test row.
The outer test scores of the trials' models (the reports' curves) must not change the choice.
Each leak a check exists for is built on purpose by monkeypatching the lab's code, and the
check must report it."""

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

import lightgbm
import numpy as np
import pytest
import xgboost
from sklearn.datasets import load_breast_cancer

from ensembles.engine import binning
from ensembles.methods import boosting
from experiments import run
from experiments.analyses.findings import FittedSplit
from experiments.engines import build, early_stopping
from experiments.evaluation import evaluate, splits
from experiments.run import run_job
from experiments.tuning import search
from experiments.tuning.search import Tuner

N_TRIALS, N_OUTER = 2, 2
INHOUSE_ES = ["engine=inhouse", "tune.inner=kfold", "tune.n_splits=2"]
XGBOOST_ES = ["engine=xgboost", "tune.inner=holdout"]
LIGHTGBM_ES = ["engine=lightgbm", "tune.inner=holdout"]


def ids(X: np.ndarray) -> frozenset:
    """The ids of the rows of X (its last column)."""
    return frozenset(np.asarray(X)[:, -1].astype(int).tolist())


@dataclass
class Fit:
    """One top-level fit: its phase (trial or refit) and outer split, the rows it was given,
    the rows its internals saw (binning, the early-stopping split, XGBoost's and LightGBM's X
    and eval set) and each set of rows the fitted model predicted."""

    phase: str
    split: int
    rows: frozenset
    seen: list[tuple[str, frozenset]] = field(default_factory=list)
    predicted: list[frozenset] = field(default_factory=list)


@dataclass
class Ledger:
    """The outer splits a Tuner was given (train, test ids) and every top-level fit (phase
    "none": outside any split, as the job's numba warm-up on its own tiny data)."""

    splits: dict[int, tuple[frozenset, frozenset]] = field(default_factory=dict)
    fits: list[Fit] = field(default_factory=list)
    phase: tuple[str, int] = ("none", -1)
    current: Fit | None = None
    models: dict[int, tuple[object, Fit]] = field(default_factory=dict)
    predicting: bool = False


def record_rows(monkeypatch, estimator_class: type) -> Ledger:
    """Patch the tuner, the estimator class and its internals to write a Ledger. Installed after
    any leak, so it records what the (leaky) code really passes on."""
    ledger = Ledger()
    tune = Tuner.tune

    def record_tune(self, split: FittedSplit):
        ledger.splits[split.index] = (ids(split.X_train), ids(split.X_test))
        ledger.phase = ("trial", split.index)
        tuning = tune(self, split)
        ledger.phase = ("refit", split.index)  # evaluate refits the best trial next
        return tuning

    def fit_recorder(fit: Callable) -> Callable:
        def record_fit(self, X, *args, **kwargs):
            if ledger.current is not None:  # nested in a fit being recorded
                return fit(self, X, *args, **kwargs)
            ledger.current = Fit(*ledger.phase, ids(X))
            try:
                model = fit(self, X, *args, **kwargs)
            finally:
                ledger.fits.append(ledger.current)
                ledger.models[id(self)] = (self, ledger.current)
                ledger.current = None
            return model

        return record_fit

    def predict_recorder(predict: Callable) -> Callable:
        def record_predict(self, X, *args, **kwargs):
            if ledger.predicting:
                return predict(self, X, *args, **kwargs)
            ledger.predicting = True
            try:
                ledger.models[id(self)][1].predicted.append(ids(X))
                return predict(self, X, *args, **kwargs)
            finally:
                ledger.predicting = False

        return record_predict

    def seen(what: str, X) -> None:
        if ledger.current is not None:
            ledger.current.seen.append((what, ids(X)))

    def split_recorder(split: Callable) -> Callable:
        def record_split(X, *arrays, **kwargs):
            parts = split(X, *arrays, **kwargs)
            seen("early stopping fit", parts[0])
            seen("early stopping validation", parts[1])
            return parts

        return record_split

    bin_fit = binning.BinMapper.fit

    def record_binning(self, X, *args, **kwargs):
        seen("binning", X)
        return bin_fit(self, X, *args, **kwargs)

    def xgboost_recorder(fit: Callable) -> Callable:
        def record_xgboost(self, X, y, *args, eval_set=None, **kwargs):
            seen("xgboost X", X)
            for X_eval, _ in eval_set or []:
                seen("xgboost eval_set", X_eval)
            return fit(self, X, y, *args, eval_set=eval_set, **kwargs)

        return record_xgboost

    def lightgbm_recorder(fit: Callable) -> Callable:
        def record_lightgbm(self, X, y, *args, eval_X=None, **kwargs):
            seen("lightgbm X", X)
            for X_eval in eval_X if isinstance(eval_X, (list, tuple)) else [eval_X]:
                if X_eval is not None:
                    seen("lightgbm eval_X", X_eval)
            return fit(self, X, y, *args, eval_X=eval_X, **kwargs)

        return record_lightgbm

    monkeypatch.setattr(Tuner, "tune", record_tune)
    monkeypatch.setattr(estimator_class, "fit", fit_recorder(estimator_class.fit))
    for name in ("predict", "predict_proba"):
        monkeypatch.setattr(estimator_class, name,
                            predict_recorder(getattr(estimator_class, name)))  # fmt: skip
    monkeypatch.setattr(boosting, "train_test_split", split_recorder(boosting.train_test_split))
    monkeypatch.setattr(early_stopping, "train_test_split",
                        split_recorder(early_stopping.train_test_split))  # fmt: skip
    monkeypatch.setattr(binning.BinMapper, "fit", record_binning)
    for library_class in (xgboost.XGBClassifier, xgboost.XGBRegressor):
        monkeypatch.setattr(library_class, "fit", xgboost_recorder(library_class.fit))
    for library_class in (lightgbm.LGBMClassifier, lightgbm.LGBMRegressor):
        monkeypatch.setattr(library_class, "fit", lightgbm_recorder(library_class.fit))
    return ledger


def check_ledger(ledger: Ledger, n_fits_per_trial: int, internals: set[str]) -> None:
    """AssertionError naming the first leak of the ledger (see the module docstring).
    `internals`: what every fit must have recorded (so a renamed hook fails, not passes)."""
    assert len(ledger.splits) == N_OUTER
    for index, (train, test) in ledger.splits.items():
        assert train and test and not train & test, "outer training and test rows overlap"
        trials = [fit for fit in ledger.fits if fit.phase == "trial" and fit.split == index]
        refits = [fit for fit in ledger.fits if fit.phase == "refit" and fit.split == index]
        assert len(trials) == N_TRIALS * n_fits_per_trial
        assert len(refits) == 1
        for fit in trials:
            assert not fit.rows & test, "a trial fits on outer test rows"
            assert fit.rows < train, "a trial fits on rows outside the outer training rows"
            validation = train - fit.rows
            for rows in fit.predicted:
                if rows == test:
                    continue  # the best-so-far curves' outer test score
                assert rows != fit.rows, "the inner score is computed on the fit rows"
                assert not rows & fit.rows, "inner validation rows overlap the fit rows"
                assert rows == validation, "the inner score is not on the inner validation rows"
            assert validation in fit.predicted, "a trial has no inner score"
        assert refits[0].rows == train, "the refit is not on exactly the outer training rows"
        for fit in trials + refits:
            assert internals <= {what for what, _ in fit.seen}, "a row hook recorded nothing"
            for what, rows in fit.seen:
                assert not rows & test, f"{what} sees outer test rows"
                assert rows <= fit.rows, f"{what} sees rows the fit was not given"


def rows_with_ids() -> tuple[np.ndarray, np.ndarray]:
    """240 breast cancer rows, 5 features and the row id as the last column."""
    X, y = load_breast_cancer(return_X_y=True)
    return np.column_stack([X[:240, :5], np.arange(240)]), y[:240]


def tuned_gbt(compose_job, *overrides: str):
    """A tuned GBT job with early stopping, N_TRIALS trials on each of N_OUTER outer folds."""
    return compose_job("dataset=breast_cancer", "method=gbt", "method.n_estimators=8",
                       "method.early_stopping_rounds=2", "method.validation_fraction=0.2",
                       "tune=random", f"tune.n_trials={N_TRIALS}", "eval.kind=kfold",
                       f"eval.n_splits={N_OUTER}", *overrides)  # fmt: skip


def tuned_run(compose_job, monkeypatch, *overrides: str, leak: Callable | None = None) -> Ledger:
    """evaluate() of tuned_gbt (the job's splits, tuner and refits, no MLflow) on rows_with_ids;
    `leak(monkeypatch)` first breaks the code on purpose."""
    X, y = rows_with_ids()
    cfg = tuned_gbt(compose_job, *overrides)
    estimator = build(cfg, X.shape).estimator
    if leak is not None:
        leak(monkeypatch)
    ledger = record_rows(monkeypatch, type(estimator))
    tuner = Tuner(cfg, X.shape, lambda split_index, metric, records: None)
    task = cfg.dataset.task
    evaluate(estimator, None, task, X, y, splits(cfg.eval, task, X, y, cfg.seed), 0, tuner)
    return ledger


def test_a_whole_tuned_job_leaks_no_row(compose_job, monkeypatch):
    X, y = rows_with_ids()
    monkeypatch.setattr(run, "load_dataset", lambda cfg: (X, y))
    cfg = tuned_gbt(compose_job, *INHOUSE_ES)
    ledger = record_rows(monkeypatch, type(build(cfg, X.shape).estimator))
    assert run_job(cfg) == "ok"
    check_ledger(ledger, 2, {"binning", "early stopping validation"})


@pytest.mark.parametrize(("overrides", "n_fits_per_trial", "internals"), [
    (INHOUSE_ES, 2, {"binning", "early stopping validation"}),
    (XGBOOST_ES, 1, {"early stopping validation", "xgboost X", "xgboost eval_set"}),
    (LIGHTGBM_ES, 1, {"early stopping validation", "lightgbm X", "lightgbm eval_X"}),
], ids=["inhouse-kfold", "xgboost-holdout", "lightgbm-holdout"])  # fmt: skip
def test_no_row_leaks_into_a_trial_or_refit(compose_job, monkeypatch, overrides,
                                           n_fits_per_trial, internals):  # fmt: skip
    ledger = tuned_run(compose_job, monkeypatch, *overrides)
    check_ledger(ledger, n_fits_per_trial, internals)


# Leaks built on purpose: each one a known way nested tuning goes wrong.


def inner_rows_leak(change: Callable) -> Callable:
    """A leak that replaces each inner (fit, validation) pair by change(fit, validation)."""

    def leak(monkeypatch):
        run_trial = Tuner._run_trial

        def leaky_run_trial(self, number, params, split, inner):
            return run_trial(self, number, params, split,
                             [change(fit, validation) for fit, validation in inner])  # fmt: skip

        monkeypatch.setattr(Tuner, "_run_trial", leaky_run_trial)

    return leak


def outer_rows_leak(monkeypatch) -> dict:
    """Keep the outer split being tuned (and then refitted) at hand for a leak: {"split": ...}."""
    current = {}
    tune = Tuner.tune

    def keep_split(self, split):
        current["split"] = split
        return tune(self, split)

    monkeypatch.setattr(Tuner, "tune", keep_split)
    return current


def early_stopping_on_outer_test(module) -> Callable:
    """A leak: the early-stopping split of `module` holds out the outer test rows instead."""

    def leak(monkeypatch):
        current = outer_rows_leak(monkeypatch)

        def leaky_split(X, y, *arrays, **kwargs):
            split = current["split"]
            weights = [array for array in arrays if array is not None]
            rest = [part for array in weights for part in (array, np.ones(len(split.y_test)))]
            return [X, split.X_test, y, split.y_test, *rest]

        monkeypatch.setattr(module, "train_test_split", leaky_split)

    return leak


def outer_test_rows_in_the_trials(monkeypatch):
    """A leak: the tuner's training rows include a few outer test rows."""
    tune = Tuner.tune

    def leaky_tune(self, split):
        return tune(self, FittedSplit(split.index, np.vstack([split.X_train, split.X_test[:3]]),
                                      np.concatenate([split.y_train, split.y_test[:3]]),
                                      split.X_test, split.y_test))  # fmt: skip

    monkeypatch.setattr(Tuner, "tune", leaky_tune)


def binning_on_outer_training_rows(monkeypatch):
    """A leak: the in-house GBT bins on every outer training row (the inner validation rows
    too), as preprocessing fitted before the inner split would."""
    current = outer_rows_leak(monkeypatch)

    class LeakyBinMapper(binning.BinMapper):
        def fit(self, X):
            return super().fit(np.vstack([X, current["split"].X_train]))

    monkeypatch.setattr(boosting, "BinMapper", LeakyBinMapper)


LEAKS = {
    "outer test rows in the trials": (
        INHOUSE_ES,
        outer_test_rows_in_the_trials,
        "a trial fits on outer test rows",
    ),
    "score on fit rows": (
        INHOUSE_ES,
        inner_rows_leak(lambda fit, validation: (fit, fit)),
        "the inner score is computed on the fit rows",
    ),
    "half the validation rows join the fit": (
        INHOUSE_ES,
        inner_rows_leak(
            lambda fit, validation: (np.concatenate([fit, validation[::2]]), validation)
        ),
        "inner validation rows overlap the fit rows",
    ),
    "in-house early stopping on outer test rows": (
        INHOUSE_ES,
        early_stopping_on_outer_test(boosting),
        "early stopping validation sees outer test rows",
    ),
    "xgboost eval_set of outer test rows": (
        XGBOOST_ES,
        early_stopping_on_outer_test(early_stopping),
        "early stopping validation sees outer test rows",
    ),
    "binning on inner validation rows": (
        INHOUSE_ES,
        binning_on_outer_training_rows,
        "binning sees rows the fit was not given",
    ),
}


@pytest.mark.parametrize("name", list(LEAKS))
def test_the_check_reports_each_leak(compose_job, monkeypatch, name):
    overrides, leak, message = LEAKS[name]
    n_fits_per_trial = 2 if overrides is INHOUSE_ES else 1
    ledger = tuned_run(compose_job, monkeypatch, *overrides, leak=leak)
    with pytest.raises(AssertionError, match=message):
        check_ledger(ledger, n_fits_per_trial, set())


# The outer test score of each trial's models (for the reports' curves) never reaches the choice.


def choice_under_outer_scores(compose_job, monkeypatch, sign: int) -> tuple[dict, list]:
    """The chosen parameters and the trials' inner scores of one tuned split when the outer test
    scores of its trials are sign x 0, 1, 2, ... (sign 1: the first trial looks best on the
    outer test rows, -1: the last)."""
    calls = itertools.count()
    monkeypatch.setattr(search, "outer_test_score", lambda *args: sign * float(next(calls)))
    X, y = rows_with_ids()
    trials = []
    tuner = Tuner(tuned_gbt(compose_job, "tune.inner=holdout"), X.shape,
                  lambda split_index, metric, records: trials.extend(records))  # fmt: skip
    tuning = tuner.tune(FittedSplit(0, X[:160], y[:160], X[160:], y[160:]))
    return tuning.best_params, [record.inner_score for record in trials]


def check_choice_ignores_outer_scores(compose_job, monkeypatch) -> None:
    """AssertionError when outer test scores that favour the first trial, or the last, change
    the chosen parameters or the trials' inner scores from those under constant outer scores:
    a choice made on them would take the first trial under one order and the last under the
    other, so at least one of the two differs from the honest choice."""
    honest = choice_under_outer_scores(compose_job, monkeypatch, 0)
    for sign in (1, -1):
        assert choice_under_outer_scores(compose_job, monkeypatch, sign) == honest, (
            "the outer test scores change the tuning"
        )


def test_the_outer_test_scores_never_reach_the_choice(compose_job, monkeypatch):
    check_choice_ignores_outer_scores(compose_job, monkeypatch)


def test_the_check_reports_a_choice_made_on_outer_test_scores(compose_job, monkeypatch):
    def best_on_outer_test(trials):
        return min(trials, key=lambda record: record.outer_test_score)

    monkeypatch.setattr(search, "best_trial", best_on_outer_test)
    with pytest.raises(AssertionError, match="the outer test scores change the tuning"):
        check_choice_ignores_outer_scores(compose_job, monkeypatch)
