"""LogitBoost: the two-class case is Newton boosting on the logistic loss with lambda = 0
(z = -g/h, w = h), so without clipping it equals XGBoost with lambda = 0 and no minimum child
weight, up to the factor 1/2 of the +-1 coding (XGBoost's margin is 2F). With clipping, and for
J classes, it equals Friedman, Hastie and Tibshirani's (FHT 2000) Algorithms 3 and 6, written out
below in numpy on scikit-learn's weighted least-squares trees."""

import numpy as np
import pytest
import xgboost
from sklearn.datasets import load_digits, load_wine, make_classification
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeRegressor
from sklearn.utils.estimator_checks import parametrize_with_checks

from ensembles import LogitBoostClassifier

FLOAT32_STATISTICS = ("each row's (g, h) times its weight is kept in float32, as in XGBoost, "
                      "LightGBM and scikit-learn's own HistGradientBoosting*: a weight of 3 "
                      "and three copies of a row round apart (4e-8 here)")


@parametrize_with_checks(
    [LogitBoostClassifier(n_estimators=5)],
    expected_failed_checks=lambda estimator: {
        "check_sample_weight_equivalence_on_dense_data": FLOAT32_STATISTICS},
)
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
    leaves = np.concatenate([tree.value[:, 0] for (tree,) in model.trees_])
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


GRID = np.arange(5.0)  # every feature takes these values: one bin each, binning is exact
GRID_MIDPOINTS = (GRID[:-1] + GRID[1:]) / 2
DEFAULT_Z_MAX = 4.0


def _grid_data(n_classes, n_train=1600, n_test=400):
    """Four features on GRID; y drawn from softmax of a nonlinear score, noisy enough that
    rows the model gets confidently wrong have |z| > DEFAULT_Z_MAX after a few rounds."""
    rng = np.random.default_rng(0)
    X = rng.choice(GRID, size=(n_train + n_test, 4))
    score = np.column_stack([np.sin(X[:, 0]) + 0.3 * X[:, 1], 0.2 * X[:, 2] * X[:, 3] - 1.0,
                             0.5 * X[:, 0] - 0.4 * X[:, 3]])[:, :n_classes]
    proba = np.exp(score) / np.exp(score).sum(axis=1, keepdims=True)
    y = (rng.uniform(size=(len(X), 1)) > np.cumsum(proba, axis=1)[:, :-1]).sum(axis=1)
    return X[:n_train], y[:n_train], X[n_train:]


def _weighted_least_squares_tree(X, z, w, tree_size):
    """scikit-learn's CART fit of z with sample weights w: leaves sum w z / sum w, splits of
    largest decrease of sum w (z - mean)^2. The booster keeps each row's (g, h) = (-w z, w) in
    float32, as XGBoost, LightGBM and HistGradientBoosting do, so the tree is fitted to those
    same statistics: weights float32(w), targets float32(w z) / float32(w). A split must
    decrease the sum by more than 1e-6 (XGBoost's kRtEps, kept by the estimator);
    min_impurity_decrease is that decrease / sum w. tree_size: max_depth, or max_leaf_nodes
    (best first), the same parameters of both estimators.

    Both trees part the rows alike but place a threshold differently between the values a node
    holds (scikit-learn midway between its neighbouring values, ours at the bin edge), so every
    split is checked to lie between neighbouring GRID values: then any point of GRID, training
    or test, takes the same side in both."""
    stored_w = w.astype(np.float32).astype(np.float64)
    stored_z = (w * z).astype(np.float32) / stored_w
    tree = DecisionTreeRegressor(**tree_size, min_impurity_decrease=1e-6 / stored_w.sum(),
                                 random_state=0).fit(X, stored_z, sample_weight=stored_w)
    assert np.isin(tree.tree_.threshold[tree.tree_.feature >= 0], GRID_MIDPOINTS).all()
    return tree


def _binary_logitboost(X, y, X_test, n_rounds, tree_size, learning_rate, z_max):
    """FHT Algorithm 3 with shrinkage: p = 1 / (1 + e^(-2F)), w = p (1 - p),
    z = clip((y - p) / w, -z_max, z_max), F <- F + learning_rate f / 2 with f the weighted
    least-squares tree of z. Returns F on X and X_test, and the largest |z| before clipping."""
    F, F_test, largest_z = np.zeros(len(X)), np.zeros(len(X_test)), 0.0
    for _ in range(n_rounds):
        p = 1.0 / (1.0 + np.exp(-2.0 * F))
        w = p * (1.0 - p)
        z = (y - p) / w
        largest_z = max(largest_z, np.abs(z).max())
        tree = _weighted_least_squares_tree(X, np.clip(z, -z_max, z_max), w, tree_size)
        F += learning_rate * tree.predict(X) / 2.0
        F_test += learning_rate * tree.predict(X_test) / 2.0
    return F, F_test, largest_z


def _multiclass_logitboost(X, y, X_test, n_rounds, tree_size, learning_rate, z_max):
    """FHT Algorithm 6 with shrinkage: p = softmax(F); per class j, w_j = p_j (1 - p_j),
    z_j = clip((y*_j - p_j) / w_j, -z_max, z_max) and f_j the weighted least-squares tree of
    z_j; then f_j <- (J - 1) / J (f_j - mean_k f_k), F_j <- F_j + learning_rate f_j.
    Returns F on X and X_test, and the largest |z| before clipping."""
    n_classes = y.max() + 1
    F, F_test, largest_z = np.zeros((len(X), n_classes)), np.zeros((len(X_test), n_classes)), 0.0
    for _ in range(n_rounds):
        p = _softmax(F)
        f, f_test = np.empty_like(F), np.empty_like(F_test)
        for j in range(n_classes):
            w = p[:, j] * (1.0 - p[:, j])
            z = ((y == j) - p[:, j]) / w
            largest_z = max(largest_z, np.abs(z).max())
            tree = _weighted_least_squares_tree(X, np.clip(z, -z_max, z_max), w, tree_size)
            f[:, j], f_test[:, j] = tree.predict(X), tree.predict(X_test)
        for update, scores in ((f, F), (f_test, F_test)):
            scores += learning_rate * (n_classes - 1) / n_classes * (
                update - update.mean(axis=1, keepdims=True))
    return F, F_test, largest_z


def sigmoid2(F: np.ndarray) -> np.ndarray:
    """p = 1 / (1 + e^(-2F)), LogitBoost's probability of class 1 (F is half the log-odds)."""
    return 1.0 / (1.0 + np.exp(-2.0 * F))


def assert_scores_and_probabilities(model, pairs, probabilities) -> None:
    """For each (rows, reference F): the model's decision_function equals F and its
    predict_proba equals probabilities(F), both to 1e-8."""
    for rows, reference in pairs:
        assert np.abs(model.decision_function(rows) - reference).max() < 1e-8
        assert np.abs(model.predict_proba(rows) - probabilities(reference)).max() < 1e-8


def _binary_probabilities(F: np.ndarray) -> np.ndarray:
    return np.column_stack([1 - sigmoid2(F), sigmoid2(F)])


def _softmax(F: np.ndarray) -> np.ndarray:
    return np.exp(F) / np.exp(F).sum(axis=1, keepdims=True)


@pytest.mark.parametrize("n_classes, algorithm, probabilities", [
    (2, _binary_logitboost, _binary_probabilities),  # FHT's Algorithm 3
    (3, _multiclass_logitboost, _softmax),  # FHT's Algorithm 6
])
@pytest.mark.parametrize("tree_size, learning_rate", [
    ({"max_depth": 3}, 1.0), ({"max_depth": 2}, 0.5),
    ({"max_depth": None, "max_leaf_nodes": 6}, 1.0),  # best first, FHT's J-node trees
])
def test_logitboost_with_default_clipping_is_fht_algorithm_3_and_6(
        n_classes, algorithm, probabilities, tree_size, learning_rate):
    """With the default z_max = 4, F and p (1 / (1 + e^(-2F)) for two classes, softmax(F) for
    three) equal FHT's Algorithm 3 and 6 on training and test rows, on data where clipping is
    active."""
    X, y, X_test = _grid_data(n_classes=n_classes)
    F, F_test, largest_z = algorithm(X, y, X_test, 20, tree_size, learning_rate, DEFAULT_Z_MAX)
    assert largest_z > 2 * DEFAULT_Z_MAX
    model = LogitBoostClassifier(n_estimators=20, **tree_size,
                                 learning_rate=learning_rate).fit(X, y)
    assert_scores_and_probabilities(model, ((X, F), (X_test, F_test)), probabilities)
