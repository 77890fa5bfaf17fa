"""A hard time limit per trial (tune.trial_seconds) that every engine obeys: the trial runs in a
worker process (joblib's loky executor), which is killed when the trial overruns, whatever
the engine is doing (numba, C++ or Cython code cannot be interrupted from Python). The worker
is warmed before the first trial and after each kill by fitting the job's default configuration
on a few rows, so that no trial pays the worker's imports or the engine's compilation."""

from collections.abc import Callable
from concurrent.futures import TimeoutError as FutureTimeout

from joblib.externals.loky import ProcessPoolExecutor

WARM_UP_ROWS = 200


class TrialTimedOut(RuntimeError):
    """A trial ran longer than tune.trial_seconds and was stopped."""


class TrialWorker:
    """Runs `function(*args)` in one warm worker process of its own (not loky's reusable
    executor, which a joblib sweep may share), stopped after `seconds`; close() ends it."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.executor: ProcessPoolExecutor | None = None

    def run(self, warm_up: Callable[[], object], function: Callable, *args):
        """function(*args) in the worker (warmed by `warm_up()` first if it is new; a warm-up
        that raises is ignored: the trial will say why); TrialTimedOut after `seconds`, the
        worker killed."""
        if self.executor is None:
            self.executor = ProcessPoolExecutor(max_workers=1)
            try:
                self.executor.submit(warm_up).result()
            except Exception:  # noqa: BLE001 - the trial itself reports the error
                pass
        future = self.executor.submit(function, *args)
        try:
            return future.result(timeout=self.seconds)
        except FutureTimeout:
            self.close()
            raise TrialTimedOut(f"stopped at tune.trial_seconds={self.seconds:g}") from None

    def close(self) -> None:
        """Kill the worker (a trial it runs too); the next run starts a new one."""
        if self.executor is not None:
            self.executor.shutdown(wait=False, kill_workers=True)
            self.executor = None
