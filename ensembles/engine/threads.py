"""How many threads the engine's parallel kernels use: the estimator's n_jobs, with joblib's
meaning (None: 1, unless inside joblib's parallel_config; -1: every core), capped at numba's
pool size (NUMBA_NUM_THREADS), and on a mid-sized table at the cores no other process is
using. Results never depend on it."""

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numba
from joblib import effective_n_jobs

SERIAL_TABLE = 1 << 17  # rows x features below which a fit runs on one thread
SHARED_TABLE = 1 << 20  # ... below which it runs on the idle cores only (idle_cores)
LOAD_CHECK_ROUNDS = 16  # rounds of boosting between two looks at the machine's load


@contextmanager
def engine_threads(n_jobs: int | None,
                   table_size: int | None = None) -> Iterator[Callable[[], int]]:
    """Run the enclosed fit or predict on table_threads(n_jobs, table_size) numba threads
    (this thread's setting only); the previous count is restored on exit. Yields
    `follow_load`, which sets the count again from the machine's load now and returns it
    (a boosting fit calls it every LOAD_CHECK_ROUNDS rounds)."""
    previous = numba.get_num_threads()

    def follow_load() -> int:
        n_threads = table_threads(n_jobs, table_size)
        numba.set_num_threads(n_threads)
        return n_threads

    follow_load()
    try:
        yield follow_load
    finally:
        numba.set_num_threads(previous)


def table_threads(n_jobs: int | None, table_size: int | None) -> int:
    """effective_n_jobs(n_jobs) threads (at most numba's pool), except on a table of
    table_size (rows x features) values below SHARED_TABLE: there one thread below
    SERIAL_TABLE, and else no more than idle_cores().

    Each level of a tree opens a few parallel regions and each region waits for every
    thread, so a small table's fit gains little from a second thread when the machine is
    quiet (10,000 x 20: 1.15-1.2x; 2,000 x 10: none) and loses much when another process
    holds a core: a descheduled thread holds each region for a time slice (GBT on 8,000 x 20
    took 7-9 s on two threads against 1.0-1.5 s on one; 10,000 x 20 beside one busy process,
    2-2.5x one thread's time; docs/small_tables.md)."""
    n_threads = max(1, min(effective_n_jobs(n_jobs), numba.config.NUMBA_NUM_THREADS))
    if n_threads == 1 or table_size is None or table_size >= SHARED_TABLE:
        return n_threads
    if table_size < SERIAL_TABLE:
        return 1
    return max(1, min(n_threads, idle_cores()))


def idle_cores(proc: str = "/proc") -> int:
    """The cores this process may run on (its CPU affinity) minus the threads of other
    processes that are runnable now: the machine's runnable threads (/proc/loadavg, fourth
    field) less this process's own in state R (/proc/self/task/*/stat), the least of two
    counts taken around it (a thread of ours that wakes between the reads is then counted as
    another's, never the reverse). 0 where `proc` cannot tell (not Linux)."""
    try:
        own = _own_running_threads(proc)
        with open(f"{proc}/loadavg", "rb") as loadavg:
            running = int(loadavg.read().split()[3].split(b"/")[0])
        own = min(own, _own_running_threads(proc))
    except (OSError, IndexError, ValueError):
        return 0
    return len(os.sched_getaffinity(0)) - max(0, running - own)


def _own_running_threads(proc: str) -> int:
    """This process's threads in state R (running or runnable) now."""
    running = 0
    for task in os.listdir(f"{proc}/self/task"):
        try:
            with open(f"{proc}/self/task/{task}/stat", "rb") as stat:
                fields = stat.read()
        except OSError:  # the thread has ended
            continue
        running += fields[fields.rindex(b")") + 2:][:1] == b"R"
    return running
