"""The warm-up a new worker runs before its first job fits every estimator and every GBT loss,
so that no job's fit_seconds includes compiling a kernel."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from numba.core.registry import CPUDispatcher as Dispatcher

import ensembles
from ensembles import warm
from ensembles.methods.gbt import CLASSIFICATION_LOSSES, REGRESSION_LOSSES


def test_the_warm_up_fits_every_estimator_on_every_task_and_every_gbt_loss():
    fits = warm.warm_fits()
    names = {name.split("(")[0] for name, _, _ in fits}
    assert names == set(ensembles.__all__)
    losses = {estimator.loss for name, estimator, _ in fits if name.startswith("GradientBoosting")}
    assert losses == set(REGRESSION_LOSSES) | set(CLASSIFICATION_LOSSES)
    classifiers = {name for name, _, task in fits if task == "multiclass"}
    assert {"RandomForestClassifier", "AdaBoostClassifier", "LogitBoostClassifier"} <= classifiers
    assert warm.compile_all() > 0


def engine_signatures() -> dict[str, int]:
    """Per numba dispatcher of the engine and the losses, how many signatures it compiled."""
    counts = {}
    for name, module in list(sys.modules.items()):
        if name.startswith(("ensembles.engine", "ensembles.losses")):
            for attribute, value in vars(module).items():
                if isinstance(value, Dispatcher):
                    counts[f"{name}.{attribute}"] = len(value.signatures)
    return counts


def test_after_the_warm_up_a_first_fit_compiles_nothing():
    """Fits of every estimator with other options and another data shape than the warm-up's
    (n_jobs=2, sample weights, lossguide, subsampling, a larger table) add no signature to any
    kernel."""
    warm.compile_all()
    before = engine_signatures()
    rng = np.random.RandomState(1)
    X = rng.normal(size=(300, 7))
    y = (X[:, 0] > 0).astype(int)
    weights = rng.uniform(0.5, 2.0, len(y))
    for name in ensembles.__all__:
        target = X[:, 1] if name.endswith("Regressor") else y
        getattr(ensembles, name)(n_estimators=2, n_jobs=2).fit(X, target, sample_weight=weights)
    ensembles.GradientBoostingClassifier(n_estimators=2, grow_policy="lossguide", max_leaves=7,
                                         subsample=0.5, colsample_bynode=0.5).fit(X, y)
    # a table large enough for the parallel paths that small work never enters
    X_large = rng.normal(size=(25_000, 7))
    for classes in (2, 3):
        labels = np.digitize(X_large[:, 0], np.quantile(X_large[:, 0], [0.5] if classes == 2
                                                       else [1 / 3, 2 / 3]))
        ensembles.GradientBoostingClassifier(n_estimators=2, n_jobs=2).fit(X_large, labels)
    assert engine_signatures() == before


def test_two_processes_compile_both_families_and_this_one_loads_every_kernel():
    """compile_all(processes=2): a helper process takes fits from the back of the list (the
    CART-tree methods first); afterwards this process holds both growers' entries, as after
    a one-process warm-up. (The boosting loop calls grow_gradient_tree_fields: loaded from
    the cache, its callee grow_gradient_tree gets no signature of its own.)"""
    assert warm.compile_all(processes=2) > 0
    signatures = engine_signatures()
    assert signatures["ensembles.engine.cart_grower.grow_cart_tree"] >= 1
    assert signatures["ensembles.engine.gradient_grower.grow_gradient_tree_fields"] >= 1


SIGNATURES_AFTER_WARM_UP = """
import json, sys
from numba.core.registry import CPUDispatcher
from ensembles.warm import compile_fits
compile_fits()
print(json.dumps({f"{name}.{attribute}": [str(s) for s in value.signatures]
                  for name, module in list(sys.modules.items()) if name.startswith("ensembles")
                  for attribute, value in vars(module).items()
                  if isinstance(value, CPUDispatcher) and len(value.signatures) > 1}))
"""


def test_every_engine_kernel_is_compiled_for_one_signature(tmp_path):
    """numba compiles a kernel again for each int literal it is called with (a constant, or a
    counter that starts at a literal: type inference compiles the callee for the literal
    first) and each other array layout (node_arrays: a fifth of a cold start). After the
    warm-up in a fresh process with an empty numba cache, no kernel of the engine or the
    losses holds two signatures (the losses take unit and given weights alike:
    losses.kernel_weights) but sum_node_stats, which sums the CART trees' float64 and the
    gradient trees' float32 statistics. The cache must be empty: a kernel loaded from it
    brings its callees compiled, so a warm process never shows their extra signatures."""
    done = subprocess.run([sys.executable, "-c", SIGNATURES_AFTER_WARM_UP], capture_output=True,
                          text=True, check=True,
                          env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")})
    several = json.loads(done.stdout.strip().splitlines()[-1])
    assert {name.rsplit(".", 1)[1] for name in several} <= {"sum_node_stats"}, several
    assert all(len(signatures) == 2 for signatures in several.values()), several


ONE_ESTIMATOR_WARM_UP = """
import json, sys
import numpy as np
from numba.core.registry import CPUDispatcher
import ensembles
from ensembles import warm

def signatures():
    return {f"{name}.{attribute}": len(value.signatures)
            for name, module in list(sys.modules.items()) if name.startswith("ensembles")
            for attribute, value in vars(module).items() if isinstance(value, CPUDispatcher)}

name = sys.argv[1]
warm.compile_once(name)
before = signatures()
rng = np.random.RandomState(1)
X = rng.normal(size=(25_000, 7))
three_classes = np.digitize(X[:, 0], [-0.5, 0.5])
targets = [X[:, 1]] if name.endswith("Regressor") else [three_classes, three_classes > 0]
for target in targets:
    model = getattr(ensembles, name)(n_estimators=2, n_jobs=2)
    model.fit(X, target, sample_weight=rng.uniform(0.5, 2.0, len(X))).predict(X)
print(json.dumps({kernel: count for kernel, count in signatures().items()
                  if count != before.get(kernel, 0)}))
"""


@pytest.mark.parametrize("estimator", ["RandomForestClassifier", "AdaBoostClassifier",
                                       "GradientBoostingClassifier",
                                       "ExtraTreesRegressor"])  # fmt: skip
def test_a_job_warming_its_own_estimator_compiles_nothing_in_its_fit(estimator):
    """warm.compile_once(estimator), as a job runs it (experiments.run), loads every kernel
    that estimator's fits use, in a fresh process: a fit of two or three classes, sample
    weights, n_jobs=2 and 25,000 rows (above the kernels' serial cut-offs, as the warm-up's
    large fits) adds no kernel signature."""
    done = subprocess.run([sys.executable, "-c", ONE_ESTIMATOR_WARM_UP, estimator],
                          capture_output=True, text=True, check=True)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {}
