"""Compile every numba kernel of the engine once, or load it from numba's cache: a tiny fit
(without and with sample weights) and predict of each estimator on each task it takes, with
each GBT loss. A worker that runs it before its first job (a new cluster node, a Ray worker's
setup hook) keeps compilation out of the jobs' fit_seconds. `python -m ensembles.warm`, run
by the install step of the Makefile, compiles on two processes and prints how long it took.

Two processes share one list of fits, the gradient-tree methods first, and take fits from
its two ends: this process from the front, a helper from the back, until they meet. Each fit
compiles the kernels it is the first to need into numba's cache, or loads them from there.
LLVM compiles on one core per process, and the gradient-tree fits take longer (36 against 23
s alone, measured): the helper, done with the CART-tree fits, goes on with the last gradient
fits, loading the gradient grower that this process has compiled by then."""

import os
import time
from functools import cache
from multiprocessing import get_context

import numpy as np

import ensembles
from ensembles.methods.gbt import CLASSIFICATION_LOSSES, REGRESSION_LOSSES

N_ROWS, N_FEATURES = 200, 4
# a table above the engine's serial cut-offs (histogram.SERIAL_WORK rows x features,
# tree.PARTITION_ROW_BLOCK and losses.ROW_BLOCK rows), so that the kernels' parallel paths,
# which small work never enters, are compiled too
LARGE_ROWS, LARGE_FEATURES = 20_000, 8
GRADIENT_TREE_METHODS = ("GradientBoosting", "L2Boost", "LogitBoost")  # the rest grow CART trees


@cache
def warm_tasks() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Binary, 3-class and regression data of N_ROWS x N_FEATURES (positive targets, for
    poisson), and binary and 3-class data of LARGE_ROWS x LARGE_FEATURES; made once per
    process (compile_from_one_end asks for them once per fit)."""
    tasks = {}
    for size, (n_rows, n_features) in {"": (N_ROWS, N_FEATURES),
                                       " large": (LARGE_ROWS, LARGE_FEATURES)}.items():
        X = np.random.RandomState(0).normal(size=(n_rows, n_features))
        score = X[:, 0] + X[:, 1] ** 2
        tasks |= {f"binary{size}": (X, (score > np.median(score)).astype(int)),
                  f"multiclass{size}": (X, np.digitize(score, np.quantile(score, [1 / 3, 2 / 3]))),
                  f"regression{size}": (X, np.exp(0.3 * score))}  # fmt: skip
    return tasks


def warm_fits() -> list[tuple[str, object, str]]:
    """(name, unfitted estimator, task) of every fit compile_all makes."""
    fits = []
    for name in ensembles.__all__:
        model = getattr(ensembles, name)
        tasks = ["regression"] if name.endswith("Regressor") else ["binary", "multiclass"]
        if name == "GradientBoostingRegressor":
            fits += [(f"{name}(loss={loss})", model(loss=loss, n_estimators=3), "regression")
                     for loss in REGRESSION_LOSSES]  # fmt: skip
        elif name == "GradientBoostingClassifier":
            fits += [(f"{name}(loss={loss})", model(loss=loss, n_estimators=3),
                      "multiclass" if loss == "softmax" else "binary")
                     for loss in CLASSIFICATION_LOSSES]  # fmt: skip
            fits += [(f"{name}(loss={loss}, {LARGE_ROWS} rows)", model(loss=loss, n_estimators=1),
                      f"{task} large") for loss, task in (("logistic", "binary"),
                                                          ("softmax", "multiclass"))]  # fmt: skip
        else:
            fits += [(name, model(n_estimators=3), task) for task in tasks]
    return fits


def compile_fits(names: list[str] | None = None) -> None:
    """Fit (without and with sample weights) and predict the warm_fits() estimators of these
    names (None: every one)."""
    tasks = warm_tasks()
    for name, estimator, task in warm_fits():
        if names is None or name in names:
            X, y = tasks[task]
            estimator.fit(X, y).predict(X)
            estimator.fit(X, y, sample_weight=np.linspace(0.5, 1.5, len(y)))


def compile_from_one_end(names: list[str], bounds, from_front: bool) -> None:
    """compile_fits of names[i], one fit at a time, taking i from the front (bounds[0]) or the
    back (bounds[1]) of the part of `names` no process has taken yet, until it is empty.
    bounds: a shared, synchronized int array of two, the first and last untaken index."""
    while True:
        with bounds.get_lock():
            if bounds[0] > bounds[1]:
                return
            end = 0 if from_front else 1
            index = bounds[end]
            bounds[end] += 1 if from_front else -1
        compile_fits([names[index]])


def compile_all(processes: int = 1) -> float:
    """compile_fits of every estimator into this process; return the seconds it took. With 2
    processes, this one and a helper first share the fits (module docstring), then this one
    loads every kernel from the cache."""
    start = time.perf_counter()
    if processes > 1:
        # each name once: compile_fits of a classifier's name fits both of its tasks
        names = sorted(dict.fromkeys(name for name, _, _ in warm_fits()),
                       key=lambda name: not name.startswith(GRADIENT_TREE_METHODS))
        context = get_context("spawn")
        bounds = context.Array("i", [0, len(names) - 1])
        helper = context.Process(target=compile_from_one_end, args=(names, bounds, False))
        helper.start()
        compile_from_one_end(names, bounds, from_front=True)
        helper.join()
        if helper.exitcode != 0:
            raise RuntimeError(f"the warm-up's helper process failed (exit code "
                               f"{helper.exitcode}); its error is printed above")
    compile_fits()
    return time.perf_counter() - start


def estimator_fits(estimator: str) -> list[str]:
    """The names of the warm_fits() of one estimator class, e.g. "RandomForestClassifier"
    (a GradientBoosting class: one fit per loss)."""
    return list(dict.fromkeys(name for name, model, _ in warm_fits()
                              if type(model).__name__ == estimator))


@cache
def compile_once(estimator: str | None = None) -> float:
    """compile_fits of one estimator class's fits (estimator_fits), or of every estimator's
    (None), once per process, e.g. before a job's first timed fit; return the seconds it
    took. Without it, a first fit counts up to a minute of compilation (an empty cache) or a
    second of loading. A job warms its own estimator only: with an empty cache, a random
    forest's fits compiled 34 s, AdaBoost's 43, GBT's 58, every estimator's 82 (one process,
    measured: docs/small_tables.md); a later job of another estimator compiles what it adds."""
    start = time.perf_counter()
    compile_fits(None if estimator is None else estimator_fits(estimator))
    return time.perf_counter() - start


if __name__ == "__main__":
    seconds = compile_all(processes=min(2, os.cpu_count() or 1))
    print(f"compiled or loaded the engine's kernels ({len(warm_fits())} fits) in {seconds:.1f} s")
