import numpy as np
import pytest
import sklearn.ensemble as reference
from scipy.stats import spearmanr
from sklearn.datasets import load_breast_cancer, load_diabetes, load_wine
from sklearn.model_selection import train_test_split
from sklearn.utils.estimator_checks import parametrize_with_checks

from ensembles import (
    BaggingClassifier,
    BaggingRegressor,
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)

SEEDS = range(5)
BOOTSTRAP_WEIGHTS = ("bootstrap draws make sample weights and repeated rows differ, as in "
                     "scikit-learn's own RandomForest*")
EXPECTED_FAILURES = {
    "check_sample_weight_equivalence_on_dense_data": BOOTSTRAP_WEIGHTS,
    "check_sample_weight_equivalence_on_sparse_data": BOOTSTRAP_WEIGHTS,
}


@parametrize_with_checks(
    [RandomForestClassifier(n_estimators=5, random_state=0),
     RandomForestRegressor(n_estimators=5, random_state=0),
     ExtraTreesClassifier(n_estimators=5, random_state=0),  # the default: no bootstrap
     ExtraTreesRegressor(n_estimators=5, random_state=0),
     ExtraTreesClassifier(n_estimators=5, bootstrap=True, random_state=0),
     ExtraTreesRegressor(n_estimators=5, bootstrap=True, random_state=0),
     BaggingClassifier(n_estimators=5, random_state=0),
     BaggingRegressor(n_estimators=5, random_state=0)],
    expected_failed_checks=lambda estimator: EXPECTED_FAILURES if estimator.bootstrap else {},
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def _scores(ours, theirs, X, y, **params):
    ours_scores, their_scores = [], []
    for seed in SEEDS:
        X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=seed)
        ours_scores.append(ours(random_state=seed, **params).fit(X_train, y_train)
                           .score(X_test, y_test))
        their_scores.append(theirs(random_state=seed, **params).fit(X_train, y_train)
                            .score(X_test, y_test))
    return np.mean(ours_scores), np.mean(their_scores)


@pytest.mark.parametrize("loader", [load_breast_cancer, load_wine])
@pytest.mark.parametrize("criterion", ["gini", "entropy"])
def test_classifier_accuracy_within_two_points_of_sklearn(loader, criterion):
    X, y = loader(return_X_y=True)
    ours, theirs = _scores(RandomForestClassifier, reference.RandomForestClassifier, X, y,
                           criterion=criterion)
    assert abs(ours - theirs) <= 0.02


def test_regressor_r2_close_to_sklearn_on_diabetes():
    X, y = load_diabetes(return_X_y=True)
    ours, theirs = _scores(RandomForestRegressor, reference.RandomForestRegressor, X, y)
    assert abs(ours - theirs) <= 0.03


def test_oob_score_close_to_sklearn():
    X, y = load_breast_cancer(return_X_y=True)
    ours = RandomForestClassifier(oob_score=True, random_state=0).fit(X, y)
    theirs = reference.RandomForestClassifier(oob_score=True, random_state=0).fit(X, y)
    assert abs(ours.oob_score_ - theirs.oob_score_) <= 0.02
    assert ours.oob_decision_function_.shape == (len(y), 2)
    X, y = load_diabetes(return_X_y=True)
    ours = RandomForestRegressor(oob_score=True, random_state=0).fit(X, y)
    theirs = reference.RandomForestRegressor(oob_score=True, random_state=0).fit(X, y)
    assert abs(ours.oob_score_ - theirs.oob_score_) <= 0.05


def test_feature_importances_rank_like_sklearn():
    X, y = load_breast_cancer(return_X_y=True)
    ours = RandomForestClassifier(n_estimators=300, random_state=0).fit(X, y)
    theirs = reference.RandomForestClassifier(n_estimators=300, random_state=0).fit(X, y)
    assert ours.feature_importances_.sum() == pytest.approx(1.0)
    assert spearmanr(ours.feature_importances_, theirs.feature_importances_).statistic > 0.85


def test_probabilities_are_a_distribution():
    X, y = load_breast_cancer(return_X_y=True)
    proba = RandomForestClassifier(random_state=0).fit(X, y).predict_proba(X)
    assert proba.max() <= 1.0 and proba.min() >= 0.0
    assert np.array_equal(proba.sum(axis=1), np.ones(len(X)))


def test_zero_weight_equals_dropping_the_rows():
    X, y = load_wine(return_X_y=True)
    weight = np.ones(len(y))
    weight[::3] = 0.0
    kept = weight > 0
    params = dict(n_estimators=5, bootstrap=False, random_state=0)
    weighted = RandomForestClassifier(**params).fit(X, y, sample_weight=weight)
    dropped = RandomForestClassifier(**params).fit(X[kept], y[kept])
    assert np.array_equal(weighted.predict_proba(X), dropped.predict_proba(X))


@pytest.mark.parametrize("estimator_class", [RandomForestClassifier, RandomForestRegressor])
def test_same_seed_same_predictions_whatever_n_jobs(estimator_class):
    X, y = load_breast_cancer(return_X_y=True)
    one = estimator_class(n_estimators=20, random_state=3, n_jobs=1).fit(X, y)
    two = estimator_class(n_estimators=20, random_state=3, n_jobs=2).fit(X, y)
    predict = "predict_proba" if hasattr(one, "predict_proba") else "predict"
    assert np.array_equal(getattr(one, predict)(X), getattr(two, predict)(X))


@pytest.mark.parametrize("bad, message", [
    (np.array([[1.0, np.inf]] * 4), "infinity"),
    (np.ones((4, 2, 2)), "dim 3"),
])
def test_bad_input_gets_a_clear_error(bad, message):
    with pytest.raises(ValueError, match=message):
        RandomForestRegressor().fit(bad, np.arange(4.0))


def test_a_single_class_is_refused():
    with pytest.raises(ValueError, match="one class only"):
        RandomForestClassifier().fit(np.ones((5, 2)), np.zeros(5))
