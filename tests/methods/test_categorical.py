"""Native categorical splits: a stump that isolates a set of categories, CART's exact order
against an exhaustive search, and agreement with HistGradientBoosting's categorical trees."""

import itertools

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

from ensembles import (
    ExtraTreesClassifier,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)

N_CATEGORIES = 10
ISOLATED = [1, 4, 7]


def _isolated_set_data(n=4000, seed=0):
    """Feature 0: categories 0..9 (5% missing), feature 1: noise; y = 1 exactly for the
    categories 1, 4 and 7, which no threshold on the codes separates from the others."""
    rng = np.random.default_rng(seed)
    category = rng.integers(0, N_CATEGORIES, n).astype(float)
    category[rng.random(n) < 0.05] = np.nan
    y = np.isin(category, ISOLATED).astype(int)
    return np.column_stack([category, rng.normal(size=n)]), y


def _left_categories(tree):
    bits = np.unpackbits(tree.category_bits[0].view(np.uint8), bitorder="little")
    return set(np.flatnonzero(bits[:N_CATEGORIES]))


STUMPS = {
    "gbt": lambda categorical: GradientBoostingClassifier(
        n_estimators=1, max_depth=1, learning_rate=1.0, categorical_features=categorical),
    "random_forest": lambda categorical: RandomForestClassifier(
        n_estimators=1, max_depth=1, max_features=None, bootstrap=False,
        categorical_features=categorical),
}


@pytest.mark.parametrize("method", STUMPS)
def test_a_stump_isolates_a_set_of_categories_that_no_threshold_separates(method):
    X, y = _isolated_set_data()
    native = STUMPS[method]([0]).fit(X, y)
    ordinal = STUMPS[method](None).fit(X, y)
    tree = native.trees_[0][0] if method == "gbt" else native.estimators_[0]
    assert tree.feature[0] == 0
    left = _left_categories(tree)
    assert left in (set(ISOLATED), set(range(N_CATEGORIES)) - set(ISOLATED))
    assert np.mean(native.predict(X) == y) == 1.0
    assert np.mean(ordinal.predict(X) == y) < 0.9
    reference = HistGradientBoostingClassifier(max_iter=1, max_depth=1, learning_rate=1.0,
                                               categorical_features=[0]).fit(X, y)
    assert np.mean(reference.predict(X) == y) == 1.0  # the reference separates it too


def _exhaustive_best_partition(category, y, impurity):
    """The two-set partition of the categories of smallest weighted impurity, by trying every
    one of the 2^(K-1) - 1 (an independent reference for the sorted scan)."""
    categories = np.unique(category)
    best = (np.inf, None)
    for size in range(1, len(categories)):
        for left in itertools.combinations(categories, size):
            goes_left = np.isin(category, left)
            total = (goes_left.sum() * impurity(y[goes_left])
                     + (~goes_left).sum() * impurity(y[~goes_left]))
            if total < best[0] - 1e-9:
                best = (total, goes_left)
    return best[1]


def _gini(y):
    p = np.mean(y)
    return 2 * p * (1 - p)


@pytest.mark.parametrize("task", ["regression", "binary"])
def test_cart_finds_the_best_of_all_category_partitions(task):
    """Breiman's theorem: sorted by class-1 share (or mean target), the best partition is a
    prefix, so the CART stump's split must equal the exhaustive search over all 255 sets. The
    categories' sizes differ, so that an order by class-1 weight or gradient sum (not share or
    mean) would miss it."""
    rng = np.random.default_rng(1)
    n = 3000
    category = rng.choice(9, size=n, p=[0.3, 0.2, 0.15, 0.1, 0.08, 0.07, 0.05, 0.03, 0.02])
    level = rng.normal(size=9)
    if task == "regression":
        y = level[category] + rng.normal(scale=0.5, size=n)
        model = RandomForestRegressor(n_estimators=1, max_depth=1, bootstrap=False,
                                      categorical_features=[0])
        impurity = np.var
    else:
        y = (rng.random(n) < 1 / (1 + np.exp(-2 * level[category]))).astype(int)
        model = RandomForestClassifier(n_estimators=1, max_depth=1, max_features=None,
                                       bootstrap=False, categorical_features=[0])
        impurity = _gini
    X = category[:, None].astype(float)
    tree = model.fit(X, y).estimators_[0]
    best = _exhaustive_best_partition(category, y, impurity)
    ours = np.isin(category, list(_left_categories(tree)))
    assert np.array_equal(ours, best) or np.array_equal(ours, ~best)


def _hgb_parity_data(n=6000, seed=0):
    """A categorical feature of 12 categories (each about 500 rows, so that HGB's smoothing of
    the category order, cat_smooth 10, does not reorder them) and a numerical one of 101
    values (lossless in 255 bins)."""
    rng = np.random.default_rng(seed)
    category = rng.integers(0, 12, n)
    z = np.round(rng.uniform(0, 10, n), 1)
    y = rng.permutation(12)[category] + 2 * np.sin(z) + rng.normal(0, 0.3, n)
    return np.column_stack([category.astype(float), z]), y


def _fit_with_hgb(ours_class, reference_class, reg_lambda, X, y):
    """Ours and HistGradientBoosting with the same 30 rounds of depth-3 trees, learning rate,
    L2 penalty and leaf size, feature 0 categorical."""
    ours = ours_class(
        n_estimators=30, learning_rate=0.1, max_depth=3, reg_lambda=reg_lambda,
        min_child_weight=1e-3, min_child_samples=20, categorical_features=[0]).fit(X, y)
    reference = reference_class(
        max_iter=30, learning_rate=0.1, max_depth=3, max_leaf_nodes=None,
        l2_regularization=reg_lambda, min_samples_leaf=20, early_stopping=False,
        categorical_features=[0]).fit(X, y)
    return ours, reference


def test_squared_error_trees_match_hist_gradient_boosting_categorical_trees():
    X, y = _hgb_parity_data()
    ours, reference = _fit_with_hgb(GradientBoostingRegressor, HistGradientBoostingRegressor,
                                    0.0, X, y)
    assert np.abs(ours.predict(X) - reference.predict(X)).max() < 1e-6
    assert any(tree.has_category_sets for round_trees in ours.trees_ for tree in round_trees)
    unseen = X[:50].copy()
    unseen[:, 0] = 40.0  # a category neither saw: both send it with the missing values
    assert np.abs(ours.predict(unseen) - reference.predict(unseen)).max() < 1e-6


def test_logistic_trees_match_hist_gradient_boosting_categorical_trees():
    X, y = _hgb_parity_data(seed=1)
    y = (y > np.median(y)).astype(int)
    ours, reference = _fit_with_hgb(GradientBoostingClassifier, HistGradientBoostingClassifier,
                                    1.0, X, y)
    assert np.abs(ours.decision_function(X) - reference.decision_function(X)).max() < 1e-6


def _labelled_frame(X):
    """X's feature 0 as a pandas category column of string labels ("c0".."c9", NaN kept)."""
    labels = pd.Series(X[:, 0]).map(lambda code: f"c{int(code)}", na_action="ignore")
    return pd.DataFrame({"colour": pd.Categorical(labels), "noise": X[:, 1]})


@pytest.mark.parametrize("make", [
    lambda: GradientBoostingClassifier(n_estimators=5, max_depth=2),
    lambda: RandomForestClassifier(n_estimators=5, max_depth=2, random_state=0),
    lambda: ExtraTreesClassifier(n_estimators=20, max_depth=4, max_features=None,
                                 random_state=0),
])
def test_pandas_category_columns_are_categorical_by_default(make):
    X, y = _isolated_set_data()
    frame = _labelled_frame(X)
    model = make().fit(frame, y)
    assert list(model.is_categorical_) == [True, False]
    assert np.mean(model.predict(frame) == y) == 1.0
    reordered = frame.copy()  # the same labels in another category order: same predictions
    reordered["colour"] = reordered["colour"].cat.reorder_categories(
        list(reversed(frame["colour"].cat.categories)))
    assert np.array_equal(model.predict(reordered), model.predict(frame))


def test_an_unseen_label_follows_the_missing_values():
    X, y = _isolated_set_data()
    frame = _labelled_frame(X)
    model = GradientBoostingClassifier(n_estimators=3, max_depth=1).fit(frame, y)
    missing = frame.iloc[:1].copy()
    missing["colour"] = pd.Categorical([None])
    unseen = frame.iloc[:1].copy()
    unseen["colour"] = pd.Categorical(["never seen"])
    assert model.predict_proba(unseen) == pytest.approx(model.predict_proba(missing))


def test_categorical_input_errors_name_the_problem():
    X, y = _isolated_set_data()
    with pytest.raises(ValueError, match="categorical feature 1 has value"):
        GradientBoostingClassifier(n_estimators=1, categorical_features=[1]).fit(X, y)
    frame = pd.DataFrame({"id": pd.Categorical([f"u{i}" for i in range(len(y))])})
    with pytest.raises(ValueError, match="'id' has 4000 categories; at most 255"):
        RandomForestClassifier(n_estimators=1).fit(frame, y)
    with pytest.raises(ValueError, match="indices must be in"):
        GradientBoostingClassifier(categorical_features=[5]).fit(X, y)
    with pytest.raises(ValueError, match="unknown columns"):
        GradientBoostingClassifier(categorical_features=["size"]).fit(_labelled_frame(X), y)
