"""The same seed gives bit-identical predictions whatever the number of threads: parallel
kernels split work over fixed row chunks, nodes, features or trees, and add chunk sums in chunk
order."""

import numpy as np
import pytest
from sklearn.datasets import load_wine, make_classification, make_friedman1

import ensembles

CLASSIFIERS = ["RandomForestClassifier", "ExtraTreesClassifier", "BaggingClassifier",
               "AdaBoostClassifier", "LogitBoostClassifier", "L2BoostClassifier",
               "GradientBoostingClassifier"]
REGRESSORS = ["RandomForestRegressor", "ExtraTreesRegressor", "BaggingRegressor",
              "L2BoostRegressor", "GradientBoostingRegressor"]
SUBSAMPLING = {"GradientBoostingClassifier": dict(subsample=0.7, colsample_bynode=0.7),
               "GradientBoostingRegressor": dict(subsample=0.7, colsample_bytree=0.7),
               "L2BoostRegressor": dict(subsample=0.7), "L2BoostClassifier": dict(subsample=0.7)}


@pytest.mark.parametrize("name", CLASSIFIERS + REGRESSORS)
def test_predictions_do_not_depend_on_n_jobs(name):
    if name in CLASSIFIERS:
        X, y = load_wine(return_X_y=True)
        predict = "predict_proba"
    else:
        X, y = make_friedman1(n_samples=500, random_state=0)
        predict = "predict"
    params = dict(n_estimators=20, random_state=7, **SUBSAMPLING.get(name, {}))
    estimator_class = getattr(ensembles, name)
    one = estimator_class(n_jobs=1, **params).fit(X, y)
    two = estimator_class(n_jobs=2, **params).fit(X, y)
    assert np.array_equal(getattr(one, predict)(X), getattr(two, predict)(X))
    again = estimator_class(n_jobs=2, **params).fit(X, y)
    assert np.array_equal(getattr(two, predict)(X), getattr(again, predict)(X))


@pytest.mark.parametrize("shape", [dict(max_depth=6), dict(grow_policy="lossguide", max_leaves=31,
                                                         max_depth=0)])
def test_gradient_trees_on_large_nodes_do_not_depend_on_n_jobs(shape):
    """150k rows: the root and the first levels are cut in row chunks (histogram.CHUNK_ROWS)
    whose sums are added in chunk order, and their partitions are chunk-parallel."""
    X, y = make_classification(n_samples=150_000, n_features=8, random_state=0)
    X[::13, 2] = np.nan
    params = dict(n_estimators=4, learning_rate=0.3, subsample=0.9, colsample_bynode=0.8,
                  random_state=3, **shape)
    one = ensembles.GradientBoostingClassifier(n_jobs=1, **params).fit(X, y)
    two = ensembles.GradientBoostingClassifier(n_jobs=2, **params).fit(X, y)
    assert np.array_equal(one.predict_proba(X), two.predict_proba(X))
    assert one.trees_[0][0].n_samples[0] > 4 * 32_768  # several chunks at the root
