"""Bagging, random forests and extra trees on the engine (Straka, "Bagging", "Random Forests",
"Extra Trees"; Breiman 1996, 2001; Geurts et al. 2006).

Each tree is grown (to full depth by default) on a bootstrap sample of the rows (n draws, or
int(max_samples * n) as scikit-learn's `max_samples`), or on all of them; a random forest
scores `max_features` random features at each node, extra trees also draw each feature's
threshold at random, bagging uses every feature. The ensemble averages the trees'
leaf values: class frequencies, or means.

The trees are grown in parallel, one per thread, each one node at a time (cart_grower). The
gradient grower's batched level passes, which share one tree's large nodes among the threads,
were not adopted for forests, from measurements (100 trees, 80k rows, 2026-11-24): 98% of a
forest tree's 5,200 split nodes have under 1,000 rows, nodes of more than one histogram chunk
(32k rows) hold 13% of the row visits, and a node draws its own features (no histogram
subtraction), so a level pass would add a synchronisation per level (30+ levels) for little
work to share, while tree-level threads already keep both cores busy (1.7x over one thread).
"""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
from joblib import effective_n_jobs
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.metrics import accuracy_score, r2_score
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ensembles.engine.binning import MAX_BINS, BinMapper
from ensembles.engine.bootstrap import bootstrap_counts
from ensembles.engine.cart_grower import CartParams
from ensembles.engine.splitting import ENTROPY, GINI, NEWTON
from ensembles.engine.threads import engine_threads
from ensembles.methods.cart import CartGrower
from ensembles.methods.documentation import (
    FOREST,
    FOREST_CLASSIFIER_ATTRIBUTES,
    FOREST_REGRESSOR_ATTRIBUTES,
    numpydoc_sections,
)
from ensembles.methods.packing import packed_trees
from ensembles.methods.validation import (
    check_tree_size,
    encode_classes,
    resolve_max_features,
    validate_prediction_data,
    validate_regression_target,
    validate_training_data,
)
from ensembles.progress import progress

CLASSIFICATION_CRITERIA = {"gini": GINI, "entropy": ENTROPY, "log_loss": ENTROPY}
SEED_RANGE = np.iinfo(np.int32).max


def _check_tree_params(estimator) -> None:
    if not (isinstance(estimator.n_estimators, (int, np.integer)) and estimator.n_estimators >= 1):
        raise ValueError(f"n_estimators must be an int >= 1, got {estimator.n_estimators!r}")
    check_tree_size(estimator)
    if not estimator.min_samples_split >= 2:
        raise ValueError(f"min_samples_split must be >= 2, got {estimator.min_samples_split!r}")
    if not estimator.min_samples_leaf >= 1:
        raise ValueError(f"min_samples_leaf must be >= 1, got {estimator.min_samples_leaf!r}")


def _check_max_samples(estimator) -> None:
    """max_samples as scikit-learn's forests take a float: None (n draws) or a share in (0, 1],
    for a bootstrap only."""
    max_samples = estimator.max_samples
    if max_samples is None:
        return
    if not (isinstance(max_samples, (float, np.floating)) and 0.0 < max_samples <= 1.0):
        raise ValueError(f"max_samples must be None or a float in (0, 1], got {max_samples!r}")
    if not estimator.bootstrap:
        raise ValueError("max_samples is the size of a bootstrap: set bootstrap=True or "
                         "max_samples=None")


def _n_draws(n_samples: int, max_samples: float | None) -> int:
    """Rows drawn with replacement per tree: n, or max(int(max_samples * n), 1) as scikit-learn's
    forests draw (sklearn.ensemble._bootstrap._get_n_samples_bootstrap, unweighted)."""
    if max_samples is None:
        return n_samples
    return max(int(max_samples * n_samples), 1)


def _bootstrap_counts(seed: int, n_samples: int, max_samples: float | None) -> np.ndarray:
    """How often each row is drawn: _n_draws draws with replacement (scikit-learn's draws for
    this seed: engine.bootstrap)."""
    return bootstrap_counts(seed, n_samples, _n_draws(n_samples, max_samples))


def _weighted_rows(weights: np.ndarray, unit_stats: np.ndarray) -> tuple:
    """(the int32 rows of positive weight, every row's statistics times its weight)."""
    return np.flatnonzero(weights > 0).astype(np.int32), unit_stats * weights[:, None]


class _BaseForest(BaseEstimator):
    """fit/predict shared by the forest family. Subclasses say how y becomes per-sample
    statistics (`_unit_stats`), how many features a node scores (`_n_candidates`) and whether
    thresholds are drawn at random (`_random_splits`)."""

    _random_splits = False

    def _n_candidates(self, n_features: int) -> int:
        return resolve_max_features(self.max_features, n_features)

    def fit(self, X, y, sample_weight=None):
        X, y, sample_weight = validate_training_data(self, X, y, sample_weight)
        _check_tree_params(self)
        _check_max_samples(self)
        if self.oob_score and not self.bootstrap:
            raise ValueError("oob_score=True needs bootstrap=True")
        unit_stats, criterion = self._unit_stats(y)
        self._bin_mapper = BinMapper(self.max_bins, categorical=self.is_categorical_).fit(
            X[sample_weight > 0])
        codes = self._bin_mapper.transform(X, order="C")
        params = CartParams(
            max_features=self._n_candidates(X.shape[1]), criterion=criterion,
            max_depth=self.max_depth or 0, max_leaves=self.max_leaf_nodes or 0,
            min_samples_split=self.min_samples_split, min_samples_leaf=self.min_samples_leaf,
            random_splits=self._random_splits)
        grower = CartGrower(self._bin_mapper, params, *unit_stats.shape)
        seeds = check_random_state(self.random_state).randint(SEED_RANGE, size=self.n_estimators)
        self.estimators_ = self._grow_trees(grower, codes, unit_stats, sample_weight, seeds)
        packed_trees(self, "estimators", self.estimators_)  # packed for prediction once
        if self.oob_score:
            self._set_oob_score(codes, y, seeds)
        return self

    def _grow_trees(self, grower, codes, unit_stats, sample_weight, seeds):
        """The trees of `seeds` in their order, grown on effective_n_jobs(n_jobs) threads
        (joblib's meaning of n_jobs; the kernels release the GIL). A thread pool of the
        standard library, not joblib's threading backend: that one made a pool per fit (3-8 ms
        before the first tree) and looked for finished trees every 10 ms, a tenth of a
        100-tree fit on 3,000 rows (docs/small_tables.md). Without bootstrap every tree grows
        on the same rows and statistics, made once."""
        n_threads = max(1, min(effective_n_jobs(self.n_jobs), len(seeds)))
        shared = None if self.bootstrap else _weighted_rows(sample_weight, unit_stats)
        with ThreadPoolExecutor(n_threads) as pool:
            grown = [pool.submit(self._grow_tree, grower, codes, unit_stats, sample_weight, seed,
                                 shared)
                     for seed in seeds]
            try:
                return [tree.result()
                        for tree in progress(grown, self.n_estimators, self.verbose, "tree")]
            finally:  # after an error, the trees not started are not grown
                for tree in grown:
                    tree.cancel()

    def _grow_tree(self, grower, codes, unit_stats, sample_weight, seed, shared):
        """One tree on the rows of positive weight (sample weight x bootstrap count), each
        row's statistics weighted (`shared`: those rows and statistics, without bootstrap).
        The counts become the weights in place and are dropped before the tree grows: fewer
        temporaries while two threads grow (within 1 MB of the bench forest's peak, measured)."""
        if shared is None:
            counts = _bootstrap_counts(seed, codes.shape[0], self.max_samples)
            counts *= sample_weight
            shared = _weighted_rows(counts, unit_stats)
            del counts
        rows, stats = shared
        return grower.grow(codes, stats, rows, seed)

    def _checked_trees(self, X):
        """(X validated for prediction, the packed trees) of a fitted forest."""
        check_is_fitted(self, "estimators_")
        return validate_prediction_data(self, X), packed_trees(self, "estimators",
                                                               self.estimators_)

    def _mean_tree_output(self, X):
        X, packed = self._checked_trees(X)
        total = np.zeros((X.shape[0], self.estimators_[0].value.shape[1]))
        with engine_threads(self.n_jobs):
            packed.add_to(X, total)
        return total / len(self.estimators_)

    def tree_outputs(self, X, first=0, stop=None):
        """(n_trees, n_samples, n_outputs): the leaf values on X of trees first .. stop - 1
        (default: every tree), class frequencies or means, each tree's apart, in one pass over
        X (the ensemble's members one by one: their mean is _mean_tree_output)."""
        X, packed = self._checked_trees(X)
        stop = len(self.estimators_) if stop is None else stop
        with engine_threads(self.n_jobs):
            return packed.tree_values(X, first, stop)

    def _oob_mean_output(self, codes, seeds):
        """Mean tree output over the trees whose bootstrap left the row out (NaN if none did).
        Each tree's bootstrap is drawn again from its seed, as scikit-learn does: kept, the
        counts of 100 trees of 80k rows were 64 MB, most of what a fit added."""
        total = np.zeros((codes.shape[0], self.estimators_[0].value.shape[1]))
        n_trees = np.zeros(codes.shape[0])
        for tree, seed in zip(self.estimators_, seeds, strict=True):
            counts = _bootstrap_counts(seed, codes.shape[0], self.max_samples)
            out_of_bag = counts == 0
            total[out_of_bag] += tree.predict_binned(codes[out_of_bag])
            n_trees += out_of_bag
        with np.errstate(invalid="ignore", divide="ignore"):
            return total / n_trees[:, None], n_trees > 0

    @property
    def feature_importances_(self):
        """Mean over trees of each tree's normalized split gains (scikit-learn's MDI)."""
        check_is_fitted(self, "estimators_")
        per_tree = [tree.feature_gains(self.n_features_in_) for tree in self.estimators_]
        normalized = [g / g.sum() for g in per_tree if g.sum() > 0]
        if not normalized:
            return np.zeros(self.n_features_in_)
        mean = np.mean(normalized, axis=0)
        return mean / mean.sum()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags


class _ForestClassifier(ClassifierMixin, _BaseForest):
    """Trees of Gini (or entropy) impurity over class-weight histograms."""

    def _unit_stats(self, y):
        if self.criterion not in CLASSIFICATION_CRITERIA:
            raise ValueError(f"unknown criterion {self.criterion!r}; choose one of: "
                             f"{', '.join(CLASSIFICATION_CRITERIA)}")
        self.classes_, codes = encode_classes(y)
        one_hot = np.zeros((len(codes), len(self.classes_)))
        one_hot[np.arange(len(codes)), codes] = 1.0
        return one_hot, CLASSIFICATION_CRITERIA[self.criterion]

    def predict_proba(self, X):
        """Mean of the trees' class frequencies, each row rescaled to sum to 1 exactly (so
        that no probability exceeds 1 by rounding)."""
        proba = self._mean_tree_output(X)
        return proba / proba.sum(axis=1, keepdims=True)

    def predict(self, X):
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]

    def _set_oob_score(self, codes, y, seeds):
        proba, has_oob = self._oob_mean_output(codes, seeds)
        self.oob_decision_function_ = proba
        predicted = self.classes_[np.argmax(proba[has_oob], axis=1)]
        self.oob_score_ = accuracy_score(y[has_oob], predicted)


class _ForestRegressor(RegressorMixin, _BaseForest):
    """Squared-error trees: channels (g, h, y^2) = (-y, 1, y^2), so NEWTON with lambda = 0 is
    the decrease of the sum of squares and the leaf the weighted mean."""

    def _unit_stats(self, y):
        y = validate_regression_target(y)
        return np.column_stack([-y, np.ones_like(y), y * y]), NEWTON

    def predict(self, X):
        return self._mean_tree_output(X)[:, 0]

    def _set_oob_score(self, codes, y, seeds):
        prediction, has_oob = self._oob_mean_output(codes, seeds)
        self.oob_prediction_ = prediction[:, 0]
        self.oob_score_ = r2_score(y[has_oob], self.oob_prediction_[has_oob])


@numpydoc_sections(FOREST, FOREST_CLASSIFIER_ATTRIBUTES, ("breiman2001", "straka"))
class RandomForestClassifier(_ForestClassifier):
    """A random forest classifier: trees of bootstrap samples, random features at each node.

    Each tree is grown on a bootstrap sample of the rows, scoring `max_features` features
    drawn at random at each node, to full depth by default [1]_ [2]_; the forest averages the
    trees' leaf class frequencies, p(k | x) = (1/M) sum_m p_m(k | x), and predicts their argmax.
    Splits are found on binned features (`max_bins` quantile bins).

    Examples
    --------
    The out-of-bag accuracy comes with the fit:

    >>> from sklearn.datasets import make_classification
    >>> from ensembles import RandomForestClassifier
    >>> X, y = make_classification(n_samples=100, n_features=5, random_state=0)
    >>> forest = RandomForestClassifier(n_estimators=10, oob_score=True, random_state=0).fit(X, y)
    >>> forest.predict(X[:3]), round(forest.oob_score_, 2)
    (array([0, 0, 1]), 0.9)
    """

    def __init__(self, n_estimators=100, *, criterion="gini", max_depth=None,
                 max_leaf_nodes=None, min_samples_split=2, min_samples_leaf=1,
                 max_features="sqrt", bootstrap=True, max_samples=None, oob_score=False,
                 max_bins=MAX_BINS,
                 categorical_features="from_dtype", random_state=None, n_jobs=None, verbose=0):
        self.n_estimators = n_estimators
        self.criterion = criterion
        self.max_depth = max_depth
        self.max_leaf_nodes = max_leaf_nodes
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.max_features = max_features
        self.bootstrap = bootstrap
        self.max_samples = max_samples
        self.oob_score = oob_score
        self.max_bins = max_bins
        self.categorical_features = categorical_features
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose


@numpydoc_sections(FOREST, FOREST_REGRESSOR_ATTRIBUTES, ("breiman2001", "straka"))
class RandomForestRegressor(_ForestRegressor):
    """A random forest regressor: squared-error trees of bootstrap samples, random features.

    Each tree is grown on a bootstrap sample of the rows, scoring `max_features` features
    drawn at random at each node [1]_ [2]_; a split maximizes the decrease of the weighted sum of
    squares, a leaf predicts its rows' weighted mean, the forest the mean of its trees. The
    default max_features=1.0 scores every feature, as scikit-learn's.

    Examples
    --------
    Fewer features per node than the default (all of them, as scikit-learn's):

    >>> from ensembles import RandomForestRegressor
    >>> from sklearn.datasets import make_friedman1
    >>> X, y = make_friedman1(n_samples=100, random_state=0)
    >>> forest = RandomForestRegressor(n_estimators=10, max_features="sqrt", random_state=0)
    >>> forest.fit(X, y).predict(X[:2]).round(2)
    array([16.83, 19.22])
    """

    def __init__(self, n_estimators=100, *, max_depth=None, max_leaf_nodes=None,
                 min_samples_split=2, min_samples_leaf=1, max_features=1.0, bootstrap=True,
                 max_samples=None, oob_score=False, max_bins=MAX_BINS,
                 categorical_features="from_dtype", random_state=None, n_jobs=None, verbose=0):
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.max_leaf_nodes = max_leaf_nodes
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.max_features = max_features
        self.bootstrap = bootstrap
        self.max_samples = max_samples
        self.oob_score = oob_score
        self.max_bins = max_bins
        self.categorical_features = categorical_features
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose


@numpydoc_sections(FOREST, FOREST_CLASSIFIER_ATTRIBUTES, ("geurts2006", "straka"))
class ExtraTreesClassifier(RandomForestClassifier):
    """Extremely randomized trees for classification: random features, random thresholds.

    A random forest whose split of each drawn feature is a threshold u drawn uniformly
    between the node's smallest and largest value of it [1]_ [2]_; the best of the `max_features`
    random splits is kept. Trees see every row by default (bootstrap=False).

    Examples
    --------
    The noise feature gets the smallest importance:

    >>> import numpy as np
    >>> from ensembles import ExtraTreesClassifier
    >>> X = np.random.default_rng(0).normal(size=(100, 3))
    >>> y = (X[:, 0] + X[:, 1] > 0).astype(int)
    >>> trees = ExtraTreesClassifier(n_estimators=10, random_state=0).fit(X, y)
    >>> trees.feature_importances_.round(2)
    array([0.43, 0.4 , 0.16])
    """

    _random_splits = True

    def __init__(self, n_estimators=100, *, criterion="gini", max_depth=None,
                 max_leaf_nodes=None, min_samples_split=2, min_samples_leaf=1,
                 max_features="sqrt", bootstrap=False, max_samples=None, oob_score=False,
                 max_bins=MAX_BINS,
                 categorical_features="from_dtype", random_state=None, n_jobs=None, verbose=0):
        super().__init__(n_estimators, criterion=criterion, max_depth=max_depth,
                         max_leaf_nodes=max_leaf_nodes, min_samples_split=min_samples_split,
                         min_samples_leaf=min_samples_leaf, max_features=max_features,
                         bootstrap=bootstrap, max_samples=max_samples, oob_score=oob_score,
                         max_bins=max_bins,
                         categorical_features=categorical_features,
                         random_state=random_state, n_jobs=n_jobs, verbose=verbose)


@numpydoc_sections(FOREST, FOREST_REGRESSOR_ATTRIBUTES, ("geurts2006", "straka"))
class ExtraTreesRegressor(RandomForestRegressor):
    """Extremely randomized trees for regression: random features, random thresholds.

    A random forest regressor whose split of each drawn feature is a threshold u drawn
    uniformly between the node's smallest and largest value of it [1]_ [2]_; the best of the
    `max_features` random splits (decrease of the sum of squares) is kept. Trees see every row by
    default (bootstrap=False).

    Examples
    --------
    A smooth curve from random thresholds, y = x^2 at x = 0.5:

    >>> import numpy as np
    >>> from ensembles import ExtraTreesRegressor
    >>> X = np.linspace(0, 1, 100).reshape(-1, 1)
    >>> trees = ExtraTreesRegressor(n_estimators=10, random_state=0).fit(X, X[:, 0] ** 2)
    >>> trees.predict([[0.5]]).round(2)
    array([0.24])
    """

    _random_splits = True

    def __init__(self, n_estimators=100, *, max_depth=None, max_leaf_nodes=None,
                 min_samples_split=2, min_samples_leaf=1, max_features=1.0, bootstrap=False,
                 max_samples=None, oob_score=False, max_bins=MAX_BINS,
                 categorical_features="from_dtype", random_state=None, n_jobs=None, verbose=0):
        super().__init__(n_estimators, max_depth=max_depth, max_leaf_nodes=max_leaf_nodes,
                         min_samples_split=min_samples_split,
                         min_samples_leaf=min_samples_leaf, max_features=max_features,
                         bootstrap=bootstrap, max_samples=max_samples, oob_score=oob_score,
                         max_bins=max_bins,
                         categorical_features=categorical_features,
                         random_state=random_state, n_jobs=n_jobs, verbose=verbose)


@numpydoc_sections(FOREST, FOREST_CLASSIFIER_ATTRIBUTES, ("breiman1996", "straka"))
class BaggingClassifier(_ForestClassifier):
    """Bootstrap aggregation of CART classification trees over every feature.

    Each tree is grown on a bootstrap sample of the rows and scores every feature at
    every node [1]_ [2]_; the ensemble averages the trees' class frequencies and predicts their
    argmax. A random forest with max_features=None.

    Examples
    --------
    Missing values have a bin of their own, here class 1's:

    >>> import numpy as np
    >>> from ensembles import BaggingClassifier
    >>> X = np.array([[0.0], [1.0], [np.nan], [3.0]] * 25)
    >>> y = np.array([0, 0, 1, 1] * 25)
    >>> bagging = BaggingClassifier(random_state=0).fit(X, y)
    >>> bagging.predict([[np.nan], [0.5]])
    array([1, 0])
    """

    def _n_candidates(self, n_features: int) -> int:
        return n_features

    def __init__(self, n_estimators=10, *, criterion="gini", max_depth=None,
                 max_leaf_nodes=None, min_samples_split=2, min_samples_leaf=1, bootstrap=True,
                 max_samples=None, oob_score=False, max_bins=MAX_BINS,
                 categorical_features="from_dtype", random_state=None, n_jobs=None, verbose=0):
        self.n_estimators = n_estimators
        self.criterion = criterion
        self.max_depth = max_depth
        self.max_leaf_nodes = max_leaf_nodes
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.bootstrap = bootstrap
        self.max_samples = max_samples
        self.oob_score = oob_score
        self.max_bins = max_bins
        self.categorical_features = categorical_features
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose


@numpydoc_sections(FOREST, FOREST_REGRESSOR_ATTRIBUTES, ("breiman1996", "straka"))
class BaggingRegressor(_ForestRegressor):
    """Bootstrap aggregation of squared-error CART trees over every feature.

    Each tree is grown on a bootstrap sample of the rows and scores every feature at
    every node [1]_ [2]_; the ensemble averages the trees' leaf means.

    Examples
    --------
    A pandas category column is split into sets of categories:

    >>> import pandas as pd
    >>> from ensembles import BaggingRegressor
    >>> X = pd.DataFrame({"city": pd.Categorical(["a", "b", "c", "a"] * 25)})
    >>> y = X["city"].map({"a": 1.0, "b": 5.0, "c": 1.0}).astype(float)
    >>> bagging = BaggingRegressor(n_estimators=5, random_state=0).fit(X, y)
    >>> bagging.predict(X[:3])
    array([1., 5., 1.])
    """

    def _n_candidates(self, n_features: int) -> int:
        return n_features

    def __init__(self, n_estimators=10, *, max_depth=None, max_leaf_nodes=None,
                 min_samples_split=2, min_samples_leaf=1, bootstrap=True, max_samples=None,
                 oob_score=False, max_bins=MAX_BINS,
                 categorical_features="from_dtype", random_state=None, n_jobs=None, verbose=0):
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.max_leaf_nodes = max_leaf_nodes
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.bootstrap = bootstrap
        self.max_samples = max_samples
        self.oob_score = oob_score
        self.max_bins = max_bins
        self.categorical_features = categorical_features
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose
