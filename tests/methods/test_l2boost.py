"""L2Boost against scikit-learn's least-squares GradientBoostingRegressor (Friedman's LS_Boost:
mean start, trees fit to residuals, leaf = mean residual). Features are rounded to 101 values
so that binning is exact. Predictions are compared on the training rows: both engines part
them alike, but place a threshold differently between the values present (scikit-learn midway
between the node's neighbouring values, ours at the bin edge, as HistGradientBoosting), which
routes unseen in-between values differently."""

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_wine, make_friedman1
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.model_selection import train_test_split
from sklearn.utils.estimator_checks import parametrize_with_checks

from ensembles import L2BoostClassifier, L2BoostRegressor


@parametrize_with_checks([L2BoostRegressor(n_estimators=5), L2BoostClassifier(n_estimators=5)])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


@pytest.mark.parametrize("max_depth, learning_rate, min_samples_leaf",
                         [(1, 0.1, 1), (3, 0.1, 1), (5, 0.3, 5)])
def test_regressor_matches_sklearn_least_squares_boosting(max_depth, learning_rate,
                                                          min_samples_leaf):
    X, y = make_friedman1(n_samples=1500, random_state=0)
    X = np.round(X, 2)
    params = dict(n_estimators=100, learning_rate=learning_rate, max_depth=max_depth,
                  min_samples_leaf=min_samples_leaf)
    ours = L2BoostRegressor(**params).fit(X, y)
    theirs = GradientBoostingRegressor(loss="squared_error", random_state=0, **params).fit(X, y)
    assert np.abs(ours.predict(X) - theirs.predict(X)).max() < 1e-6
    for our_stage, their_stage in zip(ours.staged_predict(X), theirs.staged_predict(X),
                                      strict=True):
        assert np.abs(our_stage - their_stage).max() < 1e-6


def test_binary_classifier_regresses_plus_minus_one():
    """On -1/+1 codes the classifier's score is the regressor's prediction."""
    X, y = load_breast_cancer(return_X_y=True)
    classifier = L2BoostClassifier(n_estimators=50).fit(X, y)
    regressor = L2BoostRegressor(n_estimators=50).fit(X, 2.0 * y - 1.0)
    assert np.allclose(classifier.decision_function(X), regressor.predict(X))
    assert np.array_equal(classifier.predict(X), (regressor.predict(X) > 0).astype(int))


def test_multiclass_classifier_is_one_vs_rest_and_accurate():
    X, y = load_wine(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0, stratify=y)
    model = L2BoostClassifier(n_estimators=100).fit(X_train, y_train)
    indicator = L2BoostRegressor(n_estimators=100).fit(X_train, (y_train == 2).astype(float))
    assert np.allclose(model.decision_function(X_test)[:, 2], indicator.predict(X_test))
    assert model.score(X_test, y_test) >= 0.9
    assert np.allclose(model.predict_proba(X_test).sum(axis=1), 1.0)
