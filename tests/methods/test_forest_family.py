"""Bagging, random forests and extra trees against scikit-learn's, on the same splits."""

import numpy as np
import pytest
import sklearn.ensemble as reference
from sklearn.datasets import (
    load_breast_cancer,
    load_diabetes,
    load_digits,
    make_friedman1,
)
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

import ensembles

SEEDS = range(10)
N_TREES = 50
DATASETS = {
    "breast_cancer": lambda: load_breast_cancer(return_X_y=True),
    "digits": lambda: load_digits(return_X_y=True),
    "diabetes": lambda: load_diabetes(return_X_y=True),
    "friedman1": lambda: make_friedman1(n_samples=1000, noise=1.0, random_state=0),
}
REGRESSION = {"diabetes", "friedman1"}


def _reference(family: str, task: str, seed: int):
    if family == "Bagging":
        tree = DecisionTreeRegressor() if task == "Regressor" else DecisionTreeClassifier()
        return getattr(reference, f"Bagging{task}")(tree, n_estimators=N_TREES,
                                                    random_state=seed)
    return getattr(reference, f"{family}{task}")(n_estimators=N_TREES, random_state=seed)


def _score(model, X_test, y_test, task):
    prediction = model.predict(X_test)
    if task == "Regressor":
        return np.sqrt(np.mean((prediction - y_test) ** 2))
    return np.mean(prediction == y_test)


@pytest.mark.parametrize("family", ["Bagging", "RandomForest", "ExtraTrees"])
@pytest.mark.parametrize("dataset", list(DATASETS))
def test_mean_score_within_one_and_a_half_standard_errors_of_sklearn(family, dataset):
    """Accuracy (RMSE for regression) over 10 seeded splits; the standard error is that of the
    difference of the two means, sqrt(s_ours^2 / n + s_sklearn^2 / n)."""
    X, y = DATASETS[dataset]()
    task = "Regressor" if dataset in REGRESSION else "Classifier"
    ours, theirs = [], []
    for seed in SEEDS:
        X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=seed)
        model = getattr(ensembles, f"{family}{task}")(n_estimators=N_TREES, random_state=seed)
        ours.append(_score(model.fit(X_train, y_train), X_test, y_test, task))
        theirs.append(_score(_reference(family, task, seed).fit(X_train, y_train), X_test,
                             y_test, task))
    standard_error = np.sqrt((np.var(ours, ddof=1) + np.var(theirs, ddof=1)) / len(SEEDS))
    assert abs(np.mean(ours) - np.mean(theirs)) <= 1.5 * standard_error


def _quantized_breast_cancer():
    X, y = load_breast_cancer(return_X_y=True)
    levels = np.linspace(0, 1, 200)
    return np.column_stack([np.searchsorted(np.quantile(c, levels), c) for c in X.T]), y


@pytest.mark.parametrize("max_leaf_nodes", [2, 7, 20])
def test_best_first_growth_equals_sklearn_max_leaf_nodes(max_leaf_nodes):
    X, y = _quantized_breast_cancer()
    ours = ensembles.RandomForestClassifier(n_estimators=1, bootstrap=False, max_features=None,
                                            max_leaf_nodes=max_leaf_nodes).fit(X, y)
    theirs = DecisionTreeClassifier(max_leaf_nodes=max_leaf_nodes, random_state=0).fit(X, y)
    assert ours.estimators_[0].n_leaves == theirs.get_n_leaves() == max_leaf_nodes
    assert np.allclose(ours.predict_proba(X), theirs.predict_proba(X))


def test_extra_trees_thresholds_are_uniform_between_node_extremes():
    """A stump on one feature of values 0..100: the drawn threshold is uniform on [0, 100]."""
    X = np.arange(101.0)[:, None]
    y = (np.arange(101) % 2).astype(float)
    forest = ensembles.ExtraTreesRegressor(n_estimators=2000, max_depth=1, random_state=0)
    thresholds = np.array([tree.threshold[0] for tree in forest.fit(X, y).estimators_])
    assert np.mean(thresholds) == pytest.approx(50.0, abs=2.0)
    assert np.std(thresholds) == pytest.approx(100 / np.sqrt(12), rel=0.05)


def test_bagging_uses_every_feature_at_every_node():
    X, y = load_breast_cancer(return_X_y=True)
    bagging = ensembles.BaggingClassifier(n_estimators=1, bootstrap=False).fit(X, y)
    cart = ensembles.RandomForestClassifier(n_estimators=1, bootstrap=False, max_features=None,
                                            random_state=0).fit(X, y)
    assert np.array_equal(bagging.predict_proba(X), cart.predict_proba(X))


def _strong_weak_and_constant_features(n_constant: int = 8):
    """400 rows: feature 0 decides the class, feature 1 is noise, the other n_constant are
    constant."""
    rng = np.random.default_rng(0)
    strong, weak = rng.normal(size=400), rng.normal(size=400)
    X = np.column_stack([strong, weak, np.ones((400, n_constant))])
    return X, (strong > 0).astype(int)


@pytest.mark.parametrize("family", ["RandomForest", "ExtraTrees"])
def test_a_node_draws_max_features_features_constant_or_not_as_sklearn(family):
    """The seed's random subset of features per node, with scikit-learn's one exception: of
    10 features, 8 constant, a stump with max_features=2 scores the strong feature 0 when it
    is among the 2 drawn (P = 1 - C(9,2)/C(10,2) = 1/5), or when both drawn are constant and
    the draws that follow meet it before feature 1 (P = C(8,2)/C(10,2) / 2 = 14/45), so the
    root splits on it with P = 23/45 for a random forest (feature 0 beats feature 1 whenever
    both are scored) and with P between 22/45 and 23/45 for extra trees (both are drawn with
    P = 1/45). Counting only non-constant features towards max_features, as this engine did,
    scores both features at every node: feature 0 at nearly every root. scikit-learn's
    forests, the reference, split the same way."""
    X, y = _strong_weak_and_constant_features()
    n_trees = 2000
    roots = {}
    for name, module in (("ours", ensembles), ("sklearn", reference)):
        forest = getattr(module, f"{family}Classifier")(
            n_estimators=n_trees, max_depth=1, max_features=2, bootstrap=False,
            random_state=0).fit(X, y)
        roots[name] = np.array([
            tree.feature[0] if name == "ours" else tree.tree_.feature[0]
            for tree in forest.estimators_])
    low, high = (23 / 45, 23 / 45) if family == "RandomForest" else (22 / 45, 23 / 45)
    for name, root in roots.items():
        assert set(np.unique(root)) == {0, 1}, name
        share = np.mean(root == 0)
        margin = 4 * np.sqrt(0.25 / n_trees)  # 4 standard errors of a share near 1/2
        assert low - margin <= share <= high + margin, (name, share)
