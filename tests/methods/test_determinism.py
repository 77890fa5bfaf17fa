"""The same seed gives bit-identical predictions whatever the number of threads: parallel
kernels split work over rows, features or trees and never reduce across threads."""

import numpy as np
import pytest
from sklearn.datasets import load_wine, make_friedman1

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
