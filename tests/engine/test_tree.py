import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, make_friedman1
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from ensembles import RandomForestClassifier, RandomForestRegressor
from ensembles.engine.tree import LEAF


def _single_tree(estimator_class, **params):
    return estimator_class(n_estimators=1, bootstrap=False, max_features=None, random_state=0,
                           **params)


def _walk(tree, x):
    node = 0
    while tree.feature[node] != LEAF:
        value = x[tree.feature[node]]
        go_left = tree.missing_left[node] if np.isnan(value) else value <= tree.threshold[node]
        node = tree.left[node] if go_left else tree.right[node]
    return tree.value[node]


def _quantize(X, n_levels):
    """Each feature as its quantile level: <= 255 distinct values, so binning is exact."""
    levels = np.linspace(0, 1, n_levels)
    return np.column_stack([np.searchsorted(np.quantile(c, levels), c) for c in X.T]).astype(float)


def test_depth_one_tree_finds_the_known_split():
    rng = np.random.default_rng(0)
    X = np.round(rng.uniform(size=(400, 3)), 2)  # <= 255 distinct values: binning is exact
    y = (X[:, 1] > 0.6).astype(int)
    tree = _single_tree(RandomForestClassifier, max_depth=1).fit(X, y).estimators_[0]
    assert tree.feature[0] == 1
    between = (X[y == 0, 1].max(), X[y == 1, 1].min())
    assert between[0] <= tree.threshold[0] < between[1]
    assert tree.n_leaves == 2
    assert np.allclose(tree.value[tree.left[0]], [1, 0])
    assert np.allclose(tree.value[tree.right[0]], [0, 1])


def test_prediction_equals_a_brute_force_walk_with_missing_values():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(600, 5))
    y = X[:, 0] + np.sin(3 * X[:, 1]) + 0.1 * rng.normal(size=600)
    X[rng.uniform(size=X.shape) < 0.1] = np.nan
    forest = RandomForestRegressor(n_estimators=3, max_depth=6, random_state=0).fit(X, y)
    X_test = rng.normal(size=(200, 5))
    X_test[rng.uniform(size=X_test.shape) < 0.1] = np.nan
    for tree in forest.estimators_:
        expected = np.array([_walk(tree, x) for x in X_test])
        assert np.array_equal(tree.predict(X_test), expected)


def test_tree_structure_equals_sklearn_cart_on_training_data():
    """A single unbootstrapped tree with all features is CART: same leaves, same fit."""
    X, y = load_breast_cancer(return_X_y=True)
    X = _quantize(X, 200)
    ours = _single_tree(RandomForestClassifier, max_depth=4).fit(X, y)
    reference = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y)
    assert ours.estimators_[0].n_leaves == reference.get_n_leaves()
    assert np.allclose(ours.predict_proba(X), reference.predict_proba(X))


@pytest.mark.parametrize("min_samples_leaf", [1, 5])
def test_regression_tree_equals_sklearn_cart_on_training_data(min_samples_leaf):
    X, y = make_friedman1(n_samples=500, random_state=0)
    X = np.round(X, 2)
    ours = _single_tree(RandomForestRegressor, max_depth=5,
                        min_samples_leaf=min_samples_leaf).fit(X, y)
    reference = DecisionTreeRegressor(max_depth=5, min_samples_leaf=min_samples_leaf,
                                      random_state=0).fit(X, y)
    assert ours.estimators_[0].n_leaves == reference.get_n_leaves()
    assert np.allclose(ours.predict(X), reference.predict(X))
