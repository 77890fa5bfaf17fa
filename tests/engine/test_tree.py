import dataclasses
import pickle

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, make_friedman1
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from ensembles import RandomForestClassifier, RandomForestRegressor
from ensembles.engine.binning import MISSING_BIN, N_BIN_SLOTS, BinMapper
from ensembles.engine.cart_histogram import (
    build_drawn_histograms,
    clear_bins,
    node_bins,
    occupied_bins,
)
from ensembles.engine.cart_partition import partition_node
from ensembles.engine.categories import CATEGORY_SET, SET_WORDS
from ensembles.engine.tree import LEAF, MAX_SPLIT_FEATURES, ROW_BLOCK, PackedEnsemble, Tree


def _single_tree(estimator_class, **params):
    return estimator_class(n_estimators=1, bootstrap=False, max_features=None, random_state=0,
                           **params)


def _walk(tree, x):
    node = 0
    while tree.feature[node] != LEAF:
        value = x[tree.feature[node]]
        go_left = tree.missing_left[node] if np.isnan(value) else value <= tree.threshold[node]
        node = tree.left[node] if go_left else tree.right[node]
    return tree.value[tree.value_row[node]]


def _quantize(X, n_levels):
    """Each feature as its quantile level: <= 255 distinct values, so binning is exact."""
    levels = np.linspace(0, 1, n_levels)
    return np.column_stack([np.searchsorted(np.quantile(c, levels), c) for c in X.T]).astype(float)


def test_depth_one_tree_finds_the_known_split():
    rng = np.random.default_rng(0)
    X = np.round(rng.uniform(size=(400, 3)), 2)  # <= 255 distinct values: binning is exact
    y = (X[:, 1] > 0.6).astype(int)
    tree = _single_tree(RandomForestClassifier, max_depth=1).fit(X, y).estimators_[0]
    assert tree.feature[0] == 1
    between = (X[y == 0, 1].max(), X[y == 1, 1].min())
    assert between[0] <= tree.threshold[0] < between[1]
    assert tree.n_leaves == 2
    assert np.allclose(tree.value[tree.value_row[tree.left[0]]], [1, 0])
    assert np.allclose(tree.value[tree.value_row[tree.right[0]]], [0, 1])


def test_prediction_equals_a_brute_force_walk_with_missing_values():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(600, 5))
    y = X[:, 0] + np.sin(3 * X[:, 1]) + 0.1 * rng.normal(size=600)
    X[rng.uniform(size=X.shape) < 0.1] = np.nan
    forest = RandomForestRegressor(n_estimators=3, max_depth=6, random_state=0).fit(X, y)
    X_test = rng.normal(size=(200, 5))
    X_test[rng.uniform(size=X_test.shape) < 0.1] = np.nan
    for tree in forest.estimators_:
        expected = np.array([_walk(tree, x) for x in X_test])
        assert np.array_equal(tree.predict(X_test), expected)


def test_tree_structure_equals_sklearn_cart_on_training_data():
    """A single unbootstrapped tree with all features is CART: same leaves, same fit."""
    X, y = load_breast_cancer(return_X_y=True)
    X = _quantize(X, 200)
    ours = _single_tree(RandomForestClassifier, max_depth=4).fit(X, y)
    reference = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y)
    assert ours.estimators_[0].n_leaves == reference.get_n_leaves()
    assert np.allclose(ours.predict_proba(X), reference.predict_proba(X))


@pytest.mark.parametrize("min_samples_leaf", [1, 5])
def test_regression_tree_equals_sklearn_cart_on_training_data(min_samples_leaf):
    X, y = make_friedman1(n_samples=500, random_state=0)
    X = np.round(X, 2)
    ours = _single_tree(RandomForestRegressor, max_depth=5,
                        min_samples_leaf=min_samples_leaf).fit(X, y)
    reference = DecisionTreeRegressor(max_depth=5, min_samples_leaf=min_samples_leaf,
                                      random_state=0).fit(X, y)
    assert ours.estimators_[0].n_leaves == reference.get_n_leaves()
    assert np.allclose(ours.predict(X), reference.predict(X))


def _binned_node(seed, n_stats):
    """Codes with missing values, per-sample statistics, and a node: scattered rows."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 40, size=(300, 6)).astype(np.uint8)
    codes[rng.uniform(size=codes.shape) < 0.1] = MISSING_BIN
    stats = rng.uniform(0.0, 2.0, size=(300, n_stats))
    rows = rng.permutation(300)[:120].astype(np.int32)
    return codes, stats, rows


@pytest.mark.parametrize("seed", range(4))
def test_node_bins_lists_every_code_a_node_takes_but_missing_in_order(seed):
    """node_bins (a bitmap of four 64-bit words) against numpy's unique codes, over the whole
    code range: codes at the words' edges (63, 64, 127, 128, 191, 192, 254), the missing code
    255 in the last word's top bit, nodes of 1 to 60 rows."""
    rng = np.random.default_rng(seed)
    edges = np.array([0, 63, 64, 127, 128, 191, 192, 254, MISSING_BIN])
    codes = np.concatenate([edges, rng.integers(0, 256, size=291)]).astype(np.uint8)[:, None]
    rows = rng.permutation(300).astype(np.int32)
    bins = np.zeros(N_BIN_SLOTS, dtype=np.int32)
    for n_rows in (1, 2, 9, 60):
        for start in range(0, 300 - n_rows, 37):
            node = codes[rows[start:start + n_rows], 0]
            expected = np.unique(node[node != MISSING_BIN])
            n_occupied = node_bins(codes, rows, start, start + n_rows, 0, bins)
            assert np.array_equal(bins[:n_occupied], expected)


@pytest.mark.parametrize("n_stats", [2, 3])
def test_drawn_histograms_equal_numpy_sums_in_row_order(n_stats):
    codes, stats, rows = _binned_node(0, n_stats)
    features = np.array([4, 1, 3, 0, 5, 2])
    hist = np.zeros((6, N_BIN_SLOTS, n_stats + 1))
    build_drawn_histograms(codes, rows, 10, 110, stats, features, 1, 4, hist)
    node = rows[10:110]
    for k in range(1, 4):
        expected = np.zeros((N_BIN_SLOTS, n_stats + 1))
        for row in node:  # one row at a time, in partition order: the same rounding
            expected[codes[row, features[k]], :-1] += stats[row]
            expected[codes[row, features[k]], -1] += 1
        assert np.array_equal(hist[k], expected)
        occupied = np.unique(codes[node, features[k]])
        occupied = occupied[occupied != MISSING_BIN]
        bins = np.zeros(N_BIN_SLOTS, dtype=np.int32)
        assert np.array_equal(bins[:occupied_bins(hist[k], 40, n_stats, bins)], occupied)
        bins[:] = 0
        assert np.array_equal(bins[:node_bins(codes, rows, 10, 110, features[k], bins)],
                              occupied)
        clear_bins(hist[k], bins, len(occupied))
    assert not hist.any()


@pytest.mark.parametrize("missing_left", [False, True])
def test_partition_is_stable_and_sums_the_left_rows(missing_left):
    codes, stats, rows = _binned_node(1, 2)
    partition = rows.copy()
    left_sums = np.zeros(3)
    n_left = partition_node(codes, 2, 17, missing_left, np.zeros(SET_WORDS, dtype=np.uint32),
                            partition, np.empty_like(partition), 20, 100, stats, left_sums)
    node = rows[20:100]
    code = codes[node, 2]
    goes_left = np.where(code == MISSING_BIN, missing_left, code <= 17)
    assert n_left == goes_left.sum()
    assert np.array_equal(partition[20:100], np.concatenate([node[goes_left], node[~goes_left]]))
    assert np.array_equal(partition[:20], rows[:20])
    assert np.array_equal(partition[100:], rows[100:])
    expected = np.zeros(2)
    for row in node[goes_left]:
        expected += stats[row]
    assert np.array_equal(left_sums, [*expected, n_left])


@pytest.mark.parametrize("max_depth", [3, None])
def test_ensemble_prediction_is_the_sum_of_brute_force_walks_with_missing_values(max_depth):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(800, 5))
    y = X[:, 0] + np.sin(3 * X[:, 1]) + 0.1 * rng.normal(size=800)
    X[rng.uniform(size=X.shape) < 0.1] = np.nan
    forest = RandomForestRegressor(n_estimators=4, max_depth=max_depth, random_state=0).fit(X, y)
    assert any(not tree.missing_left[tree.feature >= 0].all() for tree in forest.estimators_)
    n_test = 5 * ROW_BLOCK + 22  # blocks in groups of 1, 2 and 6, the last block partial
    X_test = rng.normal(size=(n_test, 5))
    row = np.arange(n_test)
    in_second_block = (row >= ROW_BLOCK) & (row < 2 * ROW_BLOCK)
    X_test[in_second_block[:, None] & (rng.uniform(size=X_test.shape) < 0.2)] = np.nan  # one block
    expected = np.zeros((n_test, 1))
    for tree in forest.estimators_:
        expected += np.array([_walk(tree, x) for x in X_test])
    packed = PackedEnsemble.of(forest.estimators_)
    total = np.zeros((n_test, 1))
    packed.add_to(X_test, total)
    assert np.array_equal(total, expected)
    wider = np.repeat(X_test, 2, axis=0)  # its every other row is X_test, strided
    for layout in (np.asfortranarray(X_test), wider[::2]):  # the walks read any strides
        total = np.zeros((n_test, 1))
        packed.add_to(layout, total)
        assert np.array_equal(total, expected)
    for group_blocks in (1, 2, 6):  # each row adds the trees in order, whatever the group
        total = np.zeros((n_test, 1))
        packed.add_lockstep(X_test, total[np.newaxis], 0, len(forest.estimators_),
                            group_blocks)
        assert np.array_equal(total, expected)
    each_tree = packed.tree_values(X_test, 1, 3)  # the members one by one, in one pass
    assert each_tree.shape == (2, n_test, 1)
    for values, tree in zip(each_tree, forest.estimators_[1:3], strict=True):
        assert np.array_equal(values, np.array([_walk(tree, x) for x in X_test]))


def test_a_pickled_packed_ensemble_reads_its_own_trees():
    """The packed trees are read at their arrays' addresses: a pickled PackedEnsemble packs the
    loaded trees again, and predicts as before once the original is gone."""
    X, y = make_friedman1(n_samples=300, random_state=0)
    forest = RandomForestRegressor(n_estimators=3, random_state=0).fit(X, y)
    packed = PackedEnsemble.of(forest.estimators_)
    expected = np.zeros((len(X), 1))
    packed.add_to(X, expected)
    loaded = pickle.loads(pickle.dumps(packed))
    del packed, forest
    assert all(address == tree.threshold.__array_interface__["data"][0]
               for address, tree in zip(loaded.addresses[:, 1], loaded.trees, strict=True))
    total = np.zeros((len(X), 1))
    loaded.add_to(X, total)
    assert np.array_equal(total, expected)


def test_packing_refuses_trees_with_a_value_row_per_node():
    """A tree with values at its splits too (as pickled by an older version) would send the
    walk past its leaves' rows: packing refuses it."""
    X, y = make_friedman1(n_samples=300, random_state=0)
    tree = RandomForestRegressor(n_estimators=1, random_state=0).fit(X, y).estimators_[0]
    per_node = dataclasses.replace(tree, value=np.zeros((tree.n_nodes, 1)))
    with pytest.raises(ValueError, match="one row a leaf"):
        PackedEnsemble.of([tree, per_node])


def _grown_arrays(feature, threshold_bin, missing_left, left, right):
    """A grower's arrays for a tree of these splits (values 0, 1, 2, ..., no set bits)."""
    n_nodes = len(feature)
    return (np.array(feature, dtype=np.int32), np.array(threshold_bin, dtype=np.int32),
            np.array(missing_left), np.array(left, dtype=np.int32),
            np.array(right, dtype=np.int32), np.arange(n_nodes, dtype=np.float64)[:, None],
            np.zeros(n_nodes), np.full(n_nodes, 10, dtype=np.int32),
            np.zeros((n_nodes, SET_WORDS), dtype=np.uint32))


def test_a_tree_keeps_its_grower_arrays_in_node_pairs():
    """Feature, split bin, NaN side and children packed into one uint32 pair a node read
    back as the grower made them, a split on a set included; the leaves' values only, each
    found by the row its threshold's NaN holds."""
    bin_mapper = BinMapper().fit(np.arange(40.0).reshape(20, 2))
    arrays = _grown_arrays([1, LEAF, 0, LEAF, LEAF], [7, 0, CATEGORY_SET, 0, 0],
                           [False, False, True, False, False], [1, LEAF, 3, LEAF, LEAF],
                           [2, LEAF, 4, LEAF, LEAF])
    tree = Tree.from_grown(arrays, bin_mapper)
    for name, grown in zip(("feature", "threshold_bin", "missing_left", "left", "right"),
                           arrays[:5], strict=True):
        assert np.array_equal(getattr(tree, name), grown), name
    assert tree.n_leaves == 3 and tree.depth == 2
    assert np.isnan(tree.threshold[tree.is_leaf]).all()
    assert tree.threshold[0] == bin_mapper.raw_thresholds(arrays[0], arrays[1])[0]
    assert np.array_equal(tree.value_row, [-1, 0, -1, 1, 2])
    assert np.array_equal(tree.value[:, 0], arrays[5][tree.is_leaf, 0])  # grown: value = node


@pytest.mark.parametrize("feature, threshold_bin, right", [
    (MAX_SPLIT_FEATURES, 3, 2),  # a feature beyond the 23 bits
    (0, MISSING_BIN, 2),  # a numeric split at the missing bin
    (0, 3, 3),  # the right child not left + 1
])
def test_a_tree_refuses_splits_its_node_pairs_cannot_hold(feature, threshold_bin, right):
    bin_mapper = BinMapper().fit(np.arange(40.0).reshape(20, 2))
    arrays = _grown_arrays([feature, LEAF, LEAF, LEAF], [threshold_bin, 0, 0, 0],
                           [False] * 4, [1, LEAF, LEAF, LEAF], [right, LEAF, LEAF, LEAF])
    with pytest.raises(ValueError, match="right\\[i\\] == left\\[i\\] \\+ 1"):
        Tree.from_grown(arrays, bin_mapper)
