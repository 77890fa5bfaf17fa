"""Categorical choices of a search space that the job's estimator refuses, found before any run
by fitting it once per choice on a few generated rows of the job's task."""

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
from omegaconf import DictConfig, OmegaConf
from sklearn.base import clone

from experiments.configs import Task, method_key
from experiments.engines import SkippedJob, build
from experiments.tuning.space import distributions

PROBE_ROWS = 30
PROBE_FEATURES = 4


def probe_data(task: Task) -> tuple[np.ndarray, np.ndarray]:
    """PROBE_ROWS x PROBE_FEATURES standard normal rows and a target that the first feature
    decides (a stump fits it better than chance, so that no method refuses the data): its
    value plus noise, its sign (2 classes), or its tertile (3 classes)."""
    rng = np.random.RandomState(0)
    X = rng.normal(size=(PROBE_ROWS, PROBE_FEATURES))
    if task is Task.regression:
        return X, X[:, 0] + rng.normal(0, 0.1, PROBE_ROWS)
    n_classes = 2 if task is Task.binary else 3
    edges = np.quantile(X[:, 0], np.linspace(0, 1, n_classes + 1)[1:-1])
    return X, np.digitize(X[:, 0], edges)


def refused_choice(cfg: DictConfig) -> str | None:
    """For a tuned job: the first categorical choice of its search space that its engine's
    estimator refuses (its fit raises where the method config's values fit), named with the
    estimator's error; None when every choice fits, or when the engine cannot build the job or
    fit the probe rows at all (the job reports that itself). A sweep's jobs that share method,
    loss, engine, task and space are probed once."""
    key = OmegaConf.to_yaml({"method": cfg.method, "loss": cfg.loss, "engine": cfg.engine,
                             "task": cfg.dataset.task.value,
                             "space": cfg.search_space[method_key(cfg.method)]})  # fmt: skip
    if key not in _REFUSED:
        _REFUSED[key] = _first_refused(cfg)
    return _REFUSED[key]


_REFUSED: dict[str, str | None] = {}


def _first_refused(cfg: DictConfig) -> str | None:
    """refused_choice, uncached. Each fit is one round or tree (n_estimators=1, unless it is
    the parameter probed): whether a value is refused does not depend on the count."""
    X, y = probe_data(cfg.dataset.task)
    base = {"n_estimators": 1} if "n_estimators" in cfg.method else {}
    if _fit_error(cfg, base, X, y) is not None:
        return None
    method = method_key(cfg.method)
    for name, distribution in distributions(cfg.search_space[method]).items():
        for choice in getattr(distribution, "choices", ()):
            error = _fit_error(cfg, {**base, name: choice}, X, y)
            if error is not None:
                return (f"search_space.{method}.{name}: {cfg.engine.name}'s estimator refuses "
                        f"the choice {choice!r} ({error})")
    return None


def _fit_error(cfg: DictConfig, params: dict, X: np.ndarray, y: np.ndarray) -> str | None:
    """The first line of the error raised by fitting the job's estimator with `params` on
    (X, y), its categorical columns read as numbers; None when it fits or when the engine
    cannot run these values (SkippedJob: an infeasible trial, not a refused value)."""
    job = cfg.copy()
    if "categorical" in job.dataset:
        job.dataset.categorical = "ordinal"
    try:
        for name, value in params.items():
            job.method[name] = value
        with native_output_silenced():
            clone(build(job, X.shape).estimator).fit(X, y)
    except SkippedJob:
        return None
    except Exception as error:
        line = (str(error).strip().splitlines() or [""])[0]
        return f"{type(error).__name__}: {line}"
    return None


@contextmanager
def native_output_silenced() -> Iterator[None]:
    """File descriptors 1 and 2 sent to /dev/null: a library's native code (LightGBM's
    `[Fatal]` line) prints a probe's refusal there, which the check's one line already names."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(fd) for fd in (1, 2)]
    with open(os.devnull, "w") as null:
        try:
            for fd in (1, 2):
                os.dup2(null.fileno(), fd)
            yield
        finally:
            for fd, copy in zip((1, 2), saved, strict=True):
                os.dup2(copy, fd)
                os.close(copy)
