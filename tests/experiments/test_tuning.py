"""Tuning inside a job (no row leaks: test_tuning_leakage.py): a seed fixes the search, the
tuner finds a setting built to be best, and a tuned job beats a badly configured untuned one;
every trial is a child run of its job."""

import json
import os

import numpy as np
import pandas as pd
import pytest
from mlflow import MlflowClient

from experiments.analyses.findings import FittedSplit
from experiments.config_errors import exit_if_invalid
from experiments.configs import Task
from experiments.run import run_job
from experiments.store.tracking import BEST_PARAMS_ARTIFACT, run_key
from experiments.tuning import search
from experiments.tuning.search import Tuner
from experiments.tuning.selection import tiebreak_metric, tune_metric

SMALL_GBT = ["method=gbt", "method.n_estimators=20", "dataset=breast_cancer"]


def additive_regression(n_rows: int = 1500, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """y = a sum of one-feature functions + N(0, 0.3^2): boosted stumps (depth 1) fit it
    without the spurious interactions of deeper trees."""
    rng = np.random.RandomState(seed)
    X = rng.uniform(-1, 1, (n_rows, 8))
    y = (np.sin(3 * X[:, 0]) + 2 * X[:, 1] ** 2 + np.abs(X[:, 2]) + X[:, 3]
         + np.sin(2 * X[:, 4]) + rng.normal(0, 0.3, n_rows))  # fmt: skip
    return X, y


def depth_only_space() -> list[str]:
    """Overrides that leave max_depth (1, 4 or 8) the only searched GBT parameter."""
    others = ["learning_rate", "n_estimators", "min_child_weight", "reg_lambda",
              "colsample_bynode"]  # fmt: skip
    return [*(f"~search_space.gbt.{name}" for name in others),
            "search_space.gbt.max_depth={distribution:categorical,choices:[1,4,8]}"]


def tune_once(compose_job, X, y, *overrides, seed=0):
    cfg = compose_job("dataset=synthetic_regression", "method=gbt", *overrides,
                      f"tune.seed={seed}")  # fmt: skip
    trials = []
    tuner = Tuner(cfg, X.shape, lambda split_index, metric, records: trials.extend(records))
    result = tuner.tune(FittedSplit(0, X[:1000], y[:1000], X[1000:], y[1000:]))
    return result, trials


def test_the_same_seed_gives_the_same_search_and_the_engines_the_same_trials(compose_job):
    X, y = additive_regression(1200)
    tune = ["tune=tpe", "tune.n_trials=8", "method.n_estimators=30"]
    first, first_trials = tune_once(compose_job, X, y, *tune)
    again, again_trials = tune_once(compose_job, X, y, *tune)
    assert first.best_params == again.best_params
    assert [t.params for t in first_trials] == [t.params for t in again_trials]
    assert [t.inner_score for t in first_trials] == [t.inner_score for t in again_trials]
    other, _ = tune_once(compose_job, X, y, *tune, seed=1)
    assert other.best_params != first.best_params
    # a fair comparison: every engine is offered the same configurations (random sampler)
    _, inhouse = tune_once(compose_job, X, y, *tune[1:], "tune=random")
    _, xgboost = tune_once(compose_job, X, y, *tune[1:], "tune=random", "engine=xgboost")
    assert [t.params for t in inhouse] == [t.params for t in xgboost]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_tuner_finds_stumps_on_an_additive_target(compose_job, seed):
    X, y = additive_regression()
    result, trials = tune_once(compose_job, X, y, "tune=tpe", "tune.n_trials=12",
                               "method.n_estimators=300", "method.learning_rate=0.3",
                               *depth_only_space(), seed=seed)  # fmt: skip
    assert result.best_params == {"max_depth": 1}
    by_depth = {t.params["max_depth"]: t.inner_score for t in trials}
    assert by_depth[1] < by_depth[4] < by_depth[8]


def test_a_tuned_job_beats_a_badly_configured_untuned_one(compose_job, runs_of):
    bad = [*SMALL_GBT, "method.n_estimators=5", "method.learning_rate=0.001",
           "method.max_depth=1"]  # fmt: skip
    untuned = compose_job(*bad)
    tuned = compose_job(*bad, "tune=random", "tune.n_trials=10")
    assert run_key(untuned) != run_key(tuned)
    assert run_job(untuned) == "ok" and run_job(tuned) == "ok"
    runs = runs_of(tuned)
    [default_run] = [r for r in runs if r.data.tags.get("run_key") == run_key(untuned)]
    [tuned_run] = [r for r in runs if r.data.tags.get("run_key") == run_key(tuned)]
    assert tuned_run.data.metrics["test_error"] < default_run.data.metrics["test_error"] - 0.1
    assert tuned_run.data.metrics["tune_trials"] == 10
    assert tuned_run.data.metrics["tune_failed_trials"] == 0
    best = {k: v for k, v in tuned_run.data.params.items() if k.startswith("best.")}
    assert set(best) == {f"best.{name}" for name in ("max_depth", "learning_rate", "n_estimators",
                                                     "min_child_weight", "reg_lambda",
                                                     "colsample_bynode")}
    trials = [r for r in runs if r.data.tags.get("status") == "trial"]
    assert len(trials) == 10
    assert {r.data.tags["mlflow.parentRunId"] for r in trials} == {tuned_run.info.run_id}
    assert all({"inner_logloss", "tiebreak_inner_error", "test_logloss"} <= set(r.data.metrics)
               for r in trials)  # classification tunes on log-loss, error breaks its ties
    [default_trial] = [r for r in trials if r.data.tags.get("default") == "true"]
    assert default_trial.data.tags["trial"] == "0"
    assert default_trial.data.params["n_estimators"] == "5"  # the untuned job's, out of range
    inner_best = min(r.data.metrics["inner_logloss"] for r in trials)
    assert tuned_run.data.metrics["tune_best_inner_logloss"] == pytest.approx(inner_best)
    client = MlflowClient(tuned.mlflow.tracking_uri)
    path = client.download_artifacts(tuned_run.info.run_id, BEST_PARAMS_ARTIFACT)
    with open(path) as file:
        [chosen] = json.load(file)
    assert {f"best.{k}": str(v) for k, v in chosen.items()} == best
    assert run_job(tuned) == "resumed"


@pytest.mark.parametrize("space, reason", [
    (["~search_space.gbt.min_child_weight",
      "+search_space.gbt.gamma={distribution:float,low:1.0e-8,high:7.0,log:true,choices:null}"],
     "sklearn has no gamma"),
    ([], "sklearn ignores min_child_weight on binary tasks"),  # it maps it for squared loss only
])  # fmt: skip
def test_an_engine_that_cannot_map_a_searched_parameter_skips_the_job(compose_job, runs_of,
                                                                      space, reason):
    cfg = compose_job(*SMALL_GBT, "engine=sklearn", "tune=random", "tune.n_trials=2", *space)
    assert run_job(cfg) == "skipped"
    [logged] = runs_of(cfg)
    assert logged.data.tags["skip_reason"].startswith(reason)


@pytest.mark.slow
def test_a_tuned_sweep_reports_default_vs_tuned_best_so_far_and_tunability(cli, cli_runs,
                                                                           tmp_path):
    from reports.build import build_report

    result = cli("-m", "dataset=breast_cancer", "method=gbt", "method.n_estimators=20",
                 "engine=inhouse,xgboost", "tune=none,random", "tune.n_trials=4", "seed=0,1",
                 "tune.tunability=true", "mlflow.experiment_name=tuned_small")
    assert result.returncode == 0, result.stderr
    runs = cli_runs("tuned_small")
    assert len([r for r in runs if r.data.tags["status"] == "trial"]) == 2 * 2 * 4
    paths = build_report(f"sqlite:///{tmp_path / 'mlflow.db'}", "tuned_small", tmp_path / "out")
    tables = (tmp_path / "out" / "tables.md").read_text()
    assert "## test_error: default vs tuned" in tables
    assert "breast_cancer: gbt / xgboost (random)" in tables
    assert "gbt+random / inhouse" in tables  # the tuned column of the metric table
    assert tmp_path / "out" / "figures" / "best_so_far_test_logloss.png" in paths
    assert tmp_path / "out" / "figures" / "best_so_far_time_test_logloss.png" in paths
    assert "## tuning cost" in tables and "gbt / xgboost (random)" in tables
    assert "## test_error: tunability per hyper-parameter" in tables
    assert "gbt / xgboost (random): max_depth" in tables
    results = pd.read_csv(tmp_path / "out" / "results.csv")
    assert "trial" not in set(results["status"])
    verdicts = pd.read_csv(tmp_path / "out" / "verdicts.csv")
    assert set(verdicts["metric"]) == {"test_error", "test_logloss"}  # logloss: the tuned one
    assert "## test_logloss\n" in tables and "## failures and reruns" in tables


def test_a_trial_the_engine_cannot_run_on_this_data_is_infeasible_not_the_job(compose_job,
                                                                              runs_of):
    """LightGBM's rf mode draws at least 2 features a node: max_features=0.1 of diabetes' 10
    features cannot run there, sqrt (3 features) can."""
    cfg = compose_job("dataset=diabetes", "method=random_forest", "engine=lightgbm",
                      "method.n_estimators=10", "tune=random", "tune.n_trials=8",
                      "~search_space.random_forest.max_depth",
                      "search_space.random_forest.max_features.choices=[0.1,sqrt]")
    assert run_job(cfg) == "ok"
    trials = [run for run in runs_of(cfg) if run.data.tags.get("status") == "trial"]
    infeasible = [run for run in trials if "skip_reason" in run.data.tags]
    assert {run.data.params["max_features"] for run in infeasible} == {"0.1"}
    assert infeasible[0].data.tags["skip_reason"].startswith("lightgbm draws at least 2")
    assert all("inner_rmse" in run.data.metrics for run in trials if run not in infeasible)
    assert len(infeasible) > 0 and len(trials) == 8 + len(infeasible)  # resampled
    [job] = [run for run in runs_of(cfg) if run.data.tags.get("status") == "ok"]
    assert job.data.metrics["tune_trials"] == 8
    assert job.data.metrics["tune_infeasible_trials"] == len(infeasible)
    assert job.data.params["best.max_features"] == "sqrt"


def test_tunability_credits_the_parameter_that_matters(compose_job):
    """Probst et al.'s tunability on an additive target with deep trees as the defaults: tuning
    max_depth alone (stumps win) recovers most of the gain, tuning reg_lambda alone little."""
    X, y = additive_regression()
    space = [*depth_only_space(),
             "+search_space.gbt.reg_lambda={distribution:float,low:1.0,high:1.5,log:false,"
             "choices:null}"]  # fmt: skip
    result, trials = tune_once(compose_job, X, y, "tune=tpe", "tune.n_trials=8",
                               "tune.tunability=true", "method.n_estimators=300",
                               "method.learning_rate=0.3", "method.max_depth=8", *space)
    scores = result.scores
    assert len(trials) == 8  # the joint study's trials; the one-parameter studies are not trials
    split = FittedSplit(0, X[:1000], y[:1000], X[1000:], y[1000:])
    cfg = compose_job("dataset=synthetic_regression", "method=gbt", "method.n_estimators=300",
                      "method.learning_rate=0.3", "method.max_depth=8")
    default_model = search.fit_inner(search.build(cfg, X.shape).estimator, split.X_train,
                                     split.y_train)  # fmt: skip
    assert scores["default_test_rmse"] == pytest.approx(
        search.outer_test_score(default_model, cfg.dataset.task, "rmse", split))
    depth_gain = scores["default_test_rmse"] - scores["tunability_max_depth_test_rmse"]
    lambda_gain = scores["default_test_rmse"] - scores["tunability_reg_lambda_test_rmse"]
    assert depth_gain > 0.05 * scores["default_test_rmse"]
    assert abs(lambda_gain) < depth_gain / 5


@pytest.mark.parametrize("low, high", [(1e-4, 1e-3), (1e-4, 0.3)])  # the default out of, in range
def test_trial_0_is_the_default_and_the_chosen_one_is_never_worse(compose_job, low, high):
    """Every learning rate of the space but the default's 0.3 underfits 20 rounds: the tuner
    keeps the default, whether it lies outside the space (run beside the study) or inside
    (enqueued)."""
    X, y = additive_regression(400)
    space = (f"search_space.gbt.learning_rate={{distribution:float,low:{low},high:{high},"
             "log:true,choices:null}")  # fmt: skip
    others = [f"~search_space.gbt.{name}" for name in
              ("max_depth", "n_estimators", "min_child_weight", "reg_lambda", "colsample_bynode")]
    cfg = compose_job("dataset=synthetic_regression", "method=gbt", "method.n_estimators=20",
                      "method.max_depth=2", "tune=tpe", "tune.n_trials=4", space, *others)
    trials = []
    tuner = Tuner(cfg, X.shape, lambda split_index, metric, records: trials.extend(records))
    result = tuner.tune(FittedSplit(0, X[:300], y[:300], X[300:], y[300:]))
    assert [t.number for t in trials] == [0, 1, 2, 3]
    assert trials[0].default and trials[0].params == {"learning_rate": 0.3}
    assert all(low <= t.params["learning_rate"] <= high for t in trials[1:])
    assert result.best_params == {"learning_rate": 0.3}
    assert result.scores["tune_best_inner_rmse"] == trials[0].inner_score
    assert min(t.inner_score for t in trials[1:]) > trials[0].inner_score


def record(number: int, inner: float, tiebreak: float, **outcome) -> search.TrialRecord:
    return search.TrialRecord(number, {"n": number}, inner, tiebreak, 0.0, 0.0, 0.0, **outcome)


def test_ties_are_broken_by_the_other_metric_then_the_earlier_trial():
    assert tune_metric(None, Task.binary) == "logloss" and tiebreak_metric("logloss") == "error"
    assert tune_metric(None, Task.regression) == "rmse" and tiebreak_metric("rmse") == "mae"
    trials = [record(0, 0.30, 0.10), record(1, 0.20, 0.09), record(2, 0.20, 0.08),
              record(3, 0.20, 0.08), record(4, np.nan, np.nan, error="ValueError: no"),
              record(5, np.nan, np.nan, infeasible="cannot")]  # fmt: skip
    assert search.best_trial(trials).number == 2  # 0.20 tied: error 0.08 < 0.09, then trial 2
    assert search.best_trial([record(0, 0.2, np.nan), record(1, 0.2, 0.5)]).number == 1
    with pytest.raises(search.TrialsFailed, match="trial 4 failed with ValueError: no"):
        search.best_trial(trials[4:])


REFUSED_SPACE = "search_space.gbt.min_child_weight={distribution:categorical,choices:[-1,-2]}"


def test_a_value_the_estimator_refuses_is_a_failed_trial_counted_not_the_job(compose_job,
                                                                            runs_of):
    """min_child_weight must be >= 0: every sampled trial fails, the default (1.0) runs."""
    cfg = compose_job("dataset=breast_cancer", "method=gbt", "method.n_estimators=10",
                      "tune=random", "tune.n_trials=3", REFUSED_SPACE,
                      *(f"~search_space.gbt.{name}" for name in ("max_depth", "learning_rate",
                        "n_estimators", "reg_lambda", "colsample_bynode")))  # fmt: skip
    assert run_job(cfg) == "ok"
    runs = runs_of(cfg)
    [job] = [run for run in runs if run.data.tags.get("status") == "ok"]
    assert job.data.metrics["tune_trials"] == 1 and job.data.metrics["tune_failed_trials"] == 2
    failed = [run for run in runs if "error" in run.data.tags and "trial" in run.data.tags]
    assert len(failed) == 2 and all(run.info.status == "FAILED" for run in failed)
    assert {run.data.tags["status"] for run in failed} == {"failed"}
    assert all("min_child_weight" in run.data.tags["error"] for run in failed)
    assert job.data.params["best.min_child_weight"] == "1.0"
    X, y = additive_regression(200)
    with pytest.raises(search.TrialsFailed, match="no trial ran"):  # the default refused too
        tune_once(compose_job, X, y, "tune=random", "tune.n_trials=2", "method.n_estimators=5",
                  "method.min_child_weight=-1", REFUSED_SPACE)


@pytest.mark.parametrize("overrides, error", [
    (["tune.name=cmaes"], "unknown tune.name 'cmaes'; choose one of: none, random, tpe"),
    ([REFUSED_SPACE.replace("-2", "1")],
     "search_space.gbt.min_child_weight: inhouse's estimator refuses the choice -1 (ValueError: "
     "min_child_weight must be >= 0, got -1"),
])  # fmt: skip
def test_an_unknown_sampler_or_a_refused_choice_stops_the_command_in_one_line(
        compose_job, capsys, overrides, error):  # fmt: skip
    cfg = compose_job(*SMALL_GBT, "tune=tpe", *overrides)
    with pytest.raises(SystemExit) as stopped:
        exit_if_invalid(cfg)
    assert stopped.value.code == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"error: {error}")


@pytest.mark.slow
@pytest.mark.parametrize("engine, stopped_trials", [("inhouse", 2), ("sklearn", 1),
                                                    ("xgboost", 1), ("lightgbm", 1)])
def test_every_engine_stops_a_trial_at_its_time_limit(compose_job, runs_of, engine,
                                                      stopped_trials):
    """Trials 1 (and 2) ask for 10^6 rounds (minutes on any engine): each stopped at
    tune.trial_seconds, failed and counted (in-house: the worker killed, a new one warmed on the
    default configuration in between); the default (trial 0, 20 rounds) runs and is chosen.
    The limit, 6 s, leaves the default's fit room on a loaded machine (at 3 s, scikit-learn's
    20 rounds were once stopped while the test suite's two workers shared 2 noisy cores)."""
    cfg = compose_job(*SMALL_GBT, f"engine={engine}", "tune=random",
                      f"tune.n_trials={1 + stopped_trials}",
                      "tune.trial_seconds=6", *depth_only_space()[:-1],
                      "search_space.gbt.max_depth={distribution:categorical,choices:[3]}",
                      "+search_space.gbt.n_estimators={distribution:categorical,"
                      "choices:[1000000]}")  # fmt: skip
    assert run_job(cfg) == "ok"
    [job] = [r for r in runs_of(cfg) if r.data.tags.get("status") == "ok"]
    metrics = job.data.metrics
    assert (metrics["tune_trials"], metrics["tune_failed_trials"]) == (1, stopped_trials)
    assert metrics["tune_timed_out_trials"] == stopped_trials
    assert metrics["tune_seconds"] < 60
    assert job.data.params["best.n_estimators"] == "20"
    stopped = [r for r in runs_of(cfg) if r.data.tags.get("trial") in ("1", "2")]
    assert len(stopped) == stopped_trials and {r.data.tags["status"] for r in stopped} == {
        "failed"}
    assert all("stopped at tune.trial_seconds=6" in r.data.tags["error"] for r in stopped)


def _trial_openmp_threads(cfg, metrics, number, params, split, inner):
    """run_trial in a trial worker, reporting the OpenMP threads its fits ran under."""
    from threadpoolctl import threadpool_info

    seen = []
    original = search.fit_inner

    def recording_fit(estimator, X, y):
        seen.extend(module["num_threads"] for module in threadpool_info()
                    if module["user_api"] == "openmp")
        return original(estimator, X, y)

    search.fit_inner = recording_fit
    try:
        search.run_trial(cfg, metrics, number, params, split, inner)
    finally:
        search.fit_inner = original
    return seen


@pytest.mark.skipif(os.cpu_count() < 2, reason="one core: every OpenMP limit is 1")
def test_a_trial_worker_fits_on_the_jobs_openmp_threads(compose_job):
    """HistGradientBoosting takes no n_jobs: the job limits its OpenMP threads to engine.n_jobs,
    and a trial run in a worker process (tune.trial_seconds) keeps that limit, which the
    job's process does not pass on (two spinning threads on a busy machine once took a
    20-round trial past 6 s)."""
    from experiments.tuning.trial_limit import TrialWorker

    cfg = compose_job(*SMALL_GBT, "engine=sklearn", "engine.n_jobs=1")
    X = np.random.default_rng(0).normal(size=(80, 3))
    y = (X[:, 0] > 0).astype(int)
    split = FittedSplit(0, X[:60], y[:60], X[60:], y[60:])
    worker = TrialWorker(120)
    try:
        seen = worker.run(lambda: None, _trial_openmp_threads, cfg,
                          ("logloss", "error"), 0, {}, split,
                          [(np.arange(40), np.arange(40, 60))])
    finally:
        worker.close()
    assert seen and set(seen) == {1}


def test_six_datasets_find_a_deliberately_bad_default_across_datasets(compose_job, tmp_path):
    """A study over 6 generated datasets (make_classification, seeds 0-5, as CSV files), GBT
    in-house at a deliberately bad default (5 stumps at learning rate 0.001: the base rate) and
    tuned by 4 random trials: tuned is better on all 6, the across-dataset Wilcoxon
    p = 2/2^6 < 0.05."""
    from sklearn.datasets import make_classification

    from reports.runs import load_runs, load_split_values
    from reports.tables import ok_runs, summarize
    from reports.tuning import across_datasets, default_vs_tuned

    bad = ["method=gbt", "method.n_estimators=5", "method.learning_rate=0.001",
           "method.max_depth=1"]  # fmt: skip
    for index in range(6):
        X, y = make_classification(300, 8, n_informative=5, random_state=index)
        path = tmp_path / f"generated{index}.csv"
        pd.DataFrame(X).add_prefix("x").assign(y=y).to_csv(path, index=False)
        data = ["dataset=csv", f"dataset.path={path}", "dataset.target=y", "dataset.task=binary"]
        for tune in (["tune=none"], ["tune=random", "tune.n_trials=4"]):
            cfg = compose_job(*bad, *data, *tune)
            assert run_job(cfg) == "ok"
    client = MlflowClient(cfg.mlflow.tracking_uri)
    experiment = client.get_experiment_by_name(cfg.mlflow.experiment_name).experiment_id
    runs = ok_runs(load_runs(client, experiment))
    table = summarize(load_split_values(client, runs, "test_error"), "test_error")
    [summary] = across_datasets(default_vs_tuned(table)).itertuples()
    assert (summary.datasets, summary.tuned_better) == (6, 6)
    assert summary.p == pytest.approx(2 / 2**6)
