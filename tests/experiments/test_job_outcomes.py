"""One job in process: what an ok, a skipped and a failed run log, run_key, and resume."""

import platform

import numpy as np
import pytest
from mlflow import MlflowClient
from sklearn.datasets import load_wine
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import RepeatedStratifiedKFold, cross_val_score

from ensembles import warm
from experiments import run
from experiments.environment import lock_tag
from experiments.run import run_job
from experiments.store.tracking import run_key

SMALL = ["engine=sklearn", "method.n_estimators=10"]
JOB_TAGS = set("dataset method loss engine seed task status git_commit run_key".split())


def test_an_ok_kfold_run_logs_the_mean_and_each_split(compose_job, runs_of):
    cfg = compose_job(*SMALL, "dataset=wine", "seed=3", "eval.kind=kfold", "eval.n_splits=3")
    assert run_job(cfg) == "ok"
    [logged] = runs_of(cfg)
    tags, metrics, params = logged.data.tags, logged.data.metrics, logged.data.params
    assert JOB_TAGS <= tags.keys()
    expected = {"dataset": "wine", "engine": "sklearn", "task": "multiclass", "seed": "3"}
    assert {key: tags[key] for key in expected} == expected
    assert (tags["status"], tags["run_key"]) == ("ok", run_key(cfg))
    assert params["method.n_estimators"] == "10"
    assert params["eval.kind"] == "kfold"
    assert {"test_error", "test_logloss", "fit_seconds", "predict_seconds"} <= metrics.keys()
    assert 0 < metrics["peak_rss_mb"] < 10_000

    # independent: scikit-learn's own cross-validation on the same folds and seed
    X, y = load_wine(return_X_y=True)
    folds = RepeatedStratifiedKFold(n_splits=3, n_repeats=1, random_state=3)
    forest = RandomForestClassifier(n_estimators=10, random_state=3, n_jobs=1)
    accuracy = cross_val_score(forest, X, y, cv=folds)
    client = MlflowClient(cfg.mlflow.tracking_uri)
    history = client.get_metric_history(logged.info.run_id, "split_test_error")
    assert [metric.step for metric in history] == [0, 1, 2]
    np.testing.assert_allclose([metric.value for metric in history], 1 - accuracy)
    assert metrics["test_error"] == pytest.approx(np.mean(1 - accuracy))
    artifacts = {artifact.path for artifact in client.list_artifacts(logged.info.run_id)}
    assert artifacts == {"config.yaml"}


def test_a_regression_holdout_logs_rmse_mae_r2_and_oob(compose_job, runs_of):
    cfg = compose_job("engine=sklearn", "dataset=diabetes", "method.oob_score=true")
    assert run_job(cfg) == "ok"
    [logged] = runs_of(cfg)
    assert {"test_rmse", "test_mae", "test_r2", "oob_score"} <= logged.data.metrics.keys()
    assert "test_error" not in logged.data.metrics
    history = MlflowClient(cfg.mlflow.tracking_uri).get_metric_history(
        logged.info.run_id, "split_test_rmse"
    )
    assert [metric.step for metric in history] == [0]


def test_an_invalid_method_loss_pair_is_a_skipped_run_with_a_reason(compose_job, runs_of):
    cfg = compose_job(*SMALL, "dataset=diabetes", "loss=logistic")
    assert run_job(cfg) == "skipped"
    [logged] = runs_of(cfg)
    assert logged.data.tags["status"] == "skipped"
    assert logged.data.tags["skip_reason"] == (
        "random_forest does not take loss 'logistic' on regression tasks; valid: auto, squared"
    )
    assert "test_rmse" not in logged.data.metrics


def test_a_job_on_bad_data_is_a_failed_run_with_the_error(compose_job, runs_of, monkeypatch):
    def load_with_inf(cfg):
        X, y = load_wine(return_X_y=True)
        X[5, 2] = np.inf
        return X, y

    monkeypatch.setattr(run, "load_dataset", load_with_inf)
    cfg = compose_job(*SMALL, "dataset=wine")
    assert run_job(cfg) == "failed"
    [logged] = runs_of(cfg)
    assert logged.data.tags["status"] == "failed"
    assert logged.data.tags["error"].startswith("ValueError: Input X contains infinity")
    client = MlflowClient(cfg.mlflow.tracking_uri)
    artifacts = {artifact.path for artifact in client.list_artifacts(logged.info.run_id)}
    assert artifacts == {"config.yaml", "traceback.txt"}
    traceback_text = client.download_artifacts(logged.info.run_id, "traceback.txt")
    with open(traceback_text) as file:
        assert "Traceback" in file.read()


def test_a_single_class_dataset_fails_with_a_clear_error(compose_job, runs_of, monkeypatch):
    monkeypatch.setattr(run, "load_dataset", lambda cfg: (np.ones((40, 3)), np.zeros(40, int)))
    cfg = compose_job(*SMALL, "dataset=breast_cancer")
    assert run_job(cfg) == "failed"
    [logged] = runs_of(cfg)
    assert logged.data.tags["error"] == (
        "ValueError: The labels array needs to contain at least two labels, got [0]."
    )


def test_an_error_tag_is_one_line_of_at_most_500_chars(compose_job, runs_of, monkeypatch):
    def raise_long_error(cfg, shape):
        raise RuntimeError("x" * 600 + "\nsecond line")

    monkeypatch.setattr(run, "build", raise_long_error)
    cfg = compose_job(*SMALL, "dataset=wine")
    assert run_job(cfg) == "failed"
    [logged] = runs_of(cfg)
    assert logged.data.tags["error"] == ("RuntimeError: " + "x" * 600)[:500]


def test_run_key_ignores_tracking_settings_and_override_order(compose_job):
    key = run_key(compose_job("engine=sklearn", "seed=1"))
    assert run_key(compose_job("seed=1", "engine=sklearn")) == key
    assert run_key(compose_job("engine=sklearn", "seed=1", "resume=false")) == key
    assert run_key(compose_job("engine=sklearn", "seed=1", "mlflow.experiment_name=other")) == key
    assert run_key(compose_job("engine=sklearn", "seed=2")) != key
    assert run_key(compose_job("engine=sklearn", "seed=1", "method.max_depth=3")) != key
    assert len(key) == 64 and int(key, 16) >= 0


def test_resume_skips_a_job_whose_run_key_is_ok(compose_job, runs_of):
    cfg = compose_job(*SMALL, "dataset=wine")
    assert run_job(cfg) == "ok"
    assert run_job(cfg) == "resumed"
    assert len(runs_of(cfg)) == 1
    assert run_job(compose_job(*SMALL, "dataset=wine", "resume=false")) == "ok"
    assert len(runs_of(cfg)) == 2


def test_resume_treats_a_skipped_job_as_done(compose_job, runs_of):
    cfg = compose_job(*SMALL, "dataset=diabetes", "loss=logistic")
    assert run_job(cfg) == "skipped"
    assert run_job(cfg) == "resumed"
    assert [run.data.tags["status"] for run in runs_of(cfg)] == ["skipped"]


def test_resume_reruns_a_failed_job(compose_job, runs_of, monkeypatch):
    cfg = compose_job(*SMALL, "dataset=wine")
    with monkeypatch.context() as patch:
        patch.setattr(run, "load_dataset", lambda cfg: (np.full((10, 2), np.nan), np.arange(10)))
        assert run_job(cfg) == "failed"
    assert run_job(cfg) == "ok"
    assert sorted(r.data.tags["status"] for r in runs_of(cfg)) == ["failed", "ok"]


def test_a_run_records_its_environment(compose_job, runs_of):
    import sklearn
    import xgboost

    from experiments.run import run_job

    cfg = compose_job("dataset=wine", "engine=sklearn", "method.n_estimators=5")
    assert run_job(cfg) == "ok"
    [run] = runs_of(cfg)
    assert run.data.tags["version.scikit-learn"] == sklearn.__version__
    assert run.data.tags["version.xgboost"] == xgboost.__version__
    assert run.data.tags["version.python"] == platform.python_version()
    assert run.data.tags["env.lock"] == lock_tag()
    assert {"env.os", "env.cpu", "version.numba"} <= run.data.tags.keys()


def test_the_engine_is_compiled_once_per_process_before_the_first_inhouse_fit(compose_job,
                                                                               monkeypatch):
    """A job warms its own estimator's kernels (warm.estimator_fits), once per process."""
    calls = []
    monkeypatch.setattr(warm, "compile_fits", lambda names: calls.append(names))
    warm.compile_once.cache_clear()
    try:
        assert run_job(compose_job(*SMALL, "dataset=wine")) == "ok"
        assert calls == []  # a reference engine's job needs no numba kernel
        first_fit = []
        monkeypatch.setattr(run, "evaluate", lambda *args: first_fit.append(len(calls)) or
                            ([{"test_error": 0.0}], {}, {}))  # fmt: skip
        for seed in (0, 1):
            run_job(compose_job("method.n_estimators=3", "dataset=wine", f"seed={seed}"))
        forest_fits = warm.estimator_fits("RandomForestClassifier")  # the default method's
        assert calls == [forest_fits] and first_fit == [1, 1]
        run_job(compose_job("method=gbt", "method.n_estimators=3", "dataset=wine"))
        gbt_fits = warm.estimator_fits("GradientBoostingClassifier")
        assert calls == [forest_fits, gbt_fits]
        assert len(gbt_fits) == 5  # one per loss, and the large-table ones
    finally:
        warm.compile_once.cache_clear()


def test_ctrl_c_inside_a_numba_kernel_is_an_interrupt_not_a_failure(compose_job, runs_of,
                                                                     monkeypatch):
    """SIGINT while a numba kernel runs can surface as SystemError("... returned a result with
    an exception set") caused by the KeyboardInterrupt: the job is interrupted (status failed,
    error KeyboardInterrupt, MLflow KILLED) and the interrupt stops the sweep."""
    def interrupted_load(cfg):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as interrupt:
            raise SystemError("CPUDispatcher(<function grow_cart_tree>) returned a result "
                              "with an exception set") from interrupt

    monkeypatch.setattr(run, "load_dataset", interrupted_load)
    cfg = compose_job(*SMALL, "dataset=wine")
    with pytest.raises(KeyboardInterrupt):
        run_job(cfg)
    [logged] = runs_of(cfg)
    assert logged.data.tags["status"] == "failed"
    assert logged.data.tags["error"] == "KeyboardInterrupt"
    assert logged.info.status == "KILLED"


def _system_error_during_interrupt(as_cause: bool) -> SystemError:
    """A kernel's SystemError raised while a KeyboardInterrupt was handled: the interrupt as its
    cause, or only as its context."""
    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as interrupt:
            error = SystemError("returned a result with an exception set")
            if as_cause:
                raise error from interrupt
            raise error  # noqa: B904 (the context is what the test needs)
    except SystemError as error:
        return error


def test_an_interrupt_behind_a_kernels_error_is_found_as_cause_or_context():
    for as_cause in (True, False):
        error = _system_error_during_interrupt(as_cause)
        assert (error.__cause__ is None) != as_cause
        assert isinstance(run.user_interrupt(error), KeyboardInterrupt)
    assert run.user_interrupt(ValueError("bad input")) is None
