"""A busy store delays a job's writes but loses none of them."""

import logging

import pytest
from mlflow import MlflowClient
from mlflow.exceptions import MlflowException
from mlflow.protos.databricks_pb2 import (
    BAD_REQUEST,
    INVALID_PARAMETER_VALUE,
    TEMPORARILY_UNAVAILABLE,
)

from experiments.run import run_job
from experiments.store.retry import ATTEMPTS, RACE_ATTEMPTS, retry_when_busy


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
    with caplog.at_level(logging.WARNING, logger="experiments.store.retry"):
        assert run_job(cfg) == "ok"
    assert sum("Retrying" in record.getMessage() for record in caplog.records) == 2
    [logged] = runs_of(cfg)
    assert {"test_rmse", "fit_seconds", "peak_rss_mb", "n_trees"} <= logged.data.metrics.keys()
    history = MlflowClient(cfg.mlflow.tracking_uri).get_metric_history(
        logged.info.run_id, "curve_test_rmse"
    )
    assert [point.step for point in history] == [1, 4]


def test_an_insert_race_lost_to_a_concurrent_worker_is_retried():
    calls = []

    def log_input_beside_another_worker():
        calls.append(None)
        if len(calls) == 1:  # the server's answer when two workers insert one dataset at once
            raise MlflowException(
                '(psycopg.errors.UniqueViolation) duplicate key value violates unique '
                'constraint "dataset_pk"', error_code=BAD_REQUEST,
            )
        return "logged"

    assert retry_when_busy(log_input_beside_another_worker)() == "logged"
    assert len(calls) == 2


def test_a_unique_key_broken_on_every_call_fails_after_a_few_attempts():
    calls = []

    def always_duplicate():
        calls.append(None)
        raise MlflowException("UNIQUE constraint failed: datasets.dataset_uuid",
                              error_code=BAD_REQUEST)

    quick = retry_when_busy(always_duplicate).retry_with(wait=lambda state: 0)
    with pytest.raises(MlflowException, match="UNIQUE constraint failed"):
        quick()
    assert len(calls) == RACE_ATTEMPTS
