"""Retry a tracking-store call that failed because the store was busy, with exponential
backoff, instead of losing the run or metric it was writing.

MLflow's sqlite store already waits up to 20 s on a locked database (busy_timeout), then
raises MlflowException(TEMPORARILY_UNAVAILABLE) and rolls the transaction back: every call
wrapped here is one transaction, so a retry never doubles data. (Against a tracking server,
MLflow's HTTP client retries by itself: MLFLOW_HTTP_REQUEST_MAX_RETRIES.)
"""

import logging

from mlflow.exceptions import MlflowException
from mlflow.protos.databricks_pb2 import TEMPORARILY_UNAVAILABLE, ErrorCode
from tenacity import (
    before_sleep_log,
    retry,
    retry_if_exception,
    stop_after_attempt,
    wait_random_exponential,
)

log = logging.getLogger(__name__)
BUSY = ErrorCode.Name(TEMPORARILY_UNAVAILABLE)
ATTEMPTS = 8  # waits of up to 0.5, 1, 2, ... 30 s: about 2 minutes before giving up


def store_busy(error: BaseException) -> bool:
    """Whether the store refused the call for now (locked sqlite, unavailable server)."""
    return isinstance(error, MlflowException) and error.error_code == BUSY


retry_when_busy = retry(
    retry=retry_if_exception(store_busy),
    wait=wait_random_exponential(multiplier=0.5, max=30),
    stop=stop_after_attempt(ATTEMPTS),
    before_sleep=before_sleep_log(log, logging.WARNING),
    reraise=True,
)
