"""The same seed gives bit-identical predictions whatever the number of threads: parallel
kernels split work over fixed row chunks, nodes, features or trees, and add chunk sums in chunk
order. Every estimator that takes n_jobs is checked with the thread counts its fits really set
on a pool of at least two threads (AdaBoost is sequential: its rounds depend on each other and
it accepts n_jobs only for a uniform interface)."""

import threading
import time

import numba
import numpy as np
import pytest
from numba import njit, prange
from sklearn.datasets import load_wine, make_classification, make_friedman1

import ensembles
from ensembles.engine import threads
from ensembles.engine.binning import N_BIN_SLOTS
from ensembles.engine.gradient_grower import SHARED_LEVEL_WORK
from ensembles.engine.histogram import SERIAL_WORK
from ensembles.engine.threads import LOAD_CHECK_ROUNDS, SERIAL_TABLE, SHARED_TABLE
from ensembles.methods.forest import _BaseForest

CLASSIFIERS = ["RandomForestClassifier", "ExtraTreesClassifier", "BaggingClassifier",
               "LogitBoostClassifier", "L2BoostClassifier", "GradientBoostingClassifier"]
REGRESSORS = ["RandomForestRegressor", "ExtraTreesRegressor", "BaggingRegressor",
              "L2BoostRegressor", "GradientBoostingRegressor"]
SUBSAMPLING = {"GradientBoostingClassifier": dict(subsample=0.7, colsample_bynode=0.7),
               "GradientBoostingRegressor": dict(subsample=0.7, colsample_bytree=0.7),
               "L2BoostRegressor": dict(subsample=0.7), "L2BoostClassifier": dict(subsample=0.7)}


@njit(parallel=True)
def thread_ids(n: int) -> np.ndarray:
    """The numba thread that ran each of n loop iterations."""
    ids = np.empty(n, np.int64)
    for i in prange(n):
        ids[i] = numba.get_thread_id()
    return ids


@pytest.fixture
def thread_counts(monkeypatch):
    """Per fit, the threads it ran its work on: the count it set for the numba kernels of
    boosting (numba.set_num_threads), or the distinct threads that grew a forest's trees
    (joblib threads over trees; each tree held 10 ms so that both threads take some). First
    checks that two threads really run a parallel loop here: on one core, or with
    NUMBA_NUM_THREADS=1, comparing n_jobs=1 with n_jobs=2 would prove nothing."""
    assert numba.config.NUMBA_NUM_THREADS >= 2, "determinism needs a pool of 2 threads"
    previous = numba.get_num_threads()
    numba.set_num_threads(2)
    assert set(thread_ids(64)) == {0, 1}
    numba.set_num_threads(previous)
    counts, tree_threads = [], set()
    set_threads, grow_tree = numba.set_num_threads, _BaseForest._grow_tree

    def recording_set_threads(n: int) -> None:
        set_threads(n)
        counts.append(numba.get_num_threads())

    def recording_grow_tree(*args, **kwargs):
        tree_threads.add(threading.get_ident())
        time.sleep(0.01)
        return grow_tree(*args, **kwargs)

    monkeypatch.setattr(numba, "set_num_threads", recording_set_threads)
    monkeypatch.setattr(_BaseForest, "_grow_tree", recording_grow_tree)

    def threads_of(fit) -> int:
        counts.clear()
        tree_threads.clear()
        fit()
        return len(tree_threads) if tree_threads else counts[0]

    return threads_of


@pytest.mark.parametrize("name", CLASSIFIERS + REGRESSORS)
def test_predictions_do_not_depend_on_n_jobs(name, thread_counts):
    if name in CLASSIFIERS:
        X, y = load_wine(return_X_y=True)
        predict = "predict_proba"
    else:
        X, y = make_friedman1(n_samples=500, random_state=0)
        predict = "predict"
    params = dict(n_estimators=20, random_state=7, **SUBSAMPLING.get(name, {}))
    estimator_class = getattr(ensembles, name)
    one, two = estimator_class(n_jobs=1, **params), estimator_class(n_jobs=2, **params)
    assert thread_counts(lambda: one.fit(X, y)) == 1
    # boosting on a small table runs on one thread whatever n_jobs (threads.SERIAL_TABLE);
    # its parallel paths: test_gradient_trees_on_large_nodes_do_not_depend_on_n_jobs
    boosting = not name.startswith(("RandomForest", "ExtraTrees", "Bagging"))
    assert X.size < SERIAL_TABLE
    assert thread_counts(lambda: two.fit(X, y)) == (1 if boosting else 2)
    assert np.array_equal(getattr(one, predict)(X), getattr(two, predict)(X))
    again = estimator_class(n_jobs=2, **params).fit(X, y)
    assert np.array_equal(getattr(two, predict)(X), getattr(again, predict)(X))


@pytest.mark.parametrize("shape", [dict(max_depth=6), dict(grow_policy="lossguide", max_leaves=31,
                                                         max_depth=0)])
def test_gradient_trees_on_large_nodes_do_not_depend_on_n_jobs(shape, thread_counts):
    """150k rows: the root and the first levels are cut in row chunks (histogram.CHUNK_ROWS)
    whose sums are added in chunk order, and their partitions are chunk-parallel."""
    X, y = make_classification(n_samples=150_000, n_features=8, random_state=0)
    X[::13, 2] = np.nan
    params = dict(n_estimators=4, learning_rate=0.3, subsample=0.9, colsample_bynode=0.8,
                  random_state=3, **shape)
    one = ensembles.GradientBoostingClassifier(n_jobs=1, **params)
    two = ensembles.GradientBoostingClassifier(n_jobs=2, **params)
    assert thread_counts(lambda: one.fit(X, y)) == 1
    assert thread_counts(lambda: two.fit(X, y)) == 2
    assert np.array_equal(one.predict_proba(X), two.predict_proba(X))
    assert one.trees_[0][0].n_samples[0] > 4 * 32_768  # several chunks at the root


@pytest.mark.parametrize("sampling", [dict(subsample=0.8, colsample_bynode=0.8),
                                      dict(colsample_bynode=0.8)],
                         ids=["python_rounds", "compiled_rounds"])
def test_boosting_that_follows_the_load_does_not_depend_on_it(sampling, thread_counts,
                                                               monkeypatch):
    """A table between SERIAL_TABLE and SHARED_TABLE values runs on the cores idle at the
    start and at every LOAD_CHECK_ROUNDS-th round: here the load says 2, 1, 2, ... idle
    cores, so the fit changes its thread count mid-fit, and must still give the one-thread
    fit's trees; with rows subsampled the rounds run in Python, without in compiled calls
    between two looks at the load (methods.newton_rounds)."""
    X, y = make_classification(n_samples=8_200, n_features=16, random_state=0)
    X[::17, 3] = np.nan
    assert SERIAL_TABLE <= X.size < SHARED_TABLE
    looks = []

    def alternating_load() -> int:
        looks.append(None)
        return 2 if len(looks) % 2 else 1

    monkeypatch.setattr(threads, "idle_cores", alternating_load)
    params = dict(n_estimators=3 * LOAD_CHECK_ROUNDS, max_depth=5, random_state=5, **sampling)
    one = ensembles.GradientBoostingClassifier(n_jobs=1, **params)
    following = ensembles.GradientBoostingClassifier(n_jobs=2, **params)
    assert thread_counts(lambda: one.fit(X, y)) == 1
    set_counts, recording_set_threads = [], numba.set_num_threads
    monkeypatch.setattr(numba, "set_num_threads",
                        lambda n: (recording_set_threads(n), set_counts.append(n)))
    following.fit(X, y)
    assert len(looks) == 4  # at the start and before the 16th, 32nd and 48th rounds
    assert set_counts[:4] == [2, 1, 2, 1]  # then the count before the fit is restored
    assert np.array_equal(one.predict_proba(X), following.predict_proba(X))


@pytest.mark.parametrize("shape", [
    dict(max_depth=6, colsample_bynode=0.7),
    dict(grow_policy="lossguide", max_leaves=31, max_depth=0, min_child_samples=5),
    dict(max_depth=5, categorical_features=[0, 1], cat_l2=10.0, max_cat_to_onehot=8)])
def test_levels_shared_by_features_do_not_change_the_trees(shape, thread_counts, monkeypatch):
    """On a mid-sized table, a level whose histograms are built on one thread is shared by
    features between two threads (gradient_grower._grow_level_by_features): each feature's
    best split is kept and the splits are offered in feature order after, so the trees are
    the one-thread fit's, with a fraction of features per node, counts, and sets of
    categories (one-vs-rest for the 6-level column)."""
    X, y = make_classification(n_samples=10_000, n_features=20, n_informative=8,
                               random_state=1)
    X[:, 0] = np.floor(np.abs(X[:, 0]) * 5) % 12
    X[:, 1] = np.floor(np.abs(X[:, 1]) * 3) % 6
    X[::9, 5] = np.nan
    assert SERIAL_TABLE <= X.size < SHARED_TABLE
    monkeypatch.setattr(threads, "idle_cores", lambda: 2)
    params = dict(n_estimators=6, random_state=4, **shape)
    one = ensembles.GradientBoostingClassifier(n_jobs=1, **params)
    two = ensembles.GradientBoostingClassifier(n_jobs=2, **params)
    assert thread_counts(lambda: one.fit(X, y)) == 1
    assert thread_counts(lambda: two.fit(X, y)) == 2
    assert np.array_equal(one.predict_proba(X), two.predict_proba(X))
    # the root's children (nodes 1 and 2) were a shared level: the smaller one's histogram
    # below the serial threshold, the level's work above the shared one
    children = one.trees_[0][0].n_samples[1:3].astype(np.int64)
    assert children.min() * X.shape[1] < SERIAL_WORK
    assert ((children.min() + np.minimum(children, N_BIN_SLOTS).sum()) * X.shape[1]
            >= SHARED_LEVEL_WORK)
    if "categorical_features" in shape:
        assert any(tree.has_category_sets for round_trees in one.trees_ for tree in round_trees)


@pytest.mark.parametrize("name", ["RandomForestClassifier", "ExtraTreesClassifier",
                                  "GradientBoostingClassifier"])
def test_category_set_splits_do_not_depend_on_n_jobs(name, thread_counts):
    """A categorical column of 20 categories (150k rows for boosting: chunk-parallel
    partitions of set splits; fewer for the forests, whose trees run in parallel)."""
    n_rows = 150_000 if name.startswith("Gradient") else 5_000
    X, y = make_classification(n_samples=n_rows, n_features=8, random_state=0)
    X[:, 0] = np.floor(np.abs(X[:, 0]) * 7) % 20
    X[::11, 0] = np.nan
    params = dict(n_estimators=4, random_state=3, categorical_features=[0])
    if name.startswith("Gradient"):
        params["cat_l2"] = 10.0  # LightGBM's default: 4 rounds make set splits (100: none)
    estimator_class = getattr(ensembles, name)
    one, two = estimator_class(n_jobs=1, **params), estimator_class(n_jobs=2, **params)
    assert thread_counts(lambda: one.fit(X, y)) == 1
    assert thread_counts(lambda: two.fit(X, y)) == 2
    assert np.array_equal(one.predict_proba(X), two.predict_proba(X))
    rounds = one.trees_ if hasattr(one, "trees_") else [one.estimators_]
    trees = [tree for round_trees in rounds for tree in round_trees]
    assert any(tree.has_category_sets for tree in trees)
