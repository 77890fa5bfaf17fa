"""LogitBoost: the two-class case is Newton boosting on the logistic loss with lambda = 0
(z = -g/h, w = h), so without clipping it equals XGBoost with lambda = 0 and no minimum child
weight, up to the factor 1/2 of the +-1 coding (XGBoost's margin is 2F)."""

import numpy as np
import pytest
import xgboost
from sklearn.datasets import load_digits, load_wine, make_classification
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.model_selection import train_test_split
from sklearn.utils.estimator_checks import parametrize_with_checks

from ensembles import LogitBoostClassifier


@parametrize_with_checks([LogitBoostClassifier(n_estimators=5)])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def _binary_data():
    X, y = make_classification(n_samples=2000, n_features=10, n_informative=6, random_state=0)
    return np.round(X, 1), y


@pytest.mark.parametrize("max_depth, learning_rate", [(1, 1.0), (2, 0.5), (4, 0.3)])
def test_binary_logitboost_is_xgboost_with_lambda_zero(max_depth, learning_rate):
    X, y = _binary_data()
    ours = LogitBoostClassifier(n_estimators=50, max_depth=max_depth,
                                learning_rate=learning_rate, z_max=None).fit(X, y)
    reference = xgboost.XGBClassifier(tree_method="hist", n_estimators=50, max_depth=max_depth,
                                      learning_rate=learning_rate, reg_lambda=0.0,
                                      min_child_weight=0.0, base_score=0.5).fit(X, y)
    margin = reference.predict(X, output_margin=True)
    assert np.abs(2.0 * ours.decision_function(X) - margin).max() < 1e-4


def test_clipping_bounds_every_leaf_by_z_max():
    X, y = _binary_data()
    model = LogitBoostClassifier(n_estimators=30, max_depth=3, z_max=2.0).fit(X, y)
    leaves = np.concatenate([tree.value[tree.feature < 0, 0] for (tree,) in model.trees_])
    assert np.abs(leaves).max() <= 2.0 + 1e-12
    unclipped = LogitBoostClassifier(n_estimators=30, max_depth=3, z_max=None).fit(X, y)
    assert np.abs(np.concatenate([t.value[:, 0] for (t,) in unclipped.trees_])).max() > 2.0


def test_multiclass_scores_sum_to_zero():
    """J-class LogitBoost centres each round: sum_j f_j = 0, so sum_j F_j stays 0."""
    X, y = load_wine(return_X_y=True)
    model = LogitBoostClassifier(n_estimators=20).fit(X, y)
    assert np.allclose(model.decision_function(X).sum(axis=1), 0.0, atol=1e-10)


@pytest.mark.parametrize("loader", [load_wine, load_digits])
def test_multiclass_accuracy_like_sklearn_multinomial_boosting(loader):
    X, y = loader(return_X_y=True)
    ours, theirs = [], []
    for seed in range(3):
        X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=seed, stratify=y)
        ours.append(LogitBoostClassifier(n_estimators=100, learning_rate=0.5)
                    .fit(X_train, y_train).score(X_test, y_test))
        theirs.append(GradientBoostingClassifier(n_estimators=100, random_state=seed)
                      .fit(X_train, y_train).score(X_test, y_test))
    assert np.mean(ours) >= np.mean(theirs) - 0.02
