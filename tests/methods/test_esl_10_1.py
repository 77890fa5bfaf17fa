"""ESL section 10.1 (Hastie, Tibshirani and Friedman, 2nd ed., Figure 10.2): hastie_10_2 with
2000 training and 10000 test points, AdaBoost over stumps for 400 rounds, a single stump and a
tree of 244 nodes, over 5 data seeds, each engine on the same splits.

Published test errors: stump 45.8%, 244-node tree 24.7%, AdaBoost after 400 rounds 5.8%.
Measured here (mean of 5 seeds): stump 45.9%, tree about 24%, AdaBoost after 400 rounds about
11%, for scikit-learn's SAMME as for ours. The book's boosting figure is not reproduced by two
independent implementations on this protocol, so the test compares with scikit-learn and only
states the book's numbers.
"""

import numpy as np
import pytest
from sklearn.datasets import make_hastie_10_2
from sklearn.ensemble import AdaBoostClassifier as SklearnAdaBoost
from sklearn.tree import DecisionTreeClassifier

from ensembles import AdaBoostClassifier, RandomForestClassifier

SEEDS = range(5)
CHECKPOINTS = [1, 100, 200, 400]
BOOK = {"stump": 0.458, "tree_244_nodes": 0.247, "adaboost_400": 0.058}


def _splits():
    for seed in SEEDS:
        X, y = make_hastie_10_2(n_samples=12000, random_state=seed)
        yield seed, X[:2000], y[:2000], X[2000:], y[2000:]


def _within_sampling_error(ours, theirs):
    """|mean difference| <= 2 standard errors of the difference of the 5-seed means."""
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    standard_error = np.sqrt((ours.var(ddof=1) + theirs.var(ddof=1)) / len(ours))
    return abs(ours.mean() - theirs.mean()) <= 2 * standard_error


@pytest.mark.slow
def test_adaboost_learning_curve_matches_sklearn_samme():
    ours, theirs = [], []
    for seed, X_train, y_train, X_test, y_test in _splits():
        model = AdaBoostClassifier(n_estimators=400, random_state=seed).fit(X_train, y_train)
        reference = SklearnAdaBoost(DecisionTreeClassifier(max_depth=1), n_estimators=400,
                                    random_state=seed).fit(X_train, y_train)
        ours.append([np.mean(p != y_test) for p in model.staged_predict(X_test)])
        theirs.append([np.mean(p != y_test) for p in reference.staged_predict(X_test)])
    ours, theirs = np.array(ours), np.array(theirs)
    for rounds in CHECKPOINTS:
        assert _within_sampling_error(ours[:, rounds - 1], theirs[:, rounds - 1]), rounds
    assert ours[:, 0].mean() == pytest.approx(BOOK["stump"], abs=0.01)
    assert ours[:, -1].mean() < 0.13


@pytest.mark.slow
def test_a_244_node_tree_matches_sklearn():
    ours, theirs, nodes = [], [], []
    for seed, X_train, y_train, X_test, y_test in _splits():
        tree = RandomForestClassifier(n_estimators=1, bootstrap=False, max_features=None,
                                      max_leaf_nodes=122, random_state=seed).fit(X_train, y_train)
        reference = DecisionTreeClassifier(max_leaf_nodes=122, random_state=seed)
        ours.append(np.mean(tree.predict(X_test) != y_test))
        theirs.append(np.mean(reference.fit(X_train, y_train).predict(X_test) != y_test))
        nodes.append(len(tree.estimators_[0].feature))
    assert nodes == [243] * len(SEEDS)
    assert _within_sampling_error(ours, theirs)
    assert np.mean(ours) == pytest.approx(BOOK["tree_244_nodes"], abs=0.02)
