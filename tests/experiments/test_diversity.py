"""Diversity measures on hand-made oracle outputs and votes, and on fitted forests."""

import math

import numpy as np
import pytest
from sklearn import ensemble
from sklearn.datasets import load_iris

import ensembles
from experiments.analyses.diversity import (
    binomial_vote_error,
    breiman_bound,
    disagreement,
    diversity_scores,
    q_statistic,
    strength_correlation,
)
from experiments.analyses.member_votes import member_labels
from experiments.engines import members

# Members a, b, c right (1) or wrong (0) on 10 samples: pair (a, b) has N11 = 5, N10 = 2,
# N01 = 1, N00 = 2, so Q = (5 * 2 - 1 * 2) / (5 * 2 + 1 * 2) = 2/3 and D = 3/10; c = a gives
# Q = 1, D = 0; (b, c) mirrors (a, b). Averages: Q = (2/3 + 1 + 2/3) / 3 = 7/9, D = 0.2.
A = [1, 1, 1, 1, 1, 1, 1, 0, 0, 0]
B = [1, 1, 1, 1, 1, 0, 0, 1, 0, 0]
ORACLE = np.array([A, B, A], dtype=bool)


def test_pairwise_disagreement_and_q_by_hand():
    assert disagreement(ORACLE[:2]) == pytest.approx(0.3)
    assert q_statistic(ORACLE[:2]) == pytest.approx(2 / 3)
    assert disagreement(ORACLE) == pytest.approx(0.2)
    assert q_statistic(ORACLE) == pytest.approx(7 / 9)


def test_q_leaves_out_pairs_where_it_is_undefined():
    always_right = np.ones((2, 10), dtype=bool)
    assert math.isnan(q_statistic(always_right))
    assert q_statistic(np.vstack([ORACLE[:2], always_right[:1]])) == pytest.approx(2 / 3)


def test_breiman_strength_correlation_and_bound_by_hand():
    # y = 0 everywhere; members 1 and 2 err on sample 3, member 3 on sample 2. Raw margins
    # (+1 right, -1 wrong): var 3/4 each, cov(1, 2) = 3/4, cov(1, 3) = cov(2, 3) = -1/4, so
    # rho = 2 (3/4 - 1/4 - 1/4) / (6 * 3/4) = 1/9; mr = (1, 1, 1/3, -1/3), s = 1/2.
    labels = np.array([[0, 0, 0, 1], [0, 0, 0, 1], [0, 0, 1, 0]])
    strength, correlation = strength_correlation(labels, np.zeros(4, dtype=int), 2)
    assert strength == pytest.approx(0.5)
    assert correlation == pytest.approx(1 / 9)
    assert breiman_bound(strength, correlation) == pytest.approx(1 / 3)  # >= PE* = 1/4
    assert math.isnan(breiman_bound(-0.25, 0.1))


def test_correlation_is_the_sd_weighted_mean_of_pairwise_correlations():
    rng = np.random.RandomState(1)
    labels, y = rng.randint(0, 3, (6, 50)), rng.randint(0, 3, 50)
    votes = np.stack([(labels == k).mean(axis=0) for k in range(3)], axis=1)
    votes[np.arange(50), y] = -1
    runner_up = votes.argmax(axis=1)
    raw = (labels == y).astype(float) - (labels == runner_up)
    sd = raw.std(axis=1)
    corr = np.corrcoef(raw)
    off = ~np.eye(6, dtype=bool)
    expected = np.sum((corr * np.outer(sd, sd))[off]) / np.sum(np.outer(sd, sd)[off])
    strength, correlation = strength_correlation(labels, y, 3)
    assert correlation == pytest.approx(expected)
    assert strength == pytest.approx(raw.mean())


def test_binomial_vote_error_by_hand():
    assert binomial_vote_error(3, 0.3) == pytest.approx(3 * 0.3**2 * 0.7 + 0.3**3)
    assert binomial_vote_error(2, 0.3) == pytest.approx(0.3**2 + 0.5 * 2 * 0.3 * 0.7)


@pytest.mark.parametrize(
    "model",
    [
        ensembles.RandomForestClassifier(n_estimators=7, random_state=0),
        ensembles.BaggingClassifier(n_estimators=7, random_state=0),
        ensemble.RandomForestClassifier(n_estimators=7, random_state=0),
        ensemble.BaggingClassifier(n_estimators=7, random_state=0),
    ],
    ids=lambda m: f"{type(m).__module__.split('.')[0]}-{type(m).__name__}",
)
def test_forests_member_errors_and_vote(model):
    X, y = load_iris(return_X_y=True)
    y = np.array(["setosa", "versicolor", "virginica"])[y]  # labels that are not indices
    model.fit(X[::2], y[::2])
    X_test, y_test = X[1::2], y[1::2]
    labels = model.classes_[member_labels(model, X_test)]
    if isinstance(model, ensemble.RandomForestClassifier):  # independent: each tree's own predict
        direct = [model.classes_[t.predict(X_test).astype(int)] for t in model.estimators_]
        assert np.array_equal(labels, direct)
    scores = diversity_scores(model, X_test, y_test)
    assert scores["div_member_error"] == pytest.approx(np.mean(labels != y_test))
    votes = np.stack([(labels == c).sum(axis=0) for c in model.classes_], axis=1)
    vote = model.classes_[votes.argmax(axis=1)]
    assert scores["div_vote_error"] == pytest.approx(np.mean(vote != y_test))
    assert 0 <= scores["div_disagreement"] <= 1 and -1 <= scores["div_q"] <= 1


def test_no_diversity_for_boosting_or_a_single_tree():
    X, y = load_iris(return_X_y=True)
    assert diversity_scores(ensembles.AdaBoostClassifier(3).fit(X, y), X, y) == {}
    single = ensembles.RandomForestClassifier(n_estimators=1, random_state=0).fit(X, y)
    assert diversity_scores(single, X, y) == {}


@pytest.mark.parametrize("categorical", [False, True], ids=["packed", "set-splits"])
def test_inhouse_member_outputs_in_chunks_are_each_trees_prediction(monkeypatch, categorical):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    X[:, 0] = rng.integers(0, 6, 300)
    y = (X[:, 0] % 2 == 0) ^ (X[:, 1] > 0)
    X[rng.uniform(size=X.shape) < 0.05] = np.nan
    forest = ensembles.RandomForestClassifier(
        n_estimators=7, max_depth=4, random_state=0,
        categorical_features=[0] if categorical else None).fit(X, y)
    assert any(tree.has_category_sets for tree in forest.estimators_) == categorical
    X_test = X[:50]
    monkeypatch.setattr(members, "MEMBER_CHUNK_VALUES", 3 * 50 * 2)  # chunks of 3, 3 and 1 trees
    outputs = list(members.member_outputs(forest, X_test))
    assert len(outputs) == 7
    for output, tree in zip(outputs, forest.estimators_, strict=True):
        assert np.array_equal(output, tree.predict(X_test))


@pytest.mark.parametrize("algorithm", ["SAMME", "SAMME.R", "gentle"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_an_adaboost_member_is_a_round_and_its_output_its_class_scores(algorithm, n_classes):
    X, y = load_iris(return_X_y=True)
    X, y = X[y >= 3 - n_classes], y[y >= 3 - n_classes]  # 2 classes: versicolor, virginica
    model = ensembles.AdaBoostClassifier(6, max_depth=2, algorithm=algorithm,
                                         random_state=0).fit(X, y)
    outputs = list(members.member_outputs(model, X))
    assert len(outputs) == len(model.estimators_) == 6
    for output, member in zip(outputs, model.estimators_, strict=True):
        if algorithm == "SAMME":  # the coded label: 1 for the tree's class, -1 / (K - 1)
            label = np.argmax(member.predict(X), axis=1)
            expected = np.where(np.arange(n_classes) == label[:, None], 1, -1 / (n_classes - 1))
        elif algorithm == "SAMME.R":  # (K - 1)(log p_k - mean_j log p_j)
            log_p = np.log(np.clip(member.predict(X), np.finfo(float).eps, None))
            expected = (n_classes - 1) * (log_p - log_p.mean(axis=1, keepdims=True))
        elif n_classes == 2:  # (-f, f)
            expected = member.predict(X) * [-1, 1]
        else:  # one tree a class, one-vs-rest
            expected = np.column_stack([tree.predict(X)[:, 0] for tree in member])
        np.testing.assert_allclose(output, expected, atol=1e-12)
    # the votes times the outputs add up to the estimator's own scores (SAMME, SAMME.R: their
    # vote-weighted mean; two classes: F_1 - F_0, gentle F = F_1)
    total = sum(v * o for v, o in zip(model.estimator_weights_, outputs, strict=True))
    if algorithm != "gentle":
        total = total / model.estimator_weights_.sum()
    if n_classes == 2:
        total = total[:, 1] - (total[:, 0] if algorithm != "gentle" else 0)
    np.testing.assert_allclose(total, model.decision_function(X), atol=1e-9)
    labels = member_labels(model, X)
    assert np.array_equal(labels, np.argmax(outputs, axis=2))
    assert diversity_scores(model, X, y) == {}  # rounds of boosting: no equal-vote diversity
