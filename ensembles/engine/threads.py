"""How many threads the engine's parallel kernels use: the estimator's n_jobs, with joblib's
meaning (None: 1, unless inside joblib's parallel_config; -1: every core), capped at numba's
pool size (NUMBA_NUM_THREADS). Results never depend on it."""

from collections.abc import Iterator
from contextlib import contextmanager

import numba
from joblib import effective_n_jobs

SERIAL_TABLE = 1 << 20  # rows x features of a fit that runs on one thread: see engine_threads


@contextmanager
def engine_threads(n_jobs: int | None, table_size: int | None = None) -> Iterator[int]:
    """Run the enclosed fit or predict on effective_n_jobs(n_jobs) numba threads (this
    thread's setting only), or on one when given a table_size (rows x features) below
    SERIAL_TABLE; the previous count is restored on exit. Each level of a tree opens a few
    parallel regions, and each region waits for every thread: on a machine shared with other
    work a descheduled thread held each one for a time slice, and GBT on 8,000 x 20 took
    7-9 s on two threads against 1.0-1.5 s on one (measured, docs/small_tables.md): a
    thread's share of a small node's work is microseconds, the wait milliseconds."""
    previous = numba.get_num_threads()
    n_threads = max(1, min(effective_n_jobs(n_jobs), numba.config.NUMBA_NUM_THREADS))
    if table_size is not None and table_size < SERIAL_TABLE:
        n_threads = 1
    numba.set_num_threads(n_threads)
    try:
        yield n_threads
    finally:
        numba.set_num_threads(previous)
