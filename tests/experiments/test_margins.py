"""Normalized training margins: in [-1, 1], equal to those derived from scikit-learn's SAMME
decision function and, for SAMME.R and gentle, to a hand computation from the estimator's
staged decision function and its trees' leaves, and logged as margins.csv by a job."""

import numpy as np
import pandas as pd
import pytest
from mlflow import MlflowClient
from sklearn import ensemble
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.tree import DecisionTreeClassifier

import ensembles
from experiments.analyses.findings import MARGINS_ARTIFACT
from experiments.analyses.margins import (
    adaboost_margins,
    logitboost_margins,
    round_counts,
    training_margins,
)
from experiments.run import run_job


def test_round_counts_are_10_50_and_100_percent_of_the_rounds():
    assert round_counts(400) == [40, 200, 400]
    assert round_counts(5) == [1, 2, 5]
    assert round_counts(1) == [1]


def decision_margin(decision: np.ndarray, y_index: np.ndarray, n_classes: int) -> np.ndarray:
    """Margins from scikit-learn's SAMME decision function f. Two classes: f = f_1 - f_0 =
    2 (v_1 - v_0), so the margin is y f / 2 with y in {-1, 1}. K classes:
    f_k = (K v_k - 1) / (K - 1), so the margin is (K - 1) / K (f_y - max_{k != y} f_k)."""
    if n_classes == 2:
        return np.where(y_index == 1, 1.0, -1.0) * decision / 2
    rows = np.arange(len(y_index))
    others = decision.copy()
    others[rows, y_index] = -np.inf
    return (n_classes - 1) / n_classes * (decision[rows, y_index] - others.max(axis=1))


@pytest.mark.parametrize("load", [load_breast_cancer, load_iris], ids=["binary", "multiclass"])
def test_adaboost_margins_match_scikit_learns_decision_function(load):
    X, y = load(return_X_y=True)
    n_classes = len(np.unique(y))
    model = ensemble.AdaBoostClassifier(
        DecisionTreeClassifier(max_depth=1), n_estimators=20, random_state=0
    ).fit(X, y)
    margins = adaboost_margins(model, X, y)
    assert sorted(margins) == round_counts(len(model.estimators_))
    staged = list(model.staged_decision_function(X))
    for rounds, margin in margins.items():
        expected = decision_margin(staged[rounds - 1], y, n_classes)
        np.testing.assert_allclose(margin, expected, atol=1e-12)
        assert np.all(np.abs(margin) <= 1 + 1e-12)
    final = margins[max(margins)]
    decided = final != 0
    assert np.array_equal((final > 0)[decided], (model.predict(X) == y)[decided])


@pytest.mark.parametrize("load", [load_breast_cancer, load_iris], ids=["binary", "multiclass"])
def test_inhouse_adaboost_margins_follow_its_decision_function(load):
    X, y = load(return_X_y=True)
    n_classes = len(np.unique(y))
    model = ensembles.AdaBoostClassifier(n_estimators=20, random_state=0).fit(X, y)
    staged = list(model.staged_decision_function(X))
    for rounds, margin in adaboost_margins(model, X, y).items():  # its f is scikit-learn's
        expected = decision_margin(staged[rounds - 1], y, n_classes)
        np.testing.assert_allclose(margin, expected, atol=1e-12)


def leaf_score_range(tree, algorithm: str, n_classes: int) -> float:
    """max over the tree's leaves of max_k h_k - min_k h_k, h from the leaf values by the
    papers' formulas: SAMME.R h_k = (K - 1)(log p_k - mean_j log p_j), p clipped at float64 eps
    (Zhu et al. 2009, Algorithm 4); gentle two-class h = (-f, f) (FHT 2000, Algorithm 4)."""
    if algorithm == "gentle":
        return 2 * np.abs(tree.value).max()
    log_p = np.log(np.clip(tree.value, np.finfo(float).eps, None))
    h = (n_classes - 1) * (log_p - log_p.mean(axis=1, keepdims=True))
    return (h.max(axis=1) - h.min(axis=1)).max()


@pytest.mark.parametrize("algorithm", ["SAMME.R", "gentle"])
@pytest.mark.parametrize("load", [load_breast_cancer, load_iris], ids=["binary", "multiclass"])
def test_real_and_gentle_margins_by_hand_from_the_staged_decision_function(load, algorithm):
    X, y = load(return_X_y=True)
    X, y = X[::2], y[::2]
    n_classes = len(np.unique(y))
    model = ensembles.AdaBoostClassifier(
        n_estimators=10, max_depth=2, algorithm=algorithm, random_state=0
    ).fit(X, y)
    staged = list(model.staged_decision_function(X))
    # F = sum_m h_m: SAMME.R's decision is the mean over rounds (votes 1), gentle's the sum;
    # two classes: SAMME.R's decision is F_1 - F_0, gentle's F_1 = F with F_0 = -F.
    ranges = []
    for member in model.estimators_:
        if isinstance(member, list):  # gentle K classes: the range of f_m1 .. f_mK on the rows
            f = np.column_stack([tree.predict(X)[:, 0] for tree in member])
            ranges.append((f.max(axis=1) - f.min(axis=1)).max())
        else:
            ranges.append(leaf_score_range(member, algorithm, n_classes))
    margins = adaboost_margins(model, X, y)
    assert sorted(margins) == [1, 5, 10]
    for rounds, margin in margins.items():
        decision = staged[rounds - 1] * (rounds if algorithm == "SAMME.R" else 1)
        if n_classes == 2:
            y_sign = np.where(y == 1, 1.0, -1.0)
            gap = y_sign * decision * (2 if algorithm == "gentle" else 1)
        else:
            rows = np.arange(len(y))
            others = decision.copy()
            others[rows, y] = -np.inf
            gap = decision[rows, y] - others.max(axis=1)
        np.testing.assert_allclose(margin, gap / sum(ranges[:rounds]), rtol=1e-9, atol=1e-12)
        assert np.all(np.abs(margin) <= 1 + 1e-12)
    final = margins[10]
    decided = final != 0
    assert np.array_equal((final > 0)[decided], (model.predict(X) == y)[decided])
    assert decided.mean() > 0.9


@pytest.mark.parametrize("load", [load_breast_cancer, load_iris], ids=["binary", "multiclass"])
def test_logitboost_margins_are_normalized_and_signed_by_correctness(load):
    X, y = load(return_X_y=True)
    model = ensembles.LogitBoostClassifier(n_estimators=10, max_depth=2, random_state=0).fit(X, y)
    margins = logitboost_margins(model, X, y)
    final = margins[10]
    assert all(np.all(np.abs(m) <= 1) for m in margins.values())
    decided = final != 0
    assert np.array_equal((final > 0)[decided], (model.predict(X) == y)[decided])
    if len(model.classes_) == 2:  # F = decision_function = raw / 2; margin = y 2F / sum_m c_m
        scale = sum(np.abs(t.value).max() for [t] in model.trees_)
        expected = np.where(y == 1, 1.0, -1.0) * 2 * model.decision_function(X) / scale
        np.testing.assert_allclose(final, expected, atol=1e-12)


def test_other_models_have_no_margins():
    X, y = load_iris(return_X_y=True)
    forest = ensembles.RandomForestClassifier(n_estimators=2, random_state=0).fit(X, y)
    assert training_margins(forest, X, y) is None


def test_an_adaboost_job_logs_its_training_margins(compose_job, runs_of, tmp_path):
    cfg = compose_job("dataset=iris", "method=adaboost", "method.n_estimators=10")
    assert run_job(cfg) == "ok"
    [run] = runs_of(cfg)
    path = MlflowClient(cfg.mlflow.tracking_uri).download_artifacts(
        run.info.run_id, MARGINS_ARTIFACT, str(tmp_path)
    )
    margins = pd.read_csv(path)
    assert list(margins.columns) == ["rounds", "margin"]
    assert margins.groupby("rounds").size().to_dict() == {1: 112, 5: 112, 10: 112}  # 3/4 of 150
    assert margins["margin"].between(-1, 1).all()
