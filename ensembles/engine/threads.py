"""How many threads the engine's parallel kernels use: the estimator's n_jobs, with joblib's
meaning (None: 1, unless inside joblib's parallel_config; -1: every core), capped at numba's
pool size (NUMBA_NUM_THREADS). Results never depend on it."""

from collections.abc import Iterator
from contextlib import contextmanager

import numba
from joblib import effective_n_jobs


@contextmanager
def engine_threads(n_jobs: int | None) -> Iterator[int]:
    """Run the enclosed fit or predict on effective_n_jobs(n_jobs) numba threads (this
    thread's setting only); the previous count is restored on exit."""
    previous = numba.get_num_threads()
    n_threads = max(1, min(effective_n_jobs(n_jobs), numba.config.NUMBA_NUM_THREADS))
    numba.set_num_threads(n_threads)
    try:
        yield n_threads
    finally:
        numba.set_num_threads(previous)
