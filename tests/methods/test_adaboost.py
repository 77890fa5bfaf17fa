"""SAMME against scikit-learn's AdaBoostClassifier over DecisionTreeClassifier stumps.

The data are integer-valued with continuous noise in the label only, so that no two candidate
splits tie (scikit-learn breaks ties by a random feature order) and both engines see the same
thresholds (at most 255 distinct values per feature)."""

import numpy as np
import pytest
from sklearn.datasets import load_wine
from sklearn.ensemble import AdaBoostClassifier as SklearnAdaBoost
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.estimator_checks import parametrize_with_checks

from ensembles import AdaBoostClassifier


@parametrize_with_checks([AdaBoostClassifier(n_estimators=5)])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def _integer_data(n_samples=1000, seed=0, cuts=(30,)):
    """Classes cut from a noisy linear score at `cuts` (two classes by default)."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 50, size=(n_samples, 6)).astype(float)
    score = X[:, 0] + 0.7 * X[:, 1] - 0.5 * X[:, 2] + rng.normal(0, 10, n_samples)
    return X, np.digitize(score, cuts)


def _sklearn_samme(n_estimators, max_depth=1, max_leaf_nodes=None):
    return SklearnAdaBoost(DecisionTreeClassifier(max_depth=max_depth,
                                                  max_leaf_nodes=max_leaf_nodes),
                           n_estimators=n_estimators, random_state=0)


@pytest.mark.parametrize("n_estimators", [1, 50, 200])
def test_stumps_match_sklearn_samme(n_estimators):
    X, y = _integer_data()
    X_test, _ = _integer_data(seed=1)
    ours = AdaBoostClassifier(n_estimators=n_estimators).fit(X, y)
    theirs = _sklearn_samme(n_estimators).fit(X, y)
    assert len(ours.estimators_) == len(theirs.estimators_)
    assert np.allclose(ours.estimator_weights_, theirs.estimator_weights_, rtol=0, atol=1e-8)
    assert np.allclose(ours.estimator_errors_, theirs.estimator_errors_, rtol=0, atol=1e-8)
    assert np.array_equal(ours.predict(X_test), theirs.predict(X_test))
    assert np.allclose(ours.predict_proba(X_test), theirs.predict_proba(X_test), atol=1e-8)


def test_multiclass_depth_two_matches_sklearn_samme():
    X, y = load_wine(return_X_y=True)
    X = np.round(X)
    ours = AdaBoostClassifier(n_estimators=30, max_depth=2).fit(X, y)
    theirs = _sklearn_samme(30, max_depth=2).fit(X, y)
    assert np.allclose(ours.estimator_weights_, theirs.estimator_weights_, atol=1e-8)
    assert np.allclose(ours.decision_function(X), theirs.decision_function(X), atol=1e-8)
    assert np.allclose(ours.predict_proba(X), theirs.predict_proba(X), atol=1e-8)


@pytest.mark.parametrize("cuts", [(30,), (20, 40)])
@pytest.mark.parametrize("max_leaf_nodes", [3, 8])
def test_best_first_trees_match_sklearn_samme(max_leaf_nodes, cuts):
    """max_leaf_nodes as scikit-learn's: J leaves grown best first (the leaf of largest
    impurity decrease split next), no depth limit with max_depth=None; two and three classes.
    Compared on the training rows: in a node of a few rows two features can part them alike,
    and which one a tree keeps (the first in its random feature order, in both engines) sends
    other points elsewhere."""
    X, y = _integer_data(cuts=cuts)
    ours = AdaBoostClassifier(n_estimators=40, max_depth=None,
                              max_leaf_nodes=max_leaf_nodes).fit(X, y)
    theirs = _sklearn_samme(40, max_depth=None, max_leaf_nodes=max_leaf_nodes).fit(X, y)
    n_rounds = len(theirs.estimators_)  # scikit-learn pads its weights with 0 after a stop
    assert [tree.value.shape[0] for tree in ours.estimators_] == [
        tree.get_n_leaves() for tree in theirs.estimators_]
    assert np.allclose(ours.estimator_weights_, theirs.estimator_weights_[:n_rounds], atol=1e-8)
    assert np.allclose(ours.predict_proba(X), theirs.predict_proba(X), atol=1e-8)


def test_staged_predictions_match_sklearn_round_by_round():
    X, y = _integer_data()
    ours = AdaBoostClassifier(n_estimators=40).fit(X, y)
    theirs = _sklearn_samme(40).fit(X, y)
    for our_stage, their_stage in zip(ours.staged_predict_proba(X),
                                      theirs.staged_predict_proba(X), strict=True):
        assert np.allclose(our_stage, their_stage, atol=1e-8)


def test_a_perfect_first_tree_stops_boosting():
    X = np.arange(20.0)[:, None]
    y = (X[:, 0] > 9).astype(int)
    model = AdaBoostClassifier(n_estimators=10).fit(X, y)
    assert len(model.estimators_) == 1 and model.estimator_errors_[0] == 0.0
    assert np.array_equal(model.predict(X), y)


@pytest.mark.parametrize(("seed", "learning_rate"), [(12, 1.9), (13, 1.9), (16, 1.0), (18, 1.0)])
def test_weights_spanning_many_orders_of_magnitude_grow_valid_trees(seed, learning_rate):
    """Depth-4 SAMME on breast cancer drives some weights ~1e-16 below others: a sibling's
    weight found by subtraction then rounded to 0, and its leaf divided by it
    (ZeroDivisionError). Every leaf must stay a class distribution, and the boosted fit as
    good on its training rows as scikit-learn's."""
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    model = AdaBoostClassifier(n_estimators=60, learning_rate=learning_rate, max_depth=4,
                               random_state=seed).fit(X, y)
    for tree in model.estimators_:
        leaves = tree.value
        assert np.all(leaves >= 0) and np.allclose(leaves.sum(axis=1), 1.0)
    reference = _sklearn_samme(60, max_depth=4).set_params(learning_rate=learning_rate).fit(X, y)
    assert model.score(X, y) >= reference.score(X, y) - 0.01
