"""Native categorical splits: a stump that isolates a set of categories, CART's exact order
against an exhaustive search, agreement with HistGradientBoosting's categorical trees; GBT's
regularization of them (cat_smooth against HGB, max_cat_to_onehot against XGBoost, the cap by
hand, a many-level noise column against ordinal codes and XGBoost, levels of about 12 rows
against XGBoost); more than 255 levels."""

import itertools
from math import comb

import numpy as np
import pandas as pd
import pytest
from scipy.stats import chisquare
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

from ensembles import (
    ExtraTreesClassifier,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from ensembles.methods.categorical import encode_for_predict

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


# HistGradientBoosting's categorical splits in our parameters: MIN_CAT_SUPPORT = 10 is both the
# smallest category sorted in and the smoothing of the order (splitting.pyx); no cat_l2, no
# minimum per side, scans to the middle of the order from both ends (no cap), no one-hot
HGB_CATEGORICAL = {"cat_smooth": 10.0, "cat_l2": 0.0, "min_data_per_group": 0,
                   "max_cat_threshold": 255, "max_cat_to_onehot": 0}


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
        min_child_weight=1e-3, min_child_samples=20, categorical_features=[0],
        **HGB_CATEGORICAL).fit(X, y)
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


def test_extra_trees_draw_each_set_of_categories_with_its_probability():
    """Extra trees' set split of m categories (Geurts et al. 2006, a random set): its size
    uniform in 1..m - 1, then a uniform set of that size, so a set S has probability
    1 / ((m - 1) C(m, |S|)); the roots of 4,000 stumps on four categories against it (a
    chi-square test: uniform sets, or a biased shuffle, fail it)."""
    rng = np.random.default_rng(0)
    m = 4
    X = rng.integers(0, m, (200, 1)).astype(float)
    y = rng.integers(0, 2, 200)
    model = ExtraTreesClassifier(n_estimators=4000, max_depth=1, max_features=1,
                                 categorical_features=[0], random_state=0).fit(X, y)
    sets = [frozenset(np.flatnonzero(np.unpackbits(tree.category_bits[0].view(np.uint8),
                                                   bitorder="little")[:m]))
            for tree in model.estimators_]
    candidates = [frozenset(s) for size in range(1, m)
                  for s in itertools.combinations(range(m), size)]
    observed = [sets.count(s) for s in candidates]
    expected = [len(sets) / ((m - 1) * comb(m, len(s))) for s in candidates]
    assert sum(observed) == len(sets)
    assert chisquare(observed, expected).pvalue > 1e-3


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
    colour = pd.Series(["red" if label else 1 for label in y], dtype=object)
    frame = pd.DataFrame({"colour": colour, "noise": X[:, 1]})
    with pytest.raises(ValueError, match="'colour' mixes values of types int, str; make them"):
        GradientBoostingClassifier(categorical_features=["colour"]).fit(frame, y)
    with pytest.raises(ValueError, match="indices must be in"):
        GradientBoostingClassifier(categorical_features=[5]).fit(X, y)
    with pytest.raises(ValueError, match="unknown columns"):
        GradientBoostingClassifier(categorical_features=["size"]).fit(_labelled_frame(X), y)


def _small_categories_data(seed=0):
    """20 categories, every other one of 11-14 rows (sorted in by HGB's MIN_CAT_SUPPORT, 10,
    but moved by its smoothing of the order), the others of 40-89; a noisy target."""
    rng = np.random.default_rng(seed)
    sizes = np.where(np.arange(20) % 2 == 0, rng.integers(11, 15, 20), rng.integers(40, 90, 20))
    category = np.repeat(np.arange(20), sizes)
    y = rng.normal(0, 1, 20)[category] + rng.normal(0, 2, len(category))
    return category[:, None].astype(float), y


def test_cat_smooth_orders_categories_as_hist_gradient_boosting():
    """cat_smooth = 10 is HGB's MIN_CAT_SUPPORT (order by G / (H + 10)): the same trees to the
    rounding; without the smoothing (cat_smooth = 0) the trees differ."""
    X, y = _small_categories_data()
    params = dict(n_estimators=5, learning_rate=0.5, max_depth=3, reg_lambda=0.0,
                  min_child_weight=1e-3, min_child_samples=1, categorical_features=[0])
    reference = HistGradientBoostingRegressor(
        max_iter=5, learning_rate=0.5, max_depth=3, max_leaf_nodes=None, l2_regularization=0.0,
        min_samples_leaf=1, early_stopping=False, categorical_features=[0]).fit(X, y)
    smoothed = GradientBoostingRegressor(**params, **HGB_CATEGORICAL).fit(X, y)
    unsmoothed = GradientBoostingRegressor(**params, **HGB_CATEGORICAL | {"cat_smooth": 0.0})
    assert np.abs(smoothed.predict(X) - reference.predict(X)).max() < 1e-9
    assert np.abs(unsmoothed.fit(X, y).predict(X) - reference.predict(X)).max() > 1e-3


def test_one_vs_rest_splits_equal_xgboosts():
    """Below max_cat_to_onehot categories both split one category against the others
    (XGBoost's EnumerateOneHot): the same trees on 5 categories that a partition would split
    {0, 1} against {2, 3, 4}; with partitions (max_cat_to_onehot = 0) ours differ."""
    xgboost = pytest.importorskip("xgboost")
    rng = np.random.default_rng(0)
    category = rng.integers(0, 5, 2000)
    y = np.array([-1.0, -0.8, 1.0, 1.3, 0.9])[category] + rng.normal(0, 0.3, 2000)
    X = category[:, None].astype(float)
    common = dict(n_estimators=3, learning_rate=0.5, max_depth=2, reg_lambda=1.0,
                  min_child_weight=1.0, base_score=0.0)
    reference = xgboost.XGBRegressor(
        **common, tree_method="hist", max_cat_to_onehot=6, enable_categorical=True,
        feature_types=["c"]).fit(X, y)
    ours = GradientBoostingRegressor(**common, categorical_features=[0], max_cat_to_onehot=6)
    partitions = GradientBoostingRegressor(**common, categorical_features=[0],
                                           max_cat_to_onehot=0)
    assert np.abs(ours.fit(X, y).predict(X) - reference.predict(X)).max() < 1e-5
    assert np.abs(partitions.fit(X, y).predict(X) - reference.predict(X)).max() > 0.03


def test_max_cat_threshold_caps_the_categories_sent_one_way():
    """The isolated set {1, 4, 7} needs 3 categories on one side: allowed by a cap of 3, not by
    2, whose best stump sends at most 2 of the 10 one way."""
    X, y = _isolated_set_data()
    for cap, allowed in ((3, True), (2, False)):
        model = GradientBoostingClassifier(
            n_estimators=1, max_depth=1, learning_rate=1.0, categorical_features=[0],
            max_cat_threshold=cap, cat_smooth=0.0, cat_l2=0.0, min_data_per_group=0).fit(X, y)
        left = _left_categories(model.trees_[0][0])
        assert min(len(left), N_CATEGORIES - len(left)) <= cap
        assert (left in (set(ISOLATED), set(range(N_CATEGORIES)) - set(ISOLATED))) == allowed


def _many_levels(kind, seed=0):
    """640 levels: 40 frequent ones (100 rows each, y = level parity) and 600 rare ones (0 to
    7 rows, y = 1 mostly), as pandas labels or as numeric codes 300..939; a noise column."""
    rng = np.random.default_rng(seed)
    level = np.concatenate([np.repeat(np.arange(40), 100), rng.integers(40, 640, 2000)])
    y = np.where(level < 40, level % 2, rng.random(len(level)) < 0.8).astype(int)
    noise = rng.normal(size=len(level))
    if kind == "pandas":
        labels = pd.Categorical([f"L{v:03d}" for v in level])
        return pd.DataFrame({"id": labels, "noise": noise}), y, level
    return np.column_stack([level + 300.0, noise]), y, level


def _raw_values(X, level, rows):
    """Rows of X whose level column holds `level` (NaN: missing)."""
    if isinstance(X, pd.DataFrame):
        out = X.iloc[rows].copy()
        out["id"] = pd.Categorical([None if np.isnan(level) else f"L{int(level):03d}"] * len(rows))
        return out
    out = X[rows].copy()
    out[:, 0] = level + 300.0
    return out


@pytest.mark.parametrize("kind", ["pandas", "codes"])
def test_more_than_255_levels_keep_the_frequent_ones_and_group_the_rare(kind):
    """As LightGBM: the 254 most frequent levels keep a category each and the rarer share one;
    the trees read raw values (prediction) as the binned codes of fit; a level not seen at fit
    follows the missing values."""
    X, y, level = _many_levels(kind)
    model = GradientBoostingClassifier(n_estimators=10, max_depth=3,
                                       categorical_features=[0]).fit(X, y)
    values, category = model._bin_mapper.category_maps_[0]
    assert model._bin_mapper.n_bins_[0] == 255 and len(values) == len(np.unique(level))
    counts = np.bincount(np.searchsorted(np.unique(level), level))
    shared = category == 254
    assert shared.sum() == len(values) - 254
    assert counts[shared].max() <= counts[~shared].min()
    assert len(np.unique(category[~shared])) == 254
    frequent = level < 40
    assert np.mean(model.predict(X)[frequent] == y[frequent]) == 1.0
    numeric = encode_for_predict(model, X)
    codes = model._bin_mapper.transform(np.asarray(numeric, dtype=float), order="C")
    binned = model.init_raw_[0] + sum(tree.predict_binned(codes)[:, 0]
                                      for round_trees in model.trees_ for tree in round_trees)
    assert np.abs(model.decision_function(X) - binned).max() < 1e-9
    rows = np.arange(5)
    missing = model.predict_proba(_raw_values(X, np.nan, rows))
    assert model.predict_proba(_raw_values(X, 5000.0, rows)) == pytest.approx(missing)


def test_a_many_level_numeric_column_fits_where_it_failed():
    """The job of issue 38: values such as 547.0 in a column marked categorical used to stop
    the fit ("categories must be whole numbers 0..254"); XGBoost fits it, and so do we."""
    X, y, _ = _many_levels("codes")
    X[::7, 0] += 0.5  # fractional and negative values are categories too
    X[::11, 0] *= -1
    model = RandomForestClassifier(n_estimators=3, max_depth=4, categorical_features=[0])
    assert model.fit(X, y).score(X, y) > 0.6


def _churn_like(seed, n=3000):
    """A telecom-churn-like table (the shape of issue 38's): churn by rules on the minutes, the
    service calls and an international plan (2 levels), 5% of the labels flipped; a 51-level
    `state` and a 3-level `area` that are pure noise; about 20% positives."""
    rng = np.random.default_rng(seed)
    minutes = rng.normal(180, 54, n)
    calls = rng.poisson(1.6, n)
    plan = rng.random(n) < 0.1
    international = rng.normal(10, 2.8, n)
    churn = ((minutes > 250) | ((calls >= 4) & (minutes < 160))
             | (plan & (international > 12)))
    y = (churn ^ (rng.random(n) < 0.05)).astype(int)
    X = pd.DataFrame({"state": pd.Categorical(rng.integers(0, 51, n)), "minutes": minutes,
                      "calls": calls, "plan": pd.Categorical(plan.astype(int)),
                      "international": international,
                      "area": pd.Categorical(rng.integers(0, 3, n))})
    return X, y


def _as_ordinal(X):
    return X.apply(lambda column: column.cat.codes if column.dtype == "category" else column)


def churn_like_errors(seeds, **params):
    """Test errors (%) per seed of GBT native, GBT on ordinal codes and XGBoost native
    (enable_categorical, hist) on _churn_like tables, 2/3 train, 1/3 test."""
    import xgboost
    from sklearn.model_selection import train_test_split

    errors = {"native": [], "ordinal": [], "xgboost": []}
    for seed in seeds:
        X, y = _churn_like(seed)
        X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=1 / 3,
                                                            stratify=y, random_state=seed)
        native = GradientBoostingClassifier(random_state=seed, **params).fit(X_train, y_train)
        ordinal = GradientBoostingClassifier(random_state=seed).fit(_as_ordinal(X_train),
                                                                    y_train)
        reference = xgboost.XGBClassifier(tree_method="hist", enable_categorical=True,
                                          random_state=seed, n_jobs=1).fit(X_train, y_train)
        errors["native"].append(100 * (1 - native.score(X_test, y_test)))
        errors["ordinal"].append(100 * (1 - ordinal.score(_as_ordinal(X_test), y_test)))
        errors["xgboost"].append(100 * (1 - reference.score(X_test, y_test)))
    return {name: float(np.median(values)) for name, values in errors.items()}


NOISE_COLUMN_SETTING = {"cat_smooth": 10.0, "cat_l2": 100.0, "min_data_per_group": 100}


def test_the_noise_column_setting_keeps_native_splits_level_on_a_noise_column():
    """Issue 38: a 51-level noise column made native splits worse than ordinal codes and than
    XGBoost's native splits (5.4% against 4.2% on the real churn table). With the setting that
    docs/categorical_splits.md gives for a weak many-level column (the defaults before issue
    67), the median test error over 5 seeds (1000 test rows each) is at most 0.6 points (6
    rows; the binomial sd of a 6% error on 1000 rows is 0.75 points a seed, about 0.4 for a
    median of 5) above either. Without regularization native is 1.0-1.4 points above both
    (seeds 0-14, measured); the defaults (issue 67: tuned for levels that carry signal) are
    0.9 above XGBoost here (6.7% against 5.8%), which the docs state."""
    median = churn_like_errors(range(5), **NOISE_COLUMN_SETTING)
    assert median["native"] <= median["ordinal"] + 0.6
    assert median["native"] <= median["xgboost"] + 0.6


def _seatbelts_like(seed, n_states=51, n_years=15):
    """A state-by-year panel shaped as AER's USSeatBelts (51 states x 15 years: about 12
    training rows a state in 5-fold): y is a state level (sd 1) plus a year trend, an income
    effect and a 2-level law, noise sd 0.3."""
    rng = np.random.default_rng(seed)
    state = np.repeat(np.arange(n_states), n_years)
    year = np.tile(np.arange(n_years), n_states).astype(float)
    income = rng.normal(0, 1, n_states)[state] + 0.1 * year + rng.normal(0, 0.3, len(state))
    law = (rng.random(len(state)) < 0.3).astype(int)
    level = rng.normal(0, 1.0, n_states)
    y = level[state] - 0.08 * year - 0.3 * income + 0.2 * law + rng.normal(0, 0.3, len(state))
    X = pd.DataFrame({"state": pd.Categorical(state), "year": year, "income": income,
                      "law": pd.Categorical(law)})
    return X, y


def seatbelts_like_rmse(seeds, **params):
    """Mean test RMSE over 5-fold CV for each seed of GBT native (defaults, or `params`) and
    XGBoost native (hist, enable_categorical, its defaults; max_cat_threshold 33, the lab's
    translation of ours) on _seatbelts_like tables."""
    import xgboost
    from sklearn.model_selection import KFold

    rmse = {"native": [], "xgboost": []}
    for seed in seeds:
        X, y = _seatbelts_like(seed)
        for train, test in KFold(5, shuffle=True, random_state=seed).split(X):
            ours = GradientBoostingRegressor(**params).fit(X.iloc[train], y[train])
            reference = xgboost.XGBRegressor(tree_method="hist", enable_categorical=True,
                                             max_cat_threshold=33, n_jobs=1)
            reference.fit(X.iloc[train], y[train])
            for name, model in (("native", ours), ("xgboost", reference)):
                residual = model.predict(X.iloc[test]) - y[test]
                rmse[name].append(float(np.sqrt(np.mean(residual ** 2))))
    return {name: float(np.mean(values)) for name, values in rmse.items()}


def test_levels_of_about_twelve_rows_are_fitted_as_well_as_by_xgboost():
    """Issue 67: on USSeatBelts (51 states, about 12 training rows a state) the defaults of
    issue 38 (cat_smooth 10, cat_l2 100, min_data_per_group 100) were 1.13 times XGBoost
    native's RMSE, worse on 5 of 5 seeds: they drop or over-shrink levels that small. With the
    defaults the RMSE over 2 seeds x 5 folds is at most 5% above XGBoost's (the fold-to-fold
    ratio varies by about 3%, so 1% for the mean of 10). Measured: defaults 0.98 of
    XGBoost's; the old defaults 1.34 (every one of 15 folds worse)."""
    rmse = seatbelts_like_rmse(range(2))
    assert rmse["native"] <= 1.05 * rmse["xgboost"]
