"""Retry a tracking-store call that failed because the store was busy, with exponential
backoff, instead of losing the run or metric it was writing.

MLflow's sqlite store already waits up to 20 s on a locked database (busy_timeout), then
raises MlflowException(TEMPORARILY_UNAVAILABLE) and rolls the transaction back: every call
wrapped here is one transaction, so a retry never doubles data. (Against a tracking server,
MLflow's HTTP client retries by itself: MLFLOW_HTTP_REQUEST_MAX_RETRIES.)

A tracking server on PostgreSQL has one more transient refusal: two workers logging the same
dataset input at once both find it missing and both insert it; the second insert breaks the
unique key and the server answers BAD_REQUEST. Called again, the call finds the row and
succeeds, so such a lost insert race is retried too, a few times only.
"""

import logging

from mlflow.exceptions import MlflowException
from mlflow.protos.databricks_pb2 import TEMPORARILY_UNAVAILABLE, ErrorCode
from tenacity import (
    RetryCallState,
    before_sleep_log,
    retry,
    retry_if_exception,
    wait_random_exponential,
)

log = logging.getLogger(__name__)
BUSY = ErrorCode.Name(TEMPORARILY_UNAVAILABLE)
ATTEMPTS = 8  # waits of up to 0.5, 1, 2, ... 30 s: about 2 minutes before giving up
RACE_ATTEMPTS = 3  # a lost insert race succeeds on the next call; a third loss is a real error
UNIQUE_KEY_BROKEN = (
    "duplicate key value violates unique constraint",  # PostgreSQL
    "UNIQUE constraint failed",  # sqlite
    "Duplicate entry",  # MySQL
)


def store_busy(error: BaseException) -> bool:
    """Whether the store refused the call for now (locked sqlite, unavailable server)."""
    return isinstance(error, MlflowException) and error.error_code == BUSY


def lost_insert_race(error: BaseException) -> bool:
    """Whether the store refused an insert because a concurrent call inserted the same row."""
    return isinstance(error, MlflowException) and any(
        marker in error.message for marker in UNIQUE_KEY_BROKEN
    )


def transient(error: BaseException) -> bool:
    """Whether calling again can succeed: a busy store or a lost insert race."""
    return store_busy(error) or lost_insert_race(error)


def out_of_attempts(state: RetryCallState) -> bool:
    """Give up after ATTEMPTS calls on a busy store, RACE_ATTEMPTS on insert races."""
    error = state.outcome.exception()
    limit = RACE_ATTEMPTS if lost_insert_race(error) else ATTEMPTS
    return state.attempt_number >= limit


retry_when_busy = retry(
    retry=retry_if_exception(transient),
    wait=wait_random_exponential(multiplier=0.5, max=30),
    stop=out_of_attempts,
    before_sleep=before_sleep_log(log, logging.WARNING),
    reraise=True,
)
