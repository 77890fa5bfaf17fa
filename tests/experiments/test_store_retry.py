"""A busy store delays a job's writes but loses none of them."""

import logging

import pytest
from mlflow import MlflowClient
from mlflow.exceptions import MlflowException
from mlflow.protos.databricks_pb2 import INVALID_PARAMETER_VALUE, TEMPORARILY_UNAVAILABLE

from experiments.run import run_job
from experiments.store_retry import ATTEMPTS, retry_when_busy


def failing_twice(error_code: int):
    """A store call that raises MlflowException(error_code) twice, then answers."""
    calls = []

    def call() -> int:
        calls.append(None)
        if len(calls) <= 2:
            raise MlflowException("database is locked", error_code=error_code)
        return len(calls)

    return call


def test_a_busy_store_is_retried_until_it_answers():
    assert retry_when_busy(failing_twice(TEMPORARILY_UNAVAILABLE))() == 3


def test_other_store_errors_are_not_retried():
    with pytest.raises(MlflowException, match="database is locked"):
        retry_when_busy(failing_twice(INVALID_PARAMETER_VALUE))()


def test_a_store_busy_for_good_fails_after_the_last_attempt():
    calls = []

    def always_busy():
        calls.append(None)
        raise MlflowException("database is locked", error_code=TEMPORARILY_UNAVAILABLE)

    quick = retry_when_busy(always_busy).retry_with(wait=lambda state: 0)
    with pytest.raises(MlflowException):
        quick()
    assert len(calls) == ATTEMPTS


def test_a_job_whose_metric_batches_meet_a_busy_store_logs_them_all(
    compose_job, runs_of, monkeypatch, caplog
):
    real_log_batch = MlflowClient.log_batch
    busy = failing_twice(TEMPORARILY_UNAVAILABLE)

    def log_batch_when_free(client, *args, **kwargs):
        busy()  # raises the first two times
        return real_log_batch(client, *args, **kwargs)

    monkeypatch.setattr(MlflowClient, "log_batch", log_batch_when_free)
    cfg = compose_job("dataset=diabetes", "method=gbt", "method.n_estimators=4")
    with caplog.at_level(logging.WARNING, logger="experiments.store_retry"):
        assert run_job(cfg) == "ok"
    assert sum("Retrying" in record.getMessage() for record in caplog.records) == 2
    [logged] = runs_of(cfg)
    assert {"test_rmse", "fit_seconds", "peak_rss_mb", "n_trees"} <= logged.data.metrics.keys()
    history = MlflowClient(cfg.mlflow.tracking_uri).get_metric_history(
        logged.info.run_id, "curve_test_rmse"
    )
    assert [point.step for point in history] == [1, 4]
